// The diff page (report_pages.h): the gate's verdict (store/compare/check_run.h) as a page, with both memory charts
// overlaid for the modules that changed most and their buffer attribution highlighted.
#include <algorithm>
#include <string>
#include <vector>

#include "service/human_bytes.h"
#include "service/pages/html_text.h"
#include "service/pages/memory_chart.h"
#include "service/pages/report_pages.h"
#include "service/pages/table_cells.h"
#include "store/compare/check_run.h"
#include "store/query/memory_timeline.h"

namespace xladb::service::pages {
namespace {

using Checked = store::CheckedModule;

// Modules that get their own section with charts: the regressed first (as the gate orders them).
constexpr size_t kChartedModules = 8;

const char* StatusText(Checked::Status s) {
  switch (s) {
    case Checked::Status::kRegressed: return "regressed";
    case Checked::Status::kImproved: return "improved";
    case Checked::Status::kUnchanged: return "unchanged";
    case Checked::Status::kAdded: return "added";
    case Checked::Status::kRemoved: return "removed";
    case Checked::Status::kAmbiguous: return "ambiguous";
    case Checked::Status::kAccepted: return "accepted";
    case Checked::Status::kIgnored: return "ignored";
    case Checked::Status::kReshaped: return "reshaped";
    case Checked::Status::kOverBudget: return "over_budget";
    case Checked::Status::kWithinBudget: return "within_budget";
  }
  return "?";
}

const char* ChangeText(store::BufferChange::Kind k) {
  switch (k) {
    case store::BufferChange::Kind::kGrew: return "grew";
    case store::BufferChange::Kind::kShrank: return "shrank";
    case store::BufferChange::Kind::kAppeared: return "appeared";
    case store::BufferChange::Kind::kDisappeared: return "disappeared";
  }
  return "?";
}

std::string Label(const Checked& m) {
  std::string s = m.folder.empty() ? m.module : m.folder + "/" + m.module;
  const int64_t id = m.xla_module_id >= 0 ? m.xla_module_id : m.baseline_xla_module_id;
  if (id >= 0) s += " #" + std::to_string(id);
  return s;
}

std::string Anchor(size_t index) { return "m" + std::to_string(index); }

std::string MetricCells(const store::MetricDelta& d) {
  if (d.baseline < 0 || d.current < 0) return BytesCell(d.current >= 0 ? d.current : d.baseline) + "<td></td>";
  return BytesCell(d.current) + (d.delta == 0 ? std::string("<td class=\"n\" data-v=\"0\">0</td>") : DeltaCell(d.delta));
}

std::string ModulesTable(const store::CheckResult& r, const std::vector<size_t>& charted, const PageLinks& links) {
  std::string out = "<h2 id=\"modules\">Modules</h2>\n";
  const auto listed = [](const Checked& m) {
    return (m.status != Checked::Status::kUnchanged || m.reshaped) && m.status != Checked::Status::kIgnored;
  };
  int64_t total = 0;
  for (const Checked& m : r.modules) total += listed(m) ? 1 : 0;
  if (total == 0) return out + "<p class=\"sub\">No module changed.</p>\n";
  const int64_t shown = std::min(total, kMaxTableRows);
  out += LeftOutNote(shown, total, "changed modules", "`xladb check --format json` lists them all");
  out += "<table class=\"sortable\" id=\"diff-modules\"><thead><tr>" + HeaderCell("status", true) +
         HeaderCell("module", true);
  for (const std::string& metric : r.metrics) out += HeaderCell(metric, true, true) + HeaderCell("Δ", true, true);
  out += HeaderCell("matched by", true) + HeaderCell("entry signature", true) + "</tr></thead><tbody>\n";
  int64_t rows = 0;
  for (size_t i = 0; i < r.modules.size() && rows < shown; ++i) {
    const Checked& m = r.modules[i];
    if (!listed(m)) continue;
    ++rows;
    std::string name = Html(Label(m));
    if (std::find(charted.begin(), charted.end(), i) != charted.end()) {
      name = "<a href=\"#" + Anchor(i) + "\">" + name + "</a>";
    } else if (m.module_id >= 0) {
      name = PageLinks::Anchor(links.Module(r.run, m.module, m.stage, m.xla_module_id, m.folder), name);
    }
    out += std::string("<tr class=\"") + StatusText(m.status) + "\" data-module=\"" + Html(m.module) + "\">" +
           TextCell(StatusText(m.status)) + "<td>" + name + "</td>";
    for (const store::MetricDelta& d : m.metrics) out += MetricCells(d);
    const std::string signature = SignatureWithSharding(m.entry_signature, m.entry_sharding);
    out += TextCell(m.matched_by) +
           TextCell(m.reshaped ? SignatureWithSharding(m.baseline_entry_signature, m.baseline_entry_sharding) + " → " +
                                     signature
                               : signature,
                    true) +
           "</tr>\n";
  }
  return out + "</tbody></table>\n";
}

std::string ModuleSection(store::Database& db, const store::CheckResult& r, size_t index, const PageLinks& links) {
  const Checked& m = r.modules[index];
  std::string out = "<section class=\"changed-module\" id=\"" + Anchor(index) + "\" data-module=\"" + Html(m.module) +
                    "\"><h2>" + StatusText(m.status) + ": " +
                    PageLinks::Anchor(links.Module(r.run, m.module, m.stage, m.xla_module_id, m.folder),
                                      Html(Label(m))) +
                    "</h2>\n<p class=\"sub\">";
  for (const store::MetricDelta& d : m.metrics) {
    if (d.baseline < 0 || d.current < 0) continue;
    out += "<b>" + Html(d.metric) + "</b> " + Html(HumanBytes(d.baseline)) + " → " + Html(HumanBytes(d.current)) +
           " (" + Html(HumanBytes(d.delta, true)) + ")" + (d.regressed ? " <b class=\"up\">regressed</b>" : "") + "; ";
  }
  if (!m.accepted_reason.empty()) out += "accepted: " + Html(m.accepted_reason);
  out += "</p>\n";
  if (m.reshaped) {
    out += "<p class=\"sub reshaped\">Reshaped: <code>" +
           Html(SignatureWithSharding(m.baseline_entry_signature, m.baseline_entry_sharding)) + "</code> (#" +
           std::to_string(m.baseline_xla_module_id) + ") → <code>" +
           Html(SignatureWithSharding(m.entry_signature, m.entry_sharding)) + "</code></p>\n";
  }
  auto current = store::LoadMemoryTimeline(db, m.module_id);
  auto baseline = store::LoadMemoryTimeline(db, m.baseline_module_id);
  const std::string chart_id = "chart-" + Anchor(index);
  if (current.ok() && baseline.ok() && current->has_live_ranges && baseline->has_live_ranges) {
    std::vector<ChartPeak> peaks;
    if (current->xla_peak_time >= 0) peaks.push_back({"xla", "XLA peak", current->xla_peak_time, current->xla_peak_bytes});
    if (baseline->xla_peak_time >= 0) {
      peaks.push_back({"base-xla", "baseline XLA peak", baseline->xla_peak_time, baseline->xla_peak_bytes});
    }
    out += RenderMemoryChart(chart_id,
                             {{"logical", "logical, " + r.run, &current->logical_bytes, &current->instructions},
                              {"padded", "padded, " + r.run, &current->padded_bytes, &current->instructions},
                              {"base-logical", "logical, " + r.baseline, &baseline->logical_bytes, &baseline->instructions},
                              {"base-padded", "padded, " + r.baseline, &baseline->padded_bytes, &baseline->instructions}},
                             peaks);
  } else {
    out += "<p class=\"note missing\">No memory chart: one of the two modules has no live ranges stored.</p>\n";
  }
  if (!m.attribution) return out + "</section>\n";
  const store::Attribution& a = *m.attribution;
  out += "<h3>What changed</h3>\n<p class=\"sub\">Buffers compared over " +
         std::string(a.scope == store::AttributionScope::kPeakBuffers ? "XLA's peak lists" : "all values") +
         ", padded sizes; " + std::to_string(a.change_count) + " changes";
  if (a.peak_moved()) {
    out += std::string("; ") + (m.peak_metric == "live_peak_padded_bytes" ? "the padded live peak" : "XLA's peak") +
           " moved from time " + std::to_string(a.baseline_peak_time) + " to " + std::to_string(a.current_peak_time);
  }
  out += ".</p>\n";
  if (!a.by_source.empty()) {
    out += "<table class=\"sortable by-source\"><thead><tr>" + HeaderCell("source line", true) +
           HeaderCell("Δ bytes", true, true) + HeaderCell("buffers", true, true) + "</tr></thead><tbody>\n";
    for (const store::SourceLineChange& l : a.by_source) {
      out += "<tr>" + TextCell(l.source.empty() ? "(no source location)" : l.source, true) + DeltaCell(l.delta) +
             IntCell(l.buffers) + "</tr>\n";
    }
    out += "</tbody></table>\n";
  }
  out += "<table class=\"sortable attribution\" id=\"" + chart_id + "-buffers\"><thead><tr>" +
         HeaderCell("change", true) + HeaderCell("buffer", true) + HeaderCell("baseline", true, true) +
         HeaderCell("now", true, true) + HeaderCell("Δ", true, true) + HeaderCell("shape", true) +
         HeaderCell("op_name", true) + HeaderCell("source", true) + "</tr></thead><tbody>\n";
  for (const store::BufferChange& c : a.changes) {
    std::string buffer = (c.instruction.empty() ? c.baseline_instruction : c.instruction) + c.shape_index;
    if (!c.instruction.empty() && !c.baseline_instruction.empty() && c.instruction != c.baseline_instruction) {
      buffer += " (was " + c.baseline_instruction + ")";
    }
    std::string shape = c.current_shape.empty() ? c.baseline_shape : c.current_shape;
    if (!c.baseline_shape.empty() && !c.current_shape.empty() && c.baseline_shape != c.current_shape) {
      shape = c.baseline_shape + " → " + c.current_shape;
    }
    out += std::string("<tr class=\"") + ChangeText(c.kind) + "\">" + TextCell(ChangeText(c.kind)) +
           TextCell(buffer, true) + BytesCell(c.baseline_bytes) + BytesCell(c.current_bytes) + DeltaCell(c.delta()) +
           TextCell(shape, true) + TextCell(c.op_name, true) + TextCell(c.source, true) + "</tr>\n";
  }
  if (a.change_count > static_cast<int64_t>(a.changes.size())) {
    out += "<tr><td colspan=\"8\" class=\"sub\">" + std::to_string(a.change_count - static_cast<int64_t>(a.changes.size())) +
           " smaller changes left out (xladb check --format json has the limit)</td></tr>\n";
  }
  return out + "</tbody></table>\n</section>\n";
}

}  // namespace

StatusOr<std::string> RenderDiffPage(store::Database& db, const ReportRequest& request, const PageLinks& links) {
  store::CheckOptions options;
  options.run = request.run;
  options.baseline = request.baseline;
  options.budgets = request.budgets;
  options.max_attribution = 50;
  auto result = store::CheckRun(db, options);
  if (!result.ok()) return result.status();
  const store::CheckResult& r = *result;
  std::vector<size_t> charted;
  for (size_t i = 0; i < r.modules.size() && charted.size() < kChartedModules; ++i) {
    const Checked& m = r.modules[i];
    const bool changed = m.status == Checked::Status::kRegressed || m.status == Checked::Status::kAccepted ||
                         m.status == Checked::Status::kImproved || m.status == Checked::Status::kAmbiguous ||
                         m.status == Checked::Status::kReshaped;
    if (changed && m.module_id >= 0 && m.baseline_module_id >= 0) charted.push_back(i);
  }
  const char* verdict = store::VerdictName(r.verdict);
  std::string body = "<header><p class=\"sub\">xladb · " + PageLinks::Anchor(links.Runs(), "runs") +
                     " · memory gate</p>\n<h1>" + PageLinks::Anchor(links.Run(r.run), Html(r.run)) + " against " +
                     (r.baseline.empty() ? std::string("(no baseline)") : PageLinks::Anchor(links.Run(r.baseline), Html(r.baseline))) +
                     "</h1>\n<p><span class=\"verdict " + verdict + "\" id=\"verdict\" data-verdict=\"" + verdict +
                     "\">" + verdict + "</span> " + Html(r.reason) + "</p>\n";
  body += "<p class=\"sub\" id=\"counts\">" + std::to_string(r.regressed) + " regressed · " +
          std::to_string(r.improved) + " improved · " + std::to_string(r.reshaped) + " reshaped · " +
          std::to_string(r.added) + " added · " + std::to_string(r.removed) + " removed · " +
          std::to_string(r.ambiguous) + " ambiguous · " + std::to_string(r.accepted) + " accepted · " +
          std::to_string(r.unchanged) + " unchanged. Metrics: ";
  for (size_t i = 0; i < r.metrics.size(); ++i) body += (i ? ", " : "") + std::string("<code>") + Html(r.metrics[i]) + "</code>";
  if (!r.baseline_selected_by.empty()) body += "; baseline chosen by " + Html(r.baseline_selected_by);
  body += ".</p>\n<nav><a href=\"#modules\">modules</a>";
  for (size_t i : charted) body += "<a href=\"#" + Anchor(i) + "\">" + Html(Label(r.modules[i])) + "</a>";
  body += "</nav></header>\n";
  body += ModulesTable(r, charted, links);
  std::string budgets;
  for (const Checked& m : r.modules) {
    if (!m.budget) continue;
    const store::BudgetUse& b = *m.budget;
    budgets += std::string("<li class=\"") + (b.over ? "over" : b.warn ? "warn" : "within") + "\">" + Html(Label(m)) +
               " (" + Html(m.stage) + "): " +
               Html(BudgetHeadroom(b.metric, b.current, b.max_bytes, b.percent, b.over, b.warn)) + "</li>\n";
  }
  if (!budgets.empty()) body += "<h2 id=\"budgets\">Budgets</h2>\n<ul class=\"budgets\">\n" + budgets + "</ul>\n";
  if (!r.retraces.empty()) {
    body += "<h2 id=\"retraces\">Compile counts that changed</h2>\n<table><thead><tr><th>module</th><th>stage</th>"
            "<th class=\"n\">baseline</th><th class=\"n\">now</th></tr></thead><tbody>\n";
    for (const store::RetraceChange& c : r.retraces) {
      body += "<tr>" + TextCell(c.folder.empty() ? c.module : c.folder + "/" + c.module) + TextCell(c.stage) +
              IntCell(c.baseline_compiles) + IntCell(c.current_compiles) + "</tr>\n";
    }
    body += "</tbody></table>\n";
  }
  if (!r.by_name.empty()) {
    body += "<h2 id=\"by-name\">By jit name</h2>\n<ul class=\"by-name\">\n";
    for (const store::NameRollup& n : r.by_name) {
      const store::MetricRollup* h = n.headline();
      const std::string name = n.folder.empty() ? n.module : n.folder + "/" + n.module;
      body += "<li>" + Html(RollupLine(name, n.baseline_compiles, n.current_compiles, h ? h->metric : "",
                                       h ? h->baseline_max : -1, h ? h->current_max : -1)) +
              " (" + Html(n.stage) + ")</li>\n";
    }
    body += "</ul>\n";
  }
  for (size_t i : charted) body += ModuleSection(db, r, i, links);
  return PageFrame("xladb · " + r.run + " against " + (r.baseline.empty() ? "no baseline" : r.baseline), body);
}

}  // namespace xladb::service::pages
