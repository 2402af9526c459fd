#include "service/module_notes.h"

#include <cstdio>

#include "service/human_bytes.h"

namespace xladb::service {

std::string ResolutionNote(const store::TopBuffersAnswer& a, const std::string& run) {
  if (!a.picked_largest) return "";
  const std::string which = a.xla_module_id >= 0 ? "#" + std::to_string(a.xla_module_id) : "the one without a number";
  return a.module + ": " + std::to_string(a.compiles) + " compiles in run " + run + "; showing " + which +
         ", the largest by total_bytes; choose with --xla-id";
}

std::string PeakGapNote(const store::TopBuffersAnswer& a) {
  if (!a.peaks_differ()) return "";
  const int64_t gap = a.live_peak_padded_bytes - a.peak_bytes;
  char percent[32];
  std::snprintf(percent, sizeof percent, "%.0f%%",
                100.0 * static_cast<double>(gap < 0 ? -gap : gap) / static_cast<double>(a.live_peak_padded_bytes));
  std::string note = "XLA's printed peak (" + HumanBytes(a.peak_bytes) + " at time " + std::to_string(a.peak_time) +
                     ") is " + percent + (gap > 0 ? " below" : " above") + " the padded live peak (" +
                     HumanBytes(a.live_peak_padded_bytes) + " at time " + std::to_string(a.live_peak_padded_time) +
                     ")";
  if (const auto& b = a.largest_counted_at_pointer_size) {
    note += "; XLA counted " + b->instruction + b->shape_index + " (" + b->shape + ", " + HumanBytes(b->shape_bytes) +
            ") as " + std::to_string(b->logical_bytes) + " bytes";
  } else {
    note += "; no buffer of XLA's peak list was counted below its shape's size";
  }
  return note;
}

std::vector<std::string> ModuleNotes(const store::TopBuffersAnswer& a, const std::string& run) {
  std::vector<std::string> notes;
  for (std::string note : {ResolutionNote(a, run), PeakGapNote(a)}) {
    if (!note.empty()) notes.push_back(std::move(note));
  }
  return notes;
}

}  // namespace xladb::service
