#include "cli/attribution_report.h"

#include <cctype>

#include "cli/markdown_text.h"
#include "ingest/text/visible_text.h"
#include "service/human_bytes.h"

namespace xladb::cli {
namespace {

using service::HumanBytes;

std::string SourceLabel(const std::string& source) { return source.empty() ? "(no source line)" : source; }

std::string BufferName(const v1::BufferChange& b) {
  return (b.instruction_b().empty() ? b.instruction_a() : b.instruction_b()) + b.shape_index();
}

bool Renamed(const v1::BufferChange& b) {
  return !b.instruction_a().empty() && !b.instruction_b().empty() && b.instruction_a() != b.instruction_b();
}

std::string BuffersCount(int64_t n) { return std::to_string(n) + (n == 1 ? " buffer" : " buffers"); }

// "XLA's peak moved from t=3 of 9 to t=5 of 11." ("" when either time is unknown).
std::string PeakLine(const AttributionView& a) {
  if (a.baseline_peak_time < 0 || a.current_peak_time < 0) return {};
  const std::string peak = a.peak_metric == "live_peak_padded_bytes" ? "The padded live peak" : "XLA's peak";
  if (a.baseline_peak_time == a.current_peak_time) {
    return peak + " stayed at t=" + std::to_string(a.current_peak_time) + " of the schedule.";
  }
  return peak + " moved from t=" + std::to_string(a.baseline_peak_time) + " of " +
         std::to_string(a.baseline_schedule_length) + " to t=" + std::to_string(a.current_peak_time) + " of " +
         std::to_string(a.current_schedule_length) + ".";
}

std::string Shown(const std::string& s) { return ingest::EscapeControlCharacters(s); }

}  // namespace

Json OrNull(int64_t v) { return v < 0 ? Json(nullptr) : Json(v); }
Json OrNull(const std::string& s) { return s.empty() ? Json(nullptr) : Json(s); }

std::string BufferChangeName(v1::BufferChange::Change change) {
  std::string s = v1::BufferChange::Change_Name(change);
  for (char& c : s) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return s;
}

void AddAttributionJson(const AttributionView& a, Json* object) {
  Json& o = *object;
  Json attribution = Json::array();
  for (const auto& b : *a.changes) {
    attribution.push_back({{"change", BufferChangeName(b.change())},
                           {"buffer", OrNull(b.instruction_b())},
                           {"baseline_buffer", OrNull(b.instruction_a())},
                           {"shape_index", b.shape_index()},
                           {"matched_by", OrNull(b.matched_by())},
                           {"baseline_bytes", OrNull(b.size_a())},
                           {"current_bytes", OrNull(b.size_b())},
                           {"delta", b.delta()},
                           {"baseline_shape", b.shape_a()},
                           {"current_shape", b.shape_b()},
                           {"op_name", b.op_name()},
                           {"source", b.source()}});
  }
  o["attribution"] = std::move(attribution);
  if (!a.explained()) return;
  o["attribution_count"] = a.count;
  o["attribution_scope"] = a.scope;
  Json by_source = Json::array();
  for (const auto& l : *a.by_source) {
    by_source.push_back({{"source", l.source()}, {"delta", l.delta()}, {"buffers", l.buffers()}});
  }
  o["by_source"] = std::move(by_source);
  o["peak"] = {{"baseline_time", OrNull(a.baseline_peak_time)},
               {"current_time", OrNull(a.current_peak_time)},
               {"moved", a.baseline_peak_time >= 0 && a.current_peak_time >= 0 &&
                             a.baseline_peak_time != a.current_peak_time},
               {"baseline_schedule_length", OrNull(a.baseline_schedule_length)},
               {"current_schedule_length", OrNull(a.current_schedule_length)},
               {"metric", a.peak_metric}};
}

std::string AttributionText(const AttributionView& a, const std::string& indent) {
  std::string out;
  for (const auto& l : *a.by_source) {
    out += indent + HumanBytes(l.delta(), true) + " from " + Shown(SourceLabel(l.source())) + " (" +
           BuffersCount(l.buffers()) + ")\n";
  }
  if (std::string peak = PeakLine(a); !peak.empty()) out += indent + peak + "\n";
  for (const auto& b : *a.changes) {
    out += indent + "  " + BufferChangeName(b.change()) + " " + Shown(BufferName(b));
    if (Renamed(b)) out += " (was " + Shown(b.instruction_a()) + ")";
    out += " " + HumanBytes(b.delta(), true) + (b.source().empty() ? "" : " at " + Shown(b.source())) + "\n";
  }
  return out;
}

std::string AttributionMarkdown(const AttributionView& a, const std::string& more_flag) {
  std::string out;
  for (const auto& l : *a.by_source) {
    out += "- " + HumanBytes(l.delta(), true) + " from " + MarkdownCode(SourceLabel(l.source())) + " (" +
           BuffersCount(l.buffers()) + ")\n";
  }
  if (a.by_source->size() > 0) out += "\n";
  if (std::string peak = PeakLine(a); !peak.empty()) out += peak + "\n\n";
  if (a.changes->size() > 0) {
    out += "| change | buffer | was | shape | delta | source | matched by |\n|---|---|---|---|---:|---|---|\n";
    for (const auto& b : *a.changes) {
      std::string shape = b.shape_a().empty() ? b.shape_b()
                          : b.shape_b().empty() || b.shape_a() == b.shape_b() ? b.shape_a()
                                                                               : b.shape_a() + " → " + b.shape_b();
      out += "| " + BufferChangeName(b.change()) + " | " + MarkdownCodeInCell(BufferName(b)) + " | " +
             (Renamed(b) ? MarkdownCodeInCell(b.instruction_a()) : std::string()) + " | " +
             (shape.empty() ? std::string() : MarkdownCodeInCell(shape)) + " | " + HumanBytes(b.delta(), true) +
             " | " + (b.source().empty() ? std::string() : MarkdownCodeInCell(b.source())) + " | " +
             MarkdownText(b.matched_by()) + " |\n";
    }
    if (a.count > a.changes->size()) {
      out += "\n" + std::to_string(a.count - a.changes->size()) + " smaller buffer changes not listed (`" + more_flag +
             "`).\n";
    }
  }
  return out;
}

}  // namespace xladb::cli
