// The runs page and the run page (report_pages.h).
#include <algorithm>
#include <cstdio>
#include <map>
#include <string>
#include <vector>

#include "service/human_bytes.h"
#include "service/pages/html_text.h"
#include "service/pages/report_pages.h"
#include "service/pages/table_cells.h"
#include "store/compare/module_trend.h"
#include "store/query/oom_reports.h"
#include "store/query/queries.h"

namespace xladb::service::pages {
namespace {

std::string ModuleLink(const PageLinks& links, const std::string& run, const store::ModuleMemoryInfo& m) {
  std::string text = Html(m.name);
  if (m.xla_module_id >= 0) text += " <span class=\"sub\">#" + std::to_string(m.xla_module_id) + "</span>";
  return PageLinks::Anchor(links.Module(run, m.name, m.stage, m.xla_module_id, m.folder), text);
}

constexpr int64_t kSparklineRuns = 30;

// A module's total_bytes over the last runs as a small inline SVG (no script), and, when it changed against the
// previous run that has it, a mark: "▲ +4.0 KiB since h2". Absent runs leave a gap in the line.
std::string SparklineCell(const std::vector<int64_t>* values, const std::vector<std::string>& runs) {
  if (values == nullptr || values->empty()) return "<td class=\"spark\"></td>";
  constexpr double kWidth = 90, kHeight = 18;
  int64_t lo = -1, hi = -1;
  for (int64_t v : *values) {
    if (v < 0) continue;
    lo = lo < 0 ? v : std::min(lo, v);
    hi = std::max(hi, v);
  }
  const size_t n = values->size();
  auto x = [&](size_t i) { return n == 1 ? kWidth / 2 : 1 + static_cast<double>(i) * (kWidth - 2) / static_cast<double>(n - 1); };
  auto y = [&](int64_t v) {
    return hi == lo ? kHeight / 2 : kHeight - 2 - static_cast<double>(v - lo) * (kHeight - 4) / static_cast<double>(hi - lo);
  };
  std::string svg = "<svg class=\"sparkline\" viewBox=\"0 0 90 18\" width=\"90\" height=\"18\" role=\"img\" "
                    "aria-label=\"total_bytes over the last " + std::to_string(n) + " runs\">";
  std::string points;
  // A stretch of one run (absent on both sides) is a dot; longer ones are lines.
  auto flush = [&] {
    if (points.find(' ') != std::string::npos) {
      svg += "<polyline points=\"" + points + "\"/>";
    } else if (!points.empty()) {
      const size_t comma = points.find(',');
      svg += "<circle cx=\"" + points.substr(0, comma) + "\" cy=\"" + points.substr(comma + 1) + "\" r=\"1.2\"/>";
    }
    points.clear();
  };
  char buf[48];
  for (size_t i = 0; i < n; ++i) {
    if ((*values)[i] < 0) {
      flush();
      continue;
    }
    std::snprintf(buf, sizeof buf, "%s%.1f,%.1f", points.empty() ? "" : " ", x(i), y((*values)[i]));
    points += buf;
  }
  flush();
  const int64_t now = values->back();
  std::snprintf(buf, sizeof buf, "%.1f", now >= 0 ? y(now) : kHeight / 2);
  char cx[24];
  std::snprintf(cx, sizeof cx, "%.1f", x(n - 1));
  if (now >= 0) svg += "<circle class=\"now\" cx=\"" + std::string(cx) + "\" cy=\"" + buf + "\" r=\"1.8\"/>";
  svg += "</svg>";
  // The previous run that has the module.
  std::string mark;
  std::string changed = "0";
  for (size_t i = n - 1; now >= 0 && i-- > 0;) {
    if ((*values)[i] < 0) continue;
    const int64_t delta = now - (*values)[i];
    if (delta != 0) {
      changed = std::to_string(delta);
      mark = std::string(" <span class=\"") + (delta > 0 ? "up\">▲ " : "down\">▼ ") + Html(HumanBytes(delta, true)) +
             " since " + Html(runs[i]) + "</span>";
    }
    break;
  }
  return "<td class=\"spark\" data-change=\"" + changed + "\">" + svg + mark + "</td>";
}

std::string ModulesSection(store::Database& db, const std::string& run, std::vector<store::ModuleMemoryInfo> modules,
                           const PageLinks& links, size_t oom_reports) {
  std::string out = "<h2 id=\"modules\">Modules by memory</h2>\n";
  modules.erase(std::remove_if(modules.begin(), modules.end(),
                               [](const store::ModuleMemoryInfo& m) { return !m.has_buffer_assignment; }),
                modules.end());
  if (modules.empty()) {
    return out + "<p class=\"note\">No module of this run has a buffer assignment" +
           (oom_reports == 0 ? std::string(".")
                             : "; it has " + std::to_string(oom_reports) + " OOM report" +
                                   (oom_reports == 1 ? "" : "s") +
                                   ", listed under <a href=\"#oom\">OOM reports</a> below.") +
           "</p>\n";
  }
  std::stable_sort(modules.begin(), modules.end(), [](const auto& a, const auto& b) {
    return a.total_bytes > b.total_bytes;
  });
  const int64_t total = static_cast<int64_t>(modules.size());
  const int64_t shown = std::min(total, kMaxTableRows);
  out += "<p class=\"sub\">" + std::to_string(total) +
         " modules with a buffer assignment, the largest total first; click a column to sort by that metric.";
  if (!links.live()) out += " Each module's own page: <code>xladb report RUN --module NAME --xla-id N</code>.";
  out += "</p>\n" + LeftOutNote(shown, total, "modules", "`xladb modules RUN` lists them all");
  out += "<table class=\"sortable\" id=\"modules-table\"><thead><tr>" + HeaderCell("module", true) +
         HeaderCell("stage", true) + HeaderCell("total", true, true) + HeaderCell("space 0 (HBM)", true, true) +
         HeaderCell("live peak, padded", true, true) + HeaderCell("XLA peak", true, true) +
         HeaderCell("temp", true, true) + HeaderCell("parameters", true, true) + HeaderCell("output", true, true) +
         HeaderCell("allocations", true, true) + HeaderCell("total, last runs", false) + "</tr></thead><tbody>\n";
  auto recent = store::RecentIdentityValues(db, run, "total_bytes", kSparklineRuns);
  for (int64_t i = 0; i < shown; ++i) {
    const store::ModuleMemoryInfo& m = modules[static_cast<size_t>(i)];
    const std::vector<int64_t>* history = nullptr;
    if (recent.ok()) {
      auto it = recent->by_identity.find(m.identity_key);
      if (it != recent->by_identity.end()) history = &it->second;
    }
    out += "<tr data-module=\"" + Html(m.name) + "\"><td data-v=\"" + Html(m.name) + "\">" + ModuleLink(links, run, m) +
           (m.folder.empty() ? "" : " <span class=\"sub\">in " + Html(m.folder) + "</span>") + "</td>" +
           TextCell(m.stage) + BytesCell(m.total_bytes) + BytesCell(m.color0_total_bytes) +
           BytesCell(m.live_peak_padded_bytes) + BytesCell(m.peak_bytes) + BytesCell(m.temp_bytes) +
           BytesCell(m.parameter_bytes) + BytesCell(m.output_bytes) + IntCell(m.allocation_count) +
           SparklineCell(history, recent.ok() ? recent->runs : std::vector<std::string>()) + "</tr>\n";
  }
  return out + "</tbody></table>\n";
}

std::string SpacesSection(store::Database& db, const std::string& run,
                          const std::vector<store::ModuleMemoryInfo>& modules, const PageLinks& links) {
  std::string out = "<h2 id=\"spaces\">Memory spaces</h2>\n";
  auto spaces = store::ListModuleSpaces(db, run);
  if (!spaces.ok() || spaces->empty()) return out + "<p class=\"note\">No allocations are stored.</p>\n";
  std::map<int64_t, const store::ModuleMemoryInfo*> by_id;
  for (const auto& m : modules) by_id[m.module_id] = &m;
  std::map<int64_t, std::pair<int64_t, int64_t>> per_color;  // color -> (modules, bytes)
  for (const auto& s : *spaces) {
    per_color[s.color].first += 1;
    per_color[s.color].second += s.total_bytes;
  }
  out += "<p class=\"sub\">Color 0 is the default space (HBM on an accelerator), 1 is VMEM on TPU.</p>\n"
         "<table id=\"spaces-summary\"><thead><tr><th class=\"n\">space</th><th class=\"n\">modules</th>"
         "<th class=\"n\">bytes, all modules</th></tr></thead><tbody>\n";
  for (const auto& [color, v] : per_color) {
    out += "<tr>" + IntCell(color) + IntCell(v.first) + BytesCell(v.second) + "</tr>\n";
  }
  out += "</tbody></table>\n";
  const int64_t total = static_cast<int64_t>(spaces->size());
  const int64_t shown = std::min(total, kMaxTableRows);
  out += LeftOutNote(shown, total, "module memory spaces", "the module_memory_spaces table has them all");
  out += "<table class=\"sortable\" id=\"spaces-table\"><thead><tr>" + HeaderCell("module", true) +
         HeaderCell("space", true, true) + HeaderCell("bytes", true, true) + HeaderCell("live peak, padded", true, true) +
         HeaderCell("allocations", true, true) + "</tr></thead><tbody>\n";
  for (int64_t i = 0; i < shown; ++i) {
    const store::ModuleSpaceInfo& s = (*spaces)[static_cast<size_t>(i)];
    const auto m = by_id.find(s.module_id);
    out += "<tr><td>" + (m == by_id.end() ? std::string("?") : ModuleLink(links, run, *m->second)) + "</td>" +
           IntCell(s.color) + BytesCell(s.total_bytes) + BytesCell(s.live_peak_padded_bytes) +
           IntCell(s.allocation_count) + "</tr>\n";
  }
  return out + "</tbody></table>\n";
}

std::string RetracesSection(store::Database& db, const std::string& run) {
  std::string out = "<h2 id=\"retraces\">Retraces</h2>\n";
  auto groups = store::ListRetraces(db, run, 2);
  if (!groups.ok() || groups->empty()) return out + "<p class=\"sub\">No jit name was compiled more than once.</p>\n";
  out += "<p class=\"sub\">Jit names compiled more than once at one stage: other shapes (retraces) or the same "
         "program again.</p>\n<table class=\"sortable\" id=\"retraces-table\"><thead><tr>" +
         HeaderCell("module", true) + HeaderCell("stage", true) + HeaderCell("compiles", true, true) +
         HeaderCell("signatures", true, true) + HeaderCell("programs", true, true) + HeaderCell("xla ids", false) +
         "</tr></thead><tbody>\n";
  for (const store::RetraceGroup& g : *groups) {
    std::string ids;
    for (int64_t id : g.xla_module_ids) ids += (ids.empty() ? "" : ", ") + std::to_string(id);
    out += "<tr>" + TextCell(g.folder.empty() ? g.module : g.folder + "/" + g.module) + TextCell(g.stage) +
           IntCell(g.compiles) + IntCell(g.distinct_signatures) + IntCell(g.distinct_fingerprints) + TextCell(ids) +
           "</tr>\n";
  }
  return out + "</tbody></table>\n";
}

std::string KernelsSection(store::Database& db, const std::string& run) {
  std::string out = "<h2 id=\"kernels\">TPU kernels by spill rate</h2>\n";
  store::SpillQuery q;
  q.run = run;
  auto rows = store::SpillRates(db, q);
  if (!rows.ok() || rows->empty()) {
    return out + "<p class=\"sub\">No TPU utilization counters are stored for this run.</p>\n";
  }
  const int64_t total = static_cast<int64_t>(rows->size());
  const int64_t shown = std::min(total, kMaxTableRows);
  out += LeftOutNote(shown, total, "kernels", "`xladb spills --run RUN` lists them all");
  out += "<p class=\"sub\">Spills and fills of VMEM per bundle, from libtpu's counters.</p>\n"
         "<table class=\"sortable\" id=\"kernels-table\"><thead><tr>" +
         HeaderCell("kernel", true) + HeaderCell("module", true) + HeaderCell("VMEM spill rate", true, true) +
         HeaderCell("VMEM fill rate", true, true) + HeaderCell("VMEM spills", true, true) +
         HeaderCell("VMEM fills", true, true) + HeaderCell("bundles", true, true) + "</tr></thead><tbody>\n";
  char rate[32];
  for (int64_t i = 0; i < shown; ++i) {
    const store::SpillRateRow& r = (*rows)[static_cast<size_t>(i)];
    out += "<tr>" + TextCell(r.kernel, true) + TextCell(r.module_name);
    for (double v : {r.vmem_spill_rate, r.vmem_fill_rate}) {
      std::snprintf(rate, sizeof rate, "%.4f", v);
      out += "<td class=\"n\" data-v=\"" + std::string(rate) + "\">" + rate + "</td>";
    }
    out += IntCell(r.vmem_spills) + IntCell(r.vmem_fills) + IntCell(r.bundles) + "</tr>\n";
  }
  return out + "</tbody></table>\n";
}

// Each OOM report: what failed against the limit, then its buffers, largest first.
std::string OomSection(const std::vector<store::OomReportInfo>& reports) {
  std::string out = "<h2 id=\"oom\">OOM reports</h2>\n";
  if (reports.empty()) return out + "<p class=\"sub\">No OOM report is stored for this run.</p>\n";
  out += "<p class=\"sub\">" + std::to_string(reports.size()) + " OOM report" + (reports.size() == 1 ? "" : "s") +
         " (<code>BufferAssignment OOM Debugging.</code>): the allocation that failed, the allocator's limit where "
         "the log printed it, and the largest buffers as XLA listed them (sizes as printed). "
         "<code>xladb oom RUN</code> lists them.</p>\n";
  for (const store::OomReportInfo& r : reports) {
    out += "<section class=\"oom-report\" data-path=\"" + Html(r.path) + "\"><h3>" + Html(r.module) +
           (r.xla_module_id >= 0 ? " <span class=\"sub\">#" + std::to_string(r.xla_module_id) + "</span>" : "") +
           " <span class=\"sub\">" + Html(r.path) + "</span></h3>\n<table class=\"oom-figures\"><tbody>" +
           "<tr><th>failed allocation</th>" + BytesCell(r.failed_allocation_bytes) + "</tr>" +
           "<tr><th>limit</th>" + BytesCell(r.limit_bytes) + "</tr>" + "<tr><th>total allocation</th>" +
           BytesCell(r.total_allocation_bytes) + "</tr></tbody></table>\n";
    const int64_t total = static_cast<int64_t>(r.buffers.size());
    const int64_t shown = std::min(total, kMaxTableRows);
    out += LeftOutNote(shown, total, "buffers", "`xladb oom RUN` lists them all");
    out += "<table class=\"oom-buffers\"><thead><tr><th class=\"n\">buffer</th><th class=\"n\">size</th>"
           "<th>shape</th><th>op</th><th>op name</th><th>source</th></tr></thead><tbody>\n";
    for (int64_t i = 0; i < shown; ++i) {
      const store::OomBufferInfo& b = r.buffers[static_cast<size_t>(i)];
      const std::string source = b.source_file.empty() ? "" : b.source_file + ":" + std::to_string(b.source_line);
      out += "<tr>" + IntCell(b.buffer_number) + BytesCell(b.size_bytes) + TextCell(b.shape, true) +
             TextCell(b.is_entry_parameter ? "parameter" : b.xla_label) + TextCell(b.op_name, true) +
             TextCell(source) + "</tr>\n";
    }
    out += "</tbody></table></section>\n";
  }
  return out;
}

}  // namespace

StatusOr<std::string> RenderRunPage(store::Database& db, const std::string& run, const PageLinks& links) {
  auto info = store::GetRun(db, run);
  if (!info.ok()) return info.status();
  auto modules = store::ListModules(db, run);
  if (!modules.ok()) return modules.status();
  std::string body = "<header><p class=\"sub\">xladb · " + PageLinks::Anchor(links.Runs(), "runs") +
                     " · run</p>\n<h1>" + Html(run) + "</h1>\n<p class=\"sub\">";
  body += Html(RunTimeText(info->run_time_us));
  for (const auto& [key, value] : info->labels) body += " · <code>" + Html(key) + "=" + Html(value) + "</code>";
  body += " · " + std::to_string(info->module_count) + " modules · " + std::to_string(info->file_count) + " files";
  if (info->error_file_count > 0) body += " · <b>" + std::to_string(info->error_file_count) + " files with errors</b>";
  auto oom_reports = store::ListOomReports(db, run);
  if (!oom_reports.ok()) return oom_reports.status();
  body += "</p>\n<nav><a href=\"#modules\">modules</a><a href=\"#spaces\">memory spaces</a>"
          "<a href=\"#retraces\">retraces</a><a href=\"#kernels\">TPU kernels</a><a href=\"#oom\">OOM reports</a>"
          "</nav></header>\n";
  body += ModulesSection(db, run, *modules, links, oom_reports->size());
  body += SpacesSection(db, run, *modules, links);
  body += RetracesSection(db, run);
  body += KernelsSection(db, run);
  body += OomSection(*oom_reports);
  return PageFrame("xladb · run " + run, body);
}

StatusOr<std::string> RenderRunsPage(store::Database& db, const PageLinks& links) {
  store::RunFilter filter;
  filter.page_size = 1000;
  auto page = store::ListRuns(db, filter);
  if (!page.ok()) return page.status();
  std::string body = "<header><p class=\"sub\">xladb</p>\n<h1>Runs</h1>\n<p class=\"sub\">" +
                     std::to_string(page->runs.size()) + " runs, newest first" +
                     (page->next_page_token.empty() ? "" : " (the newest 1000; `xladb runs` pages through all)") +
                     ".</p></header>\n";
  body += "<table class=\"sortable\" id=\"runs-table\"><thead><tr>" + HeaderCell("run", true) +
          HeaderCell("time", true) + HeaderCell("labels", true) + HeaderCell("modules", true, true) +
          HeaderCell("files", true, true) + HeaderCell("errors", true, true) + HeaderCell("against the run before", false) +
          "</tr></thead><tbody>\n";
  for (size_t i = 0; i < page->runs.size(); ++i) {
    const store::RunInfo& r = page->runs[i];
    std::string labels;
    for (const auto& [key, value] : r.labels) labels += (labels.empty() ? "" : " ") + key + "=" + value;
    std::string diff;
    if (i + 1 < page->runs.size()) {
      diff = PageLinks::Anchor(links.Diff(r.name, page->runs[i + 1].name), "diff with " + Html(page->runs[i + 1].name));
    }
    body += "<tr><td>" + PageLinks::Anchor(links.Run(r.name), Html(r.name)) + "</td>" +
            TextCell(RunTimeText(r.run_time_us)) + TextCell(labels, true) + IntCell(r.module_count) +
            IntCell(r.file_count) + IntCell(r.error_file_count) + "<td>" + diff + "</td></tr>\n";
  }
  body += "</tbody></table>\n";
  return PageFrame("xladb · runs", body);
}

StatusOr<std::string> RenderReport(store::Database& db, const ReportRequest& request, const PageLinks& links) {
  if (request.run.empty()) return Status::InvalidArgument("a report needs a run");
  if (!request.module.empty() && (!request.baseline.empty() || !request.budgets.empty())) {
    return Status::InvalidArgument("a report is a module page or a diff against a baseline, not both");
  }
  if (!request.baseline.empty() || !request.budgets.empty()) return RenderDiffPage(db, request, links);
  if (!request.module.empty()) return RenderModulePage(db, request, links);
  return RenderRunPage(db, request.run, links);
}

}  // namespace xladb::service::pages
