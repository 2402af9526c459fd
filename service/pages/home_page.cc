// The front page (report_pages.h): what a team opens every morning.
//
//   * Latest: per value of the label the team follows (HomeRequest::label_key; one group of every run without
//     it), the newest run, the gate's verdict against the run before it in that group (store/compare/check_run.h,
//     with the request's budgets), and its largest modules by padded live peak with their budget headroom.
//   * Recent changes: the change points of the last kRecentRuns runs of the newest group
//     (store/compare/change_points.h), largest first, at most kRecentChanges, each with the source lines behind it and
//     links to the module page and to the diff page of its pair of runs.
//   * A chart of the newest run's largest modules over the group's last kChartRuns runs, drawn by the module
//     page's chart (memory_chart.h) with runs on the x axis: one line per jit name, its largest compile per
//     run; a run without the module repeats the value before it (the first runs take the first value).
#include <algorithm>
#include <map>
#include <string>
#include <string_view>
#include <vector>

#include "service/human_bytes.h"
#include "service/pages/html_text.h"
#include "service/pages/memory_chart.h"
#include "service/pages/report_pages.h"
#include "service/pages/table_cells.h"
#include "store/compare/change_points.h"
#include "store/compare/check_run.h"
#include "store/compare/module_match.h"
#include "store/facts/module_metrics.h"
#include "store/compare/module_trend.h"
#include "store/query/name_pattern.h"
#include "store/query/queries.h"

