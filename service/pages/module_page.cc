// The module page (report_pages.h): figures, memory against program order, the buffers at XLA's peak, and
// the module's trend across runs.
#include <algorithm>
#include <string>
#include <vector>

#include "service/human_bytes.h"
#include "service/module_notes.h"
#include "service/pages/html_text.h"
#include "service/pages/memory_chart.h"
#include "service/pages/report_pages.h"
#include "service/pages/table_cells.h"
#include "store/query/memory_timeline.h"
#include "store/compare/module_trend.h"
#include "store/query/queries.h"

namespace xladb::service::pages {
namespace {

std::string ModuleTitle(const std::string& name, int64_t xla_module_id) {
  return xla_module_id >= 0 ? name + " #" + std::to_string(xla_module_id) : name;
}

std::string FactsTable(const store::ModuleMemoryInfo& m) {
  std::string out = "<table class=\"facts\" id=\"facts\"><tbody>\n";
  const auto row = [&](const std::string& label, const std::string& cell) {
    out += "<tr><th>" + Html(label) + "</th>" + cell + "</tr>\n";
  };
  row("XLA peak (logical, unpadded)", BytesCell(m.peak_bytes));
  row("XLA peak time", IntCell(m.peak_time));
  row("live peak, padded", BytesCell(m.live_peak_padded_bytes));
  row("live peak (padded) time", IntCell(m.live_peak_padded_time));
  row("total bytes (all allocations)", BytesCell(m.total_bytes));
  row("memory space 0 (HBM) bytes", BytesCell(m.color0_total_bytes));
  row("temp bytes", BytesCell(m.temp_bytes));
  row("parameter bytes", BytesCell(m.parameter_bytes));
  row("output bytes", BytesCell(m.output_bytes));
  row("allocations", IntCell(m.allocation_count));
  row("values", IntCell(m.value_count));
  return out + "</tbody></table>\n";
}

std::string MemorySection(const store::MemoryTimeline& t) {
  std::string out = "<h2 id=\"memory\">Memory against program order</h2>\n";
  if (!t.has_live_ranges) {
    return out +
           "<p class=\"note missing\" id=\"no-live-ranges\">No live ranges are stored for this module, so memory "
           "cannot be drawn against program order. XLA prints them (HloLiveRange) in the buffer assignment from "
           "2021-04 and in <code>*-live-range.txt</code> from 2026-04; older dumps, memory-usage reports alone and "
           "`HloLiveRange not available` have none. The figures above come from the allocations.</p>\n";
  }
  out += "<p class=\"sub\">Bytes live at each schedule time, from the live ranges: <b>logical</b> as XLA counts "
         "its values (unpadded shapes, tuples as pointers; values that share an allocation slice, such as an "
         "in-place update, count once, the largest) and <b>padded</b> (the allocation slices holding a live "
         "value, each once, at their allocated size). Hover for the instruction; hover a buffer below to see its "
         "lifetime.";
  if (t.logical_bytes.size() > kChartPoints) {
    out += " " + std::to_string(t.logical_bytes.size()) + " schedule times are drawn as " +
           std::to_string(kChartPoints) + " or fewer buckets, each at its maximum; the peaks are exact.";
  }
  out += "</p>\n";
  std::vector<ChartPeak> peaks;
  const auto instruction_at = [&](int64_t time) {
    return time >= 0 && time < static_cast<int64_t>(t.instructions.size()) ? t.instructions[static_cast<size_t>(time)]
                                                                            : std::string();
  };
  if (t.xla_peak_time >= 0 && t.xla_peak_bytes >= 0) {
    peaks.push_back({"xla", "XLA peak", t.xla_peak_time, t.xla_peak_bytes});
  }
  const bool own_maximum = t.logical_peak.time >= 0 && t.logical_peak.bytes > t.xla_peak_bytes;
  if (own_maximum) peaks.push_back({"logical", "logical max", t.logical_peak.time, t.logical_peak.bytes});
  if (t.padded_peak.time >= 0) peaks.push_back({"padded", "padded peak", t.padded_peak.time, t.padded_peak.bytes});
  out += RenderMemoryChart("chart-memory",
                           {{"logical", "logical bytes live", &t.logical_bytes, &t.instructions},
                            {"padded", "padded bytes live", &t.padded_bytes, &t.instructions}},
                           peaks);
  if (t.xla_peak_time >= 0) {
    out += "<p class=\"sub\" id=\"peak-line\">XLA's peak: " + Html(HumanBytes(t.xla_peak_bytes)) + " (" +
           GroupedNumber(t.xla_peak_bytes) + " bytes) at schedule time " + std::to_string(t.xla_peak_time);
    const std::string at = instruction_at(t.xla_peak_time);
    if (!at.empty()) out += ", <code>" + Html(at) + "</code>";
    out += ".</p>\n";
    if (own_maximum && t.matches_xla_peak()) {
      out += "<p class=\"sub\" id=\"logical-max\">The logical curve is higher later: " +
             Html(HumanBytes(t.logical_peak.bytes)) + " at time " + std::to_string(t.logical_peak.time) +
             ". XLA chose its peak time counting, at each time, the values that ended the step before too "
             "(its HloLiveRange adds a time's new values before it drops the previous step's), then printed "
             "the values live at that time (docs/formats.md §4.1).</p>\n";
    }
    if (!t.matches_xla_peak()) {
      out += "<p class=\"note\" id=\"peak-mismatch\">The logical curve is " +
             Html(HumanBytes(std::max<int64_t>(t.counted_at_xla_peak_time, 0))) +
             " at XLA's peak time counted as XLA counts (every live value), not the printed " +
             Html(HumanBytes(t.xla_peak_bytes)) +
             ": neither the values' own shapes nor their defining instructions' (XLA before 2025-04) "
             "reproduce it, so some value's shape is missing or not as printed.</p>\n";
    }
    const int64_t curve_at_peak = t.xla_peak_time < static_cast<int64_t>(t.logical_bytes.size())
                                      ? t.logical_bytes[static_cast<size_t>(t.xla_peak_time)]
                                      : -1;
    if (t.matches_xla_peak() && curve_at_peak >= 0 && curve_at_peak < t.counted_at_xla_peak_time) {
      out += "<p class=\"sub\" id=\"shared-slices\">At XLA's peak time the logical curve is " +
             Html(HumanBytes(curve_at_peak)) + ", below XLA's " + Html(HumanBytes(t.xla_peak_bytes)) +
             ": XLA adds values that share one allocation slice (an in-place update, an alias) once each; the "
             "curve counts the slice once.</p>\n";
    }
    if (t.sized_by_instruction) {
      out += "<p class=\"sub\" id=\"older-sizing\">As XLA did before 2025-04, a tuple element counts the "
             "logical size of its whole defining instruction (docs/formats.md §4.1): that reproduces the printed "
             "peak.</p>\n";
    }
  }
  if (t.values_without_logical_size > 0) {
    out += "<p class=\"note\">" + std::to_string(t.values_without_logical_size) +
           " values have a shape whose logical size is unknown; the logical curve counts them as 0 bytes.</p>\n";
  }
  return out;
}

// The padded size minus the logical size; a tuple element XLA counted at pointer size has no padding figure.
std::string PaddingCell(const store::TopBuffer& b) {
  if (b.counted_at_pointer_size()) return "<td class=\"n pointers\" data-v=\"-1\">tuple (pointers)</td>";
  return b.size_bytes >= 0 ? BytesCell(std::max<int64_t>(0, b.size_bytes - b.logical_bytes)) : BytesCell(-1);
}

std::string PeakTable(const store::TopBuffersAnswer& top, bool chart) {
  std::string out = "<h2 id=\"peak\">Buffers live at XLA's peak</h2>\n";
  if (top.buffers.empty()) {
    return out + "<p class=\"note missing\" id=\"no-peak-list\">This module's dump has no `Live ranges at … (peak)` "
                 "list (XLA prints it from 2021-04).</p>\n";
  }
  out += "<p class=\"sub\">" + std::to_string(top.buffers.size()) +
         " buffers, as XLA listed them at time " + std::to_string(top.peak_time) +
         ". Sort by a column; padding is the value's padded size minus its logical size, except for a tuple "
         "element XLA counted at pointer size (its whole shape is larger than what XLA counted): "
         "<i>tuple (pointers)</i>, not padding.</p>\n";
  out += "<table class=\"sortable buffers\" id=\"peak-buffers\"><thead><tr>" + HeaderCell("#", true, true) +
         HeaderCell("buffer", true) + HeaderCell("logical", true, true) + HeaderCell("padded", true, true) +
         HeaderCell("padding", true, true) + HeaderCell("live from", true, true) + HeaderCell("to", true, true) +
         HeaderCell("shape", true) + HeaderCell("allocation", true, true) + HeaderCell("op_name", true) +
         HeaderCell("source", true) + "</tr></thead><tbody>\n";
  for (const store::TopBuffer& b : top.buffers) {
    out += "<tr data-instruction=\"" + Html(b.instruction) + "\" data-shape-index=\"" + Html(b.shape_index) + "\"";
    if (chart && b.live_start >= 0) {
      out += " data-chart=\"chart-memory\" data-start=\"" + std::to_string(b.live_start) + "\" data-end=\"" +
             std::to_string(b.live_end) + "\"";
    }
    out += ">" + IntCell(b.ordinal) + TextCell(b.instruction + b.shape_index, true) + BytesCell(b.logical_bytes) +
           BytesCell(b.size_bytes) + PaddingCell(b) +
           IntCell(b.live_start) + IntCell(b.live_end) + TextCell(b.shape, true) + IntCell(b.allocation_index) +
           TextCell(b.op_name, true) +
           TextCell(b.source_file.empty() ? "" : b.source_file + (b.source_line >= 0 ? ":" + std::to_string(b.source_line) : ""),
                    true) +
           "</tr>\n";
  }
  return out + "</tbody></table>\n";
}

std::string TrendSection(store::Database& db, const store::TopBuffersAnswer& top, const PageLinks& links) {
  std::string out = "<h2 id=\"trend\">Across runs</h2>\n";
  store::TrendQuery q;
  q.module = top.module;
  q.stage = top.stage;
  q.folder = top.folder;
  auto points = store::PeakMemoryTrend(db, q);
  std::vector<store::TrendPoint> mine;
  if (points.ok()) {
    for (store::TrendPoint& p : *points) {
      if (p.identity_key == top.identity_key) mine.push_back(std::move(p));
    }
  }
  if (mine.empty()) return out + "<p class=\"note\">No other compile of this module's identity is stored.</p>\n";
  out += "<p class=\"sub\">Every run's compile of this module's identity (name, stage, entry signature, folder: "
         "the matching the gate uses), oldest first. Change is against the previous run's matched compile.</p>\n";
  out += "<table class=\"sortable\" id=\"trend-table\"><thead><tr>" + HeaderCell("run", true) +
         HeaderCell("time", true) + HeaderCell("xla id", true, true) + HeaderCell("XLA peak", true, true) +
         HeaderCell("live peak, padded", true, true) + HeaderCell("total", true, true) +
         HeaderCell("temp", true, true) + HeaderCell("change (XLA peak)", true, true) + HeaderCell("matched by", true) +
         "</tr></thead><tbody>\n";
  for (const store::TrendPoint& p : mine) {
    out += "<tr>" + std::string("<td>") +
           PageLinks::Anchor(links.Module(p.run_name, p.module_name, p.stage, p.xla_module_id, p.folder),
                             Html(p.run_name)) +
           "</td>" + TextCell(RunTimeText(p.run_time_us)) + IntCell(p.xla_module_id) + BytesCell(p.peak_bytes) +
           BytesCell(p.live_peak_padded_bytes) + BytesCell(p.total_bytes) + BytesCell(p.temp_bytes) +
           (p.has_change ? DeltaCell(p.change) : std::string("<td class=\"n\" data-v=\"0\"></td>")) +
           TextCell(p.matched_by) + "</tr>\n";
  }
  return out + "</tbody></table>\n";
}

}  // namespace

StatusOr<std::string> RenderModulePage(store::Database& db, const ReportRequest& request, const PageLinks& links) {
  std::optional<std::string> folder;
  if (request.has_folder) folder = request.folder;
  auto top = store::TopBuffers(db, request.run, request.module, -1, request.stage, request.xla_module_id, folder);
  if (!top.ok()) return top.status();
  auto modules = store::ListModules(db, request.run);
  if (!modules.ok()) return modules.status();
  const auto it = std::find_if(modules->begin(), modules->end(),
                               [&](const store::ModuleMemoryInfo& m) { return m.module_id == top->module_id; });
  if (it == modules->end()) return Status::NotFound("module '" + request.module + "' not found");
  const store::ModuleMemoryInfo& m = *it;
  auto timeline = store::LoadMemoryTimeline(db, top->module_id);
  if (!timeline.ok()) return timeline.status();

  const std::string title = ModuleTitle(m.name, m.xla_module_id);
  std::string body = "<header><p class=\"sub\">xladb · module · " +
                     PageLinks::Anchor(links.Run(request.run), "run " + Html(request.run)) + "</p>\n<h1>" +
                     Html(title) + "</h1>\n<p class=\"sub\">stage <code>" + Html(m.stage) + "</code>";
  if (!m.folder.empty()) body += " · folder <code>" + Html(m.folder) + "</code>";
  if (!m.backend.empty()) body += " · " + Html(m.backend);
  if (!m.entry_signature.empty()) body += " · <code>" + Html(m.entry_signature) + "</code>";
  if (!m.entry_sharding.empty()) body += " · sharding <code>" + Html(m.entry_sharding) + "</code>";
  body += "</p>\n";
  if (std::string note = ResolutionNote(*top, request.run); !note.empty()) {
    body += "<p class=\"note\" id=\"resolved\">" + Html(note) + "</p>\n";
  }
  if (std::string note = PeakGapNote(*top); !note.empty()) {
    body += "<p class=\"note\" id=\"peak-gap\">" + Html(note) + "</p>\n";
  }
  body += "<nav><a href=\"#memory\">memory</a><a href=\"#peak\">buffers at the peak</a>"
          "<a href=\"#trend\">across runs</a></nav></header>\n";
  body += FactsTable(m);
  body += MemorySection(*timeline);
  body += PeakTable(*top, timeline->has_live_ranges);
  body += TrendSection(db, *top, links);
  return PageFrame("xladb · " + title + " · " + request.run, body);
}

}  // namespace xladb::service::pages
