#include "service/query_answers.h"

#include "service/pages/report_pages.h"

#include <cctype>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "service/module_notes.h"
#include "service/result_protos.h"
#include "store/compare/check_run.h"
#include "store/facts/module_metrics.h"
#include "store/compare/module_trend.h"
#include "store/query/queries.h"
#include "store/compare/run_diff.h"

namespace xladb::service {

namespace v1 = xladb::v1;

namespace {

// A count or limit from a request: 0 means "the default", negative or over `max` is refused.
Status CheckCount(const char* field, int64_t value, int64_t max) {
  if (value < 0) return Status::InvalidArgument(std::string(field) + " must not be negative (0 = the default)");
  if (value > max) {
    return Status::InvalidArgument(std::string(field) + " is at most " + std::to_string(max) + " (got " +
                                   std::to_string(value) + ")");
  }
  return Status::Ok();
}

// The budgets of a request that carries them (ListModules, CheckRun, Report): warn_percent 0 is the default.
template <typename Request>
store::MemoryBudgets BudgetsOf(const Request& request) {
  store::MemoryBudgets budgets;
  for (const auto& b : request.budgets()) budgets.list.push_back({b.pattern(), b.metric(), b.max_bytes()});
  if (request.warn_percent() != 0) budgets.warn_percent = request.warn_percent();
  return budgets;
}

store::Labels FromProto(const google::protobuf::RepeatedPtrField<v1::Label>& labels) {
  store::Labels out;
  for (const auto& l : labels) out.emplace_back(l.key(), l.value());
  return out;
}

store::GrowthLimit FromProto(const v1::GrowthLimit& l) { return {l.max_growth_bytes(), l.max_growth_percent()}; }

// A TrendMetric's metric: the kModuleMetrics name its enum name spells in lower case (TOTAL_BYTES is
// total_bytes). TREND_METRIC_UNSPECIFIED is the padded live peak, the default since 2026-11: XLA's printed peak
// under-reports.
std::string TrendMetricName(v1::TrendMetric metric) {
  std::string name = v1::TrendMetric_Name(metric);
  for (char& c : name) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return store::FindModuleMetric(name) != nullptr ? name : std::string(store::kPeakMetricsInOrder[0]);
}

// A TopBuffers question's module pick, shared by TopBuffers, the trend's run_name and the report's notes.
std::optional<std::string> FolderOf(bool has_folder, const std::string& folder) {
  return has_folder ? std::optional<std::string>(folder) : std::nullopt;
}

}  // namespace

Status AnswerListRuns(store::Database& db, const v1::ListRunsRequest& request, v1::ListRunsResponse* resp) {
  const auto* req = &request;
  if (Status c = CheckCount("page_size", req->page_size(), 1000); !c.ok()) return c;
  if (req->since_us() < 0 || req->until_us() < 0) {
    return Status::InvalidArgument("since_us and until_us are Unix microseconds (0 = no bound)");
  }
  store::RunFilter f;
  f.labels = FromProto(req->labels());
  f.since_us = req->since_us() > 0 ? req->since_us() : -1;
  f.until_us = req->until_us() > 0 ? req->until_us() : -1;
  f.name_pattern = req->name_pattern();
  f.page_size = req->page_size() > 0 ? req->page_size() : 100;
  f.page_token = req->page_token();
  auto page = store::ListRuns(db, f);
  if (!page.ok()) return page.status();
  for (const auto& r : page->runs) ToProto(r, resp->add_runs());
  resp->set_next_page_token(page->next_page_token);
  return Status::Ok();
}

Status AnswerGetRun(store::Database& db, const v1::GetRunRequest& request, v1::Run* resp) {
  const auto* req = &request;
  if (req->run_name().empty()) return Status::InvalidArgument("run_name is required");
  auto run = store::GetRun(db, req->run_name());
  if (!run.ok()) return run.status();
  ToProto(run.value(), resp);
  return Status::Ok();
}

Status AnswerListModules(store::Database& db, const v1::ListModulesRequest& request, v1::ListModulesResponse* resp) {
  const auto* req = &request;
  if (req->run_name().empty()) return Status::InvalidArgument("run_name is required");
  if (Status c = CheckCount("limit", req->limit(), 10000000); !c.ok()) return c;
  store::ModuleListOptions options;
  options.name_pattern = req->name_pattern();
  options.stage = req->stage();
  options.sort_metric = req->sort_metric();
  options.limit = req->limit() > 0 ? req->limit() : -1;
  options.memory_only = req->memory_only();
  const store::MemoryBudgets budgets = BudgetsOf(*req);
  if (Status st = store::CheckBudgetsValid(budgets); !st.ok()) return st;
  auto modules = store::ListModules(db, req->run_name(), options);
  if (!modules.ok()) return modules.status();
  for (const auto& m : modules.value()) {
    auto* out = resp->add_modules();
    ToProto(m, out);
    const auto budget = store::MeasureBudget(budgets, m.name,
                                             [&m](std::string_view metric) { return m.metric(metric); });
    if (budget) ToProto(*budget, out->mutable_budget());
  }
  return MarkModulesWithOomReports(db, req->run_name(), resp);
}

Status AnswerPeakMemoryTrend(store::Database& db, const v1::PeakMemoryTrendRequest& request, v1::PeakMemoryTrendResponse* resp) {
  const auto* req = &request;
  if (req->module().empty()) return Status::InvalidArgument("module is required (a name or pattern)");
  if (Status c = CheckCount("last_n", req->last_n(), 1000000); !c.ok()) return c;
  if (!v1::TrendMetric_IsValid(req->metric())) {
    return Status::InvalidArgument("metric " + std::to_string(req->metric()) + " is not a TrendMetric");
  }
  store::TrendQuery q;
  q.module = req->module();
  q.metric = TrendMetricName(req->metric());
  q.last_n = req->last_n() > 0 ? req->last_n() : -1;
  q.labels = FromProto(req->labels());
  q.stage = req->stage();
  if (req->has_folder()) q.folder = req->folder();
  if (req->has_xla_module_id() && req->xla_module_id() < 0) {
    return Status::InvalidArgument("xla_module_id must not be negative");
  }
  q.xla_module_id = req->has_xla_module_id() ? req->xla_module_id() : -1;
  q.fingerprint = req->fingerprint();
  if (req->since_us() < 0 || req->until_us() < 0) {
    return Status::InvalidArgument("since_us and until_us are Unix microseconds (0 = no bound)");
  }
  q.since_us = req->since_us() > 0 ? req->since_us() : -1;
  q.until_us = req->until_us() > 0 ? req->until_us() : -1;
  if (!req->run_name().empty()) {
    // One compile of the named run, followed across runs by its identity.
    if (req->module().find_first_of("*?[") != std::string::npos) {
      return Status::InvalidArgument("run_name picks one compile: module must be an exact name, not a pattern");
    }
    auto picked = store::TopBuffers(db, req->run_name(), req->module(), 0, req->stage(), q.xla_module_id,
                                    FolderOf(req->has_folder(), req->folder()));
    if (!picked.ok()) return picked.status();
    if (!picked->has_memory) {
      return Status::NotFound("module '" + req->module() + "' of run '" + req->run_name() +
                              "' has no buffer assignment or memory report, so no memory figures to follow");
    }
    q.identity_key = picked->identity_key;
    q.xla_module_id = -1;
    if (std::string note = ResolutionNote(*picked, req->run_name()); !note.empty()) resp->add_notes(note);
  }
  auto points = store::PeakMemoryTrend(db, q);
  if (req->metric() == v1::TREND_METRIC_UNSPECIFIED) {
    // The default, the padded live peak, needs live ranges: older dumps and memory reports alone have none,
    // so their trend falls back to XLA's printed peak, then to total_bytes, and says so.
    for (size_t i = 1; i < std::size(store::kPeakMetricsInOrder); ++i) {
      if (points.ok() || points.status().code() != Status::Code::kNotFound) break;
      q.metric = std::string(store::kPeakMetricsInOrder[i]);
      points = store::PeakMemoryTrend(db, q);
      if (points.ok()) {
        resp->add_notes(req->module() + ": no compile has live ranges, so no padded live peak: showing " +
                        q.metric + " instead (choose with --metric)");
      }
    }
  }
  if (!points.ok()) return points.status();
  resp->set_metric(q.metric);
  if (req->run_name().empty() && !req->has_xla_module_id() && req->module().find_first_of("*?[") == std::string::npos) {
    // An exact name with several compiles in a run: every compile is its own series; say how to follow one.
    std::map<std::string, int64_t> compiles;  // run -> points
    std::string busiest;
    for (const auto& p : *points) {
      if (++compiles[p.run_name] > 1 && (busiest.empty() || compiles[p.run_name] > compiles[busiest])) {
        busiest = p.run_name;
      }
    }
    if (!busiest.empty()) {
      resp->add_notes(req->module() + ": " + std::to_string(compiles[busiest]) + " compiles in run " + busiest +
                      "; showing every compile's series; follow one with --run " + busiest + " --xla-id");
    }
  }
  for (const auto& p : points.value()) ToProto(p, resp->add_points());
  return Status::Ok();
}

Status AnswerSpillRates(store::Database& db, const v1::SpillRatesRequest& request, v1::SpillRatesResponse* resp) {
  const auto* req = &request;
  if (Status c = CheckCount("limit", req->limit(), 1000000); !c.ok()) return c;
  store::SpillQuery q;
  q.kernel_pattern = req->kernel_pattern();
  q.run = req->run_name();
  q.limit = req->limit() > 0 ? req->limit() : -1;
  auto rows = store::SpillRates(db, q);
  if (!rows.ok()) return rows.status();
  for (const auto& r : rows.value()) ToProto(r, resp->add_rates());
  return Status::Ok();
}

Status AnswerTopBuffers(store::Database& db, const v1::TopBuffersRequest& request, v1::TopBuffersResponse* resp) {
  const auto* req = &request;
  if (Status c = CheckCount("n", req->n(), 100000); !c.ok()) return c;
  if (req->xla_module_id() < 0) return Status::InvalidArgument("xla_module_id must not be negative");
  if (req->run_name().empty() || req->module().empty()) {
    return Status::InvalidArgument("run_name and module are required");
  }
  if (!v1::PeakList_IsValid(req->at())) {
    return Status::InvalidArgument("at " + std::to_string(req->at()) + " is not a PeakList");
  }
  int64_t n = req->n() > 0 ? req->n() : 20;
  const store::PeakList list = req->at() == v1::PEAK_LIST_PADDED ? store::PeakList::kPadded : store::PeakList::kXla;
  auto answer = store::TopBuffers(db, req->run_name(), req->module(), n, req->stage(),
                                  req->has_xla_module_id() ? req->xla_module_id() : -1,
                                  FolderOf(req->has_folder(), req->folder()), list);
  if (!answer.ok()) return answer.status();
  ToProto(*answer, resp);
  for (const std::string& note : ModuleNotes(*answer, req->run_name())) resp->add_notes(note);
  return Status::Ok();
}

namespace {

// A CheckRunRequest policy field: "" is report.
StatusOr<store::UnmatchedPolicy> PolicyFromProto(const char* field, const std::string& name, bool judge_allowed) {
  if (name.empty()) return store::UnmatchedPolicy::kReport;
  auto policy = store::ParseUnmatchedPolicy(name);
  if (!policy || (*policy == store::UnmatchedPolicy::kJudge && !judge_allowed)) {
    return Status::InvalidArgument(std::string(field) + " '" + name + "' is not a policy (report, " +
                                   (judge_allowed ? "judge, " : "") + "fail or inconclusive)");
  }
  return *policy;
}

}  // namespace

Status AnswerDiffRuns(store::Database& db, const v1::DiffRunsRequest& request, v1::DiffRunsResponse* resp) {
  const auto* req = &request;
  if (Status c = CheckCount("max_buffers", req->max_buffers(), 100000); !c.ok()) return c;
  if (req->run_a().empty() || req->run_b().empty()) {
    return Status::InvalidArgument("run_a and run_b are required");
  }
  store::DiffQuery q;
  q.run_a = req->run_a();
  q.run_b = req->run_b();
  q.module = req->module();
  q.include_unchanged = req->include_unchanged();
  q.buffer_level = req->buffer_level();
  q.max_buffers = req->max_buffers() > 0 ? req->max_buffers() : 50;
  auto diff = store::DiffRuns(db, q);
  if (!diff.ok()) return diff.status();
  ToProto(*diff, resp);
  return Status::Ok();
}

Status AnswerCheckRun(store::Database& db, const v1::CheckRunRequest& req, v1::CheckRunResponse* resp) {
  if (req.run_name().empty()) return Status::InvalidArgument("run_name is required");
  if (req.baseline().empty() && req.budgets().empty()) {
    return Status::InvalidArgument("baseline is required, unless budgets are given (a budgets-only gate)");
  }
  if (Status c = CheckCount("max_attribution", req.max_attribution(), 100000); !c.ok()) return c;
  store::CheckOptions o;
  o.run = req.run_name();
  o.baseline = req.baseline();
  o.metrics.assign(req.metrics().begin(), req.metrics().end());
  o.limit = FromProto(req.limit());
  for (const auto& l : req.module_limits()) o.module_limits.push_back({l.pattern(), FromProto(l.limit())});
  o.ignore.assign(req.ignore().begin(), req.ignore().end());
  for (const auto& a : req.accepted()) o.accepted.push_back({a.pattern(), a.metric(), a.up_to_bytes(), a.reason()});
  o.fail_on_retrace_growth = req.fail_on_retrace_growth();
  o.max_attribution = req.max_attribution() > 0 ? req.max_attribution() : 20;
  auto on_added = PolicyFromProto("on_added", req.on_added(), false);
  if (!on_added.ok()) return on_added.status();
  auto on_removed = PolicyFromProto("on_removed", req.on_removed(), false);
  if (!on_removed.ok()) return on_removed.status();
  auto on_reshaped = PolicyFromProto("on_reshaped", req.on_reshaped(), true);
  if (!on_reshaped.ok()) return on_reshaped.status();
  o.on_added = *on_added;
  o.on_removed = *on_removed;
  o.on_reshaped = *on_reshaped;
  o.by_name_all = req.by_name_all();
  o.budgets = BudgetsOf(req);
  auto result = store::CheckRun(db, o);
  if (!result.ok()) return result.status();
  ToProto(*result, resp);
  return Status::Ok();
}

Status AnswerListRetraces(store::Database& db, const v1::ListRetracesRequest& req, v1::ListRetracesResponse* resp) {
  if (req.run_name().empty()) return Status::InvalidArgument("run_name is required");
  if (req.min_compiles() < 0 || req.min_compiles() == 1) {
    return Status::InvalidArgument("min_compiles is at least 2 (0 = 2)");
  }
  auto groups = store::ListRetraces(db, req.run_name(), req.min_compiles() > 0 ? req.min_compiles() : 2);
  if (!groups.ok()) return groups.status();
  for (const auto& g : *groups) ToProto(g, resp->add_groups());
  return Status::Ok();
}

Status AnswerReport(store::Database& db, const v1::ReportRequest& request, std::string* html,
                    std::vector<std::string>* notes) {
  if (request.home()) {
    if (!request.run_name().empty() || !request.module().empty() || !request.baseline().empty()) {
      return Status::InvalidArgument("the front page (home) takes no run, module or baseline");
    }
    pages::HomeRequest home;
    home.label_key = request.home_label();
    home.budgets = BudgetsOf(request);
    auto rendered = pages::RenderHomePage(db, home, pages::PageLinks(pages::PageLinks::Mode::kFile));
    if (!rendered.ok()) return rendered.status();
    *html = std::move(*rendered);
    return Status::Ok();
  }
  if (request.run_name().empty()) return Status::InvalidArgument("run_name is required");
  pages::ReportRequest page;
  page.run = request.run_name();
  page.module = request.module();
  page.stage = request.stage();
  if (request.has_xla_module_id()) {
    if (request.xla_module_id() < 0) return Status::InvalidArgument("xla_module_id must not be negative");
    page.xla_module_id = request.xla_module_id();
  }
  page.has_folder = request.has_folder();
  page.folder = request.folder();
  page.baseline = request.baseline();
  page.budgets = BudgetsOf(request);
  if (page.module.empty() && (!page.stage.empty() || page.xla_module_id >= 0 || page.has_folder)) {
    return Status::InvalidArgument("stage, xla_module_id and folder pick a module: name the module too");
  }
  auto rendered = pages::RenderReport(db, page, pages::PageLinks(pages::PageLinks::Mode::kFile));
  if (!rendered.ok()) return rendered.status();
  if (notes != nullptr && !page.module.empty() && page.baseline.empty()) {
    // The module page says the same in its header.
    auto picked = store::TopBuffers(db, page.run, page.module, 0, page.stage, page.xla_module_id,
                                    FolderOf(page.has_folder, page.folder));
    if (picked.ok()) *notes = ModuleNotes(*picked, page.run);
  }
  *html = std::move(*rendered);
  return Status::Ok();
}

}  // namespace xladb::service