namespace xladb::service::pages {
namespace {

constexpr int64_t kMaxGroups = 12;
constexpr size_t kLargestModules = 10;
constexpr size_t kChartModules = 5;
constexpr int64_t kChartRuns = 30;
constexpr int64_t kRecentRuns = 10;
constexpr int64_t kRecentChanges = 20;

// A group of runs: those with one value of the followed label (newest first), or every run.
struct RunGroup {
  std::string title;             // "branch=main", or "every run"
  store::Labels labels;          // what selects it
  std::vector<store::RunInfo> runs;
};

// Runs newest first, grouped by the label's value (groups by their newest run, newest first); runs without
// the label are left out when a label is followed.
StatusOr<std::vector<RunGroup>> GroupRuns(store::Database& db, const std::string& label_key) {
  std::vector<store::RunInfo> all;
  store::RunFilter filter;
  filter.page_size = 1000;
  for (;;) {
    auto page = store::ListRuns(db, filter);
    if (!page.ok()) return page.status();
    for (auto& r : page->runs) all.push_back(std::move(r));
    if (page->next_page_token.empty()) break;
    filter.page_token = page->next_page_token;
  }
  std::vector<RunGroup> groups;
  if (label_key.empty()) {
    if (!all.empty()) groups.push_back({"every run", {}, std::move(all)});
    return groups;
  }
  std::map<std::string, size_t> index;
  for (store::RunInfo& r : all) {
    auto label = std::find_if(r.labels.begin(), r.labels.end(), [&](const auto& kv) { return kv.first == label_key; });
    if (label == r.labels.end()) continue;
    auto [it, added] = index.try_emplace(label->second, groups.size());
    if (added) groups.push_back({label_key + "=" + label->second, {{label_key, label->second}}, {}});
    groups[it->second].runs.push_back(std::move(r));
  }
  return groups;
}

// A run's modules, the largest first by its peak metric: the first of kPeakMetricsInOrder any module has.
struct LargestModules {
  std::string metric;
  std::vector<store::ModuleRow> rows;
};

StatusOr<LargestModules> LoadLargestModules(store::Database& db, int64_t run_id) {
  auto rows = store::LoadRunModules(db, run_id);
  if (!rows.ok()) return rows.status();
  LargestModules out{"total_bytes", std::move(*rows)};
  for (std::string_view metric : store::kPeakMetricsInOrder) {
    if (std::any_of(out.rows.begin(), out.rows.end(), [&](const auto& m) { return m.metric(metric) >= 0; })) {
      out.metric = std::string(metric);
      break;
    }
  }
  std::stable_sort(out.rows.begin(), out.rows.end(),
                   [&](const auto& a, const auto& b) { return a.metric(out.metric) > b.metric(out.metric); });
  return out;
}

std::string ModuleLink(const PageLinks& links, const std::string& run, const store::ModuleRow& m) {
  std::string text = Html(m.folder.empty() ? m.name : m.folder + "/" + m.name);
  if (m.xla_module_id >= 0) text += " <span class=\"sub\">#" + std::to_string(m.xla_module_id) + "</span>";
  return PageLinks::Anchor(links.Module(run, m.name, m.stage, m.xla_module_id, m.folder), text);
}

std::string LatestSection(store::Database& db, const RunGroup& group, const StatusOr<LargestModules>& modules,
                          const HomeRequest& request, const PageLinks& links, size_t index) {
  const store::RunInfo& latest = group.runs.front();
  std::string out = "<section class=\"group\" id=\"group-" + std::to_string(index) + "\">\n<h3>" +
                    Html(group.title) + "</h3>\n<p>Latest run " +
                    PageLinks::Anchor(links.Run(latest.name), "<code>" + Html(latest.name) + "</code>") + " (" +
                    Html(RunTimeText(latest.run_time_us)) + ")";
  if (group.runs.size() < 2) {
    out += "; no earlier run to compare it with.</p>\n";
  } else {
    const store::RunInfo& before = group.runs[1];
    store::CheckOptions gate;
    gate.run = latest.name;
    gate.baseline = before.name;
    gate.budgets = request.budgets;
    gate.max_attribution = 0;
    auto verdict = store::CheckRun(db, gate);
    if (!verdict.ok()) return out + ".</p>\n<p class=\"note\">" + Html(verdict.status().message()) + "</p>\n</section>\n";
    const char* name = store::VerdictName(verdict->verdict);
    out += ", against " + PageLinks::Anchor(links.Run(before.name), "<code>" + Html(before.name) + "</code>") +
           ": <span class=\"verdict " + name + "\" data-verdict=\"" + name + "\">" + name + "</span> " +
           PageLinks::Anchor(links.Diff(latest.name, before.name), Html(verdict->reason)) + "</p>\n";
  }
  if (!modules.ok()) return out + "<p class=\"note\">" + Html(modules.status().message()) + "</p>\n</section>\n";
  if (modules->rows.empty()) {
    return out + "<p class=\"note\">No module of this run has a buffer assignment.</p>\n</section>\n";
  }
  const std::string& metric = modules->metric;
  const bool budgets = !request.budgets.empty();
  const bool with_total = metric != "total_bytes";
  out += "<table class=\"sortable largest\"><thead><tr>" + HeaderCell("module", true) + HeaderCell("stage", true) +
         HeaderCell(metric, true, true) + (with_total ? HeaderCell("total_bytes", true, true) : std::string()) +
         (budgets ? HeaderCell("budget", false) : std::string()) + "</tr></thead><tbody>\n";
  for (size_t i = 0; i < modules->rows.size() && i < kLargestModules; ++i) {
    const store::ModuleRow& m = modules->rows[i];
    std::string headroom;
    if (budgets) {
      auto use = store::MeasureBudget(request.budgets, m);
      headroom = !use ? "<td></td>"
                      : std::string("<td class=\"") + (use->over ? "over" : use->warn ? "warn" : "within") + "\">" +
                            Html(BudgetHeadroom(use->metric, use->current, use->max_bytes, use->percent, use->over,
                                                use->warn)) +
                            "</td>";
    }
    out += "<tr><td>" + ModuleLink(links, latest.name, m) + "</td>" + TextCell(m.stage, true) +
           BytesCell(m.metric(metric)) + (with_total ? BytesCell(m.metric("total_bytes")) : std::string()) + headroom +
           "</tr>\n";
  }
  out += "</tbody></table>\n";
  if (modules->rows.size() > kLargestModules) {
    out += LeftOutNote(kLargestModules, static_cast<int64_t>(modules->rows.size()), "modules", "the run page lists all");
  }
  return out + "</section>\n";
}

std::string RecentChangesSection(store::Database& db, const RunGroup& group, const PageLinks& links) {
  std::string out = "<h2 id=\"recent-changes\">Recent changes</h2>\n";
  store::ChangeQuery q;
  q.labels = group.labels;
  q.last_n = kRecentRuns;
  q.limit = kRecentChanges;
  q.attribute = kRecentChanges;
  q.max_attribution = 0;
  auto changes = store::ListChanges(db, q);
  if (!changes.ok()) return out + "<p class=\"note\">" + Html(changes.status().message()) + "</p>\n";
  out += "<p class=\"sub\">The change points of " + Html(group.title) + " over its last " +
         std::to_string(changes->runs) + (changes->runs == 1 ? " run" : " runs") +
         ", largest first (`xladb changes --last " + std::to_string(kRecentRuns) + "`).</p>\n";
  if (changes->changes.empty()) {
    // A short history says why; a note about equal run times is not a reason.
    std::string why = "No module changed memory.";
    for (const std::string& note : changes->notes) {
      if (note.find("the same run time") == std::string::npos && note.find("equal run times") == std::string::npos) {
        why = note;
        break;
      }
    }
    return out + "<p class=\"note\" id=\"no-changes\">" + Html(why) + "</p>\n";
  }
  out += "<table class=\"sortable\" id=\"changes-table\"><thead><tr>" + HeaderCell("run", true) +
         HeaderCell("module", true) + HeaderCell("metric", true) + HeaderCell("before", true, true) +
         HeaderCell("after", true, true) + HeaderCell("change", true, true) + HeaderCell("against", true) +
         HeaderCell("source lines", false) + "</tr></thead><tbody>\n";
  for (const store::ChangePoint& c : changes->changes) {
    std::string module = Html(c.folder.empty() ? c.module : c.folder + "/" + c.module);
    if (c.level == store::ChangePoint::Level::kName) module += " <span class=\"sub\">(jit name)</span>";
    std::string lines;
    if (c.attribution) {
      for (size_t i = 0; i < c.attribution->by_source.size() && i < 3; ++i) {
        const auto& l = c.attribution->by_source[i];
        lines += (i ? ", " : "") + std::string("<code>") + Html(l.source.empty() ? "(no source line)" : l.source) +
                 "</code> " + Html(HumanBytes(l.delta, true));
      }
    }
    out += "<tr class=\"change\" data-run=\"" + Html(c.run) + "\" data-module=\"" + Html(c.module) + "\"><td>" +
           PageLinks::Anchor(links.Run(c.run), Html(c.run)) + "</td><td>" +
           PageLinks::Anchor(links.Module(c.run, c.module, c.stage, c.xla_module_id, c.folder), module) + "</td>" +
           TextCell(c.metric) + BytesCell(c.before) + BytesCell(c.after) + DeltaCell(c.delta()) + "<td>" +
           PageLinks::Anchor(links.Diff(c.run, c.previous_run), "diff with " + Html(c.previous_run)) + "</td><td>" +
           lines + "</td></tr>\n";
  }
  out += "</tbody></table>\n";
  if (changes->change_count > static_cast<int64_t>(changes->changes.size())) {
    out += LeftOutNote(static_cast<int64_t>(changes->changes.size()), changes->change_count, "change points",
                       "`xladb changes --limit 0` lists all");
  }
  return out;
}

// `modules`: the group's latest run's, as LatestSection showed them.
std::string ChartSection(store::Database& db, const RunGroup& group, const StatusOr<LargestModules>& modules) {
  std::string out = "<h2 id=\"largest-over-time\">The largest modules over time</h2>\n";
  if (!modules.ok()) return out + "<p class=\"note\">" + Html(modules.status().message()) + "</p>\n";
  if (modules->rows.empty()) {
    return out + "<p class=\"note\">The latest run has no module with a buffer assignment.</p>\n";
  }
  const std::string& metric = modules->metric;
  // The runs on the x axis, oldest first.
  const size_t n = std::min<size_t>(group.runs.size(), kChartRuns);
  std::vector<std::string> run_names(n);
  std::map<std::string, size_t> run_index;
  for (size_t i = 0; i < n; ++i) {
    run_names[n - 1 - i] = group.runs[i].name;
    run_index[group.runs[i].name] = n - 1 - i;
  }
  // The jit names of the latest run's largest modules, each once.
  std::vector<const store::ModuleRow*> picked;
  for (const auto& m : modules->rows) {
    if (picked.size() == kChartModules) break;
    if (std::none_of(picked.begin(), picked.end(), [&](const auto* p) {
          return p->name == m.name && p->stage == m.stage && p->folder == m.folder;
        })) {
      picked.push_back(&m);
    }
  }
  std::vector<std::vector<int64_t>> values(picked.size(), std::vector<int64_t>(n, -1));
  std::vector<std::string> labels;
  for (size_t k = 0; k < picked.size(); ++k) {
    store::TrendQuery trend;
    trend.module = store::GlobLiteral(picked[k]->name);  // a jit name may hold * ? [
    trend.metric = metric;
    trend.stage = picked[k]->stage;
    trend.folder = picked[k]->folder;
    trend.labels = group.labels;
    trend.since_us = group.runs[n - 1].run_time_us;
    auto points = store::PeakMemoryTrend(db, trend);
    if (!points.ok()) return out + "<p class=\"note\">" + Html(points.status().message()) + "</p>\n";
    for (const auto& p : *points) {
      if (p.module_name != picked[k]->name) continue;
      auto at = run_index.find(p.run_name);
      if (at != run_index.end()) values[k][at->second] = std::max(values[k][at->second], p.value);
    }
    // A run without the module repeats the value before it; the first runs take the first value.
    int64_t carried = -1;
    for (int64_t v : values[k]) {
      if (v >= 0) {
        carried = v;
        break;
      }
    }
    for (int64_t& v : values[k]) {
      if (v < 0) v = std::max<int64_t>(carried, 0);
      carried = v;
    }
    labels.push_back(picked[k]->folder.empty() ? picked[k]->name : picked[k]->folder + "/" + picked[k]->name);
  }
  std::vector<ChartSeries> series;
  for (size_t k = 0; k < picked.size(); ++k) {
    series.push_back({"m" + std::to_string(k), labels[k], &values[k], &run_names});
  }
  out += "<p class=\"sub\">" + Html(metric) + " of the latest run's largest jit names (their largest compile in " +
         "each run) over the last " + std::to_string(n) + (n == 1 ? " run" : " runs") + " of " + Html(group.title) +
         ", oldest left; hover for the run.</p>\n";
  ChartAxis axis;
  axis.x_label = "runs, oldest to newest";
  axis.x_name = "run";
  return out + RenderMemoryChart("home-chart", series, {}, kChartPoints, axis);
}

}  // namespace

StatusOr<std::string> RenderHomePage(store::Database& db, const HomeRequest& request, const PageLinks& links) {
  if (Status st = store::CheckBudgetsValid(request.budgets); !st.ok()) return st;
  auto groups = GroupRuns(db, request.label_key);
  if (!groups.ok()) return groups.status();
  int64_t runs = 0;
  for (const RunGroup& g : *groups) runs += static_cast<int64_t>(g.runs.size());
  std::string body = "<header><p class=\"sub\">xladb</p>\n<h1>Memory, run by run</h1>\n<p class=\"sub\">" +
                     std::to_string(runs) + (runs == 1 ? " run" : " runs") +
                     (request.label_key.empty() ? std::string()
                                                : " in " + std::to_string(groups->size()) + " groups by " +
                                                      Html(request.label_key)) +
                     (links.live() ? " · " + PageLinks::Anchor(links.Runs(), "every run") : std::string()) +
                     "</p></header>\n";
  if (groups->empty()) {
    body += "<p class=\"note\" id=\"no-runs\">" +
            Html(request.label_key.empty() ? "No run is stored yet."
                                           : "No run carries the label " + request.label_key + ".") +
            "</p>\n";
    return PageFrame("xladb", body);
  }
  body += "<h2 id=\"latest\">Latest</h2>\n";
  // The newest group's latest modules serve its section and the chart: read once.
  const StatusOr<LargestModules> newest = LoadLargestModules(db, groups->front().runs.front().run_id);
  for (size_t i = 0; i < groups->size() && static_cast<int64_t>(i) < kMaxGroups; ++i) {
    const RunGroup& group = (*groups)[i];
    body += i == 0 ? LatestSection(db, group, newest, request, links, i)
                   : LatestSection(db, group, LoadLargestModules(db, group.runs.front().run_id), request, links, i);
  }
  if (static_cast<int64_t>(groups->size()) > kMaxGroups) {
    body += LeftOutNote(kMaxGroups, static_cast<int64_t>(groups->size()), "groups", "the runs page lists every run");
  }
  body += RecentChangesSection(db, groups->front(), links);
  body += ChartSection(db, groups->front(), newest);
  return PageFrame("xladb", body);
}

}  // namespace xladb::service::pages
