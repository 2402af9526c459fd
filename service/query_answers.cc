#include "service/query_answers.h"

#include "service/pages/report_pages.h"

#include <cctype>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "service/attribution_proto.h"
#include "service/module_notes.h"
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

store::Labels FromProto(const google::protobuf::RepeatedPtrField<v1::Label>& labels) {
  store::Labels out;
  for (const auto& l : labels) out.emplace_back(l.key(), l.value());
  return out;
}

void ToProto(const store::RunInfo& r, v1::Run* out) {
  out->set_name(r.name);
  out->set_source_path(r.source_path);
  out->set_run_time_us(r.run_time_us);
  out->set_run_time_source(r.run_time_source);
  for (const auto& [k, v] : r.labels) {
    auto* l = out->add_labels();
    l->set_key(k);
    l->set_value(v);
  }
  out->set_file_count(r.file_count);
  out->set_ingested_file_count(r.ingested_file_count);
  out->set_error_file_count(r.error_file_count);
  out->set_module_count(r.module_count);
  out->set_created_at_us(r.created_at_us);
  out->set_updated_at_us(r.updated_at_us);
}

store::GrowthLimit FromProto(const v1::GrowthLimit& l) { return {l.max_growth_bytes(), l.max_growth_percent()}; }

void ToProto(const store::BudgetUse& use, v1::BudgetUse* out) {
  out->set_metric(use.metric);
  out->set_max_bytes(use.max_bytes);
  out->set_current(use.current);
  out->set_percent(use.percent);
  out->set_over(use.over);
  out->set_warn(use.warn);
}

v1::CheckedModule::Status ToProto(store::CheckedModule::Status s) {
  using S = store::CheckedModule::Status;
  switch (s) {
    case S::kRegressed: return v1::CheckedModule::REGRESSED;
    case S::kImproved: return v1::CheckedModule::IMPROVED;
    case S::kUnchanged: return v1::CheckedModule::UNCHANGED;
    case S::kAdded: return v1::CheckedModule::ADDED;
    case S::kRemoved: return v1::CheckedModule::REMOVED;
    case S::kAmbiguous: return v1::CheckedModule::AMBIGUOUS;
    case S::kAccepted: return v1::CheckedModule::ACCEPTED;
    case S::kIgnored: return v1::CheckedModule::IGNORED;
    case S::kReshaped: return v1::CheckedModule::RESHAPED;
    case S::kOverBudget: return v1::CheckedModule::OVER_BUDGET;
    case S::kWithinBudget: return v1::CheckedModule::WITHIN_BUDGET;
  }
  return v1::CheckedModule::STATUS_UNSPECIFIED;
}

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

v1::ModuleChange::Change ToProto(store::ModuleDiff::Change c) {
  switch (c) {
    case store::ModuleDiff::Change::kAdded: return v1::ModuleChange::ADDED;
    case store::ModuleDiff::Change::kRemoved: return v1::ModuleChange::REMOVED;
    case store::ModuleDiff::Change::kChanged: return v1::ModuleChange::CHANGED;
    case store::ModuleDiff::Change::kUnchanged: return v1::ModuleChange::UNCHANGED;
  }
  return v1::ModuleChange::CHANGE_UNSPECIFIED;
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
  std::vector<store::MemoryBudget> budgets;
  for (const auto& b : req->budgets()) budgets.push_back({b.pattern(), b.metric(), b.max_bytes()});
  const double warn_percent = req->warn_percent() != 0 ? req->warn_percent() : store::kDefaultBudgetWarnPercent;
  if (Status st = store::CheckBudgetsValid(budgets, warn_percent); !st.ok()) return st;
  auto modules = store::ListModules(db, req->run_name(), options);
  if (!modules.ok()) return modules.status();
  for (const auto& m : modules.value()) {
    auto* out = resp->add_modules();
    out->set_name(m.name);
    out->set_xla_module_id(m.xla_module_id);
    out->set_stage(m.stage);
    out->set_backend(m.backend);
    out->set_fingerprint(m.fingerprint);
    out->set_has_buffer_assignment(m.has_buffer_assignment);
    out->set_peak_bytes(m.peak_bytes);
    out->set_peak_time(m.peak_time);
    out->set_total_bytes(m.total_bytes);
    out->set_parameter_bytes(m.parameter_bytes);
    out->set_output_bytes(m.output_bytes);
    out->set_temp_bytes(m.temp_bytes);
    out->set_allocation_count(m.allocation_count);
    out->set_value_count(m.value_count);
    out->set_instruction_count(m.instruction_count);
    out->set_folder(m.folder);
    out->set_entry_signature(m.entry_signature);
    out->set_identity_key(m.identity_key);
    out->set_live_peak_padded_bytes(m.live_peak_padded_bytes);
    out->set_live_peak_padded_time(m.live_peak_padded_time);
    out->set_color0_total_bytes(m.color0_total_bytes);
    out->set_entry_sharding(m.entry_sharding);
    const auto budget = store::MeasureBudget(budgets, warn_percent, m.name,
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
  for (const auto& p : points.value()) {
    auto* out = resp->add_points();
    out->set_run_name(p.run_name);
    out->set_run_time_us(p.run_time_us);
    out->set_module_name(p.module_name);
    out->set_xla_module_id(p.xla_module_id);
    out->set_stage(p.stage);
    out->set_fingerprint(p.fingerprint);
    out->set_value(p.value);
    out->set_peak_bytes(p.peak_bytes);
    out->set_total_bytes(p.total_bytes);
    out->set_temp_bytes(p.temp_bytes);
    out->set_folder(p.folder);
    out->set_entry_signature(p.entry_signature);
    out->set_identity_key(p.identity_key);
    out->set_has_change(p.has_change);
    out->set_change(p.change);
    out->set_matched_by(p.matched_by);
    out->set_live_peak_padded_bytes(p.live_peak_padded_bytes);
    out->set_entry_sharding(p.entry_sharding);
  }
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
  for (const auto& r : rows.value()) {
    auto* out = resp->add_rates();
    out->set_run_name(r.run_name);
    out->set_run_time_us(r.run_time_us);
    out->set_module_name(r.module_name);
    out->set_kernel(r.kernel);
    out->set_vmem_spills(r.vmem_spills);
    out->set_vmem_fills(r.vmem_fills);
    out->set_smem_spills(r.smem_spills);
    out->set_smem_fills(r.smem_fills);
    out->set_bundles(r.bundles);
    out->set_vmem_spill_rate(r.vmem_spill_rate);
    out->set_vmem_fill_rate(r.vmem_fill_rate);
    out->set_smem_spill_rate(r.smem_spill_rate);
    out->set_smem_fill_rate(r.smem_fill_rate);
  }
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
  resp->set_live_peak_padded_bytes(answer->live_peak_padded_bytes);
  resp->set_live_peak_padded_time(answer->live_peak_padded_time);
  resp->set_at(list == store::PeakList::kPadded ? v1::PEAK_LIST_PADDED : v1::PEAK_LIST_XLA);
  resp->set_list_time(answer->list_time);
  resp->set_total_bytes(answer->total_bytes);
  resp->set_compiles(answer->compiles);
  resp->set_has_memory(answer->has_memory);
  for (const std::string& note : ModuleNotes(*answer, req->run_name())) resp->add_notes(note);
  resp->set_module(answer->module);
  resp->set_stage(answer->stage);
  resp->set_folder(answer->folder);
  resp->set_xla_module_id(answer->xla_module_id);
  resp->set_peak_bytes(answer->peak_bytes);
  resp->set_peak_time(answer->peak_time);
  for (const auto& b : answer->buffers) {
    auto* out = resp->add_buffers();
    out->set_ordinal(b.ordinal);
    out->set_instruction(b.instruction);
    out->set_shape_index(b.shape_index);
    out->set_logical_bytes(b.logical_bytes);
    out->set_value_id(b.value_id);
    out->set_allocation_index(b.allocation_index);
    out->set_size_bytes(b.size_bytes);
    out->set_shape(b.shape);
    out->set_opcode(b.opcode);
    out->set_op_name(b.op_name);
    out->set_source_file(b.source_file);
    out->set_source_line(b.source_line);
    out->set_live_start(b.live_start);
    out->set_live_end(b.live_end);
    out->set_shape_bytes(b.shape_bytes);
  }
  return Status::Ok();
}

namespace {

void ToProto(const store::NameRollup& n, v1::NameRollup* out) {
  out->set_module(n.module);
  out->set_stage(n.stage);
  out->set_folder(n.folder);
  out->set_baseline_compiles(n.baseline_compiles);
  out->set_current_compiles(n.current_compiles);
  out->set_changed(n.changed);
  if (const store::MetricRollup* h = n.headline()) out->set_headline_metric(h->metric);
  for (const auto& m : n.metrics) {
    auto* metric = out->add_metrics();
    metric->set_metric(m.metric);
    metric->set_baseline_max(m.baseline_max);
    metric->set_current_max(m.current_max);
    metric->set_baseline_sum(m.baseline_sum);
    metric->set_current_sum(m.current_sum);
  }
}

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
  for (const auto& m : diff->modules) {
    auto* out = resp->add_modules();
    out->set_change(ToProto(m.change));
    out->set_module_name(m.module_name);
    out->set_stage(m.stage);
    out->set_xla_module_id_a(m.xla_module_id_a);
    out->set_xla_module_id_b(m.xla_module_id_b);
    out->set_fingerprint_a(m.fingerprint_a);
    out->set_fingerprint_b(m.fingerprint_b);
    out->set_peak_a(m.peak_a);
    out->set_peak_b(m.peak_b);
    out->set_total_a(m.total_a);
    out->set_total_b(m.total_b);
    out->set_temp_a(m.temp_a);
    out->set_temp_b(m.temp_b);
    out->set_folder(m.folder);
    out->set_entry_signature(m.entry_signature);
    out->set_matched_by(m.matched_by);
    out->set_live_peak_padded_a(m.live_peak_padded_a);
    out->set_live_peak_padded_b(m.live_peak_padded_b);
    out->set_buffer_changes(m.buffer_changes);
    for (const auto& b : m.buffers) ToProto(b, out->add_buffers());
    for (const auto& s : m.by_source) ToProto(s, out->add_by_source());
    out->set_entry_signature_a(m.entry_signature_a);
  }
  for (const auto& n : diff->by_name) ToProto(n, resp->add_by_name());
  resp->set_added(diff->added);
  resp->set_removed(diff->removed);
  resp->set_changed(diff->changed);
  resp->set_unchanged(diff->unchanged);
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
  for (const auto& b : req.budgets()) o.budgets.push_back({b.pattern(), b.metric(), b.max_bytes()});
  if (req.warn_percent() != 0) o.warn_percent = req.warn_percent();
  auto result = store::CheckRun(db, o);
  if (!result.ok()) return result.status();
  const store::CheckResult& r = *result;
  switch (r.verdict) {
    case store::CheckResult::Verdict::kPass: resp->set_verdict(v1::CheckRunResponse::PASS); break;
    case store::CheckResult::Verdict::kFail: resp->set_verdict(v1::CheckRunResponse::FAIL); break;
    case store::CheckResult::Verdict::kInconclusive: resp->set_verdict(v1::CheckRunResponse::INCONCLUSIVE); break;
  }
  resp->set_reason(r.reason);
  resp->set_run_name(r.run);
  resp->set_baseline_run_name(r.baseline);
  resp->set_baseline_selected_by(r.baseline_selected_by);
  auto* summary = resp->mutable_summary();
  summary->set_regressed(r.regressed);
  summary->set_improved(r.improved);
  summary->set_unchanged(r.unchanged);
  summary->set_added(r.added);
  summary->set_removed(r.removed);
  summary->set_ambiguous(r.ambiguous);
  summary->set_accepted(r.accepted);
  summary->set_ignored(r.ignored);
  summary->set_reshaped(r.reshaped);
  summary->set_over_budget(r.over_budget);
  summary->set_within_budget(r.within_budget);
  resp->set_summary_line(r.summary_line);
  for (const auto& w : r.budget_warnings) resp->add_budget_warnings(w);
  for (const auto& m : r.metrics) resp->add_metrics(m);
  for (const auto& m : r.modules) {
    auto* out = resp->add_modules();
    out->set_module(m.module);
    out->set_stage(m.stage);
    out->set_folder(m.folder);
    out->set_entry_signature(m.entry_signature);
    out->set_xla_module_id(m.xla_module_id);
    out->set_baseline_xla_module_id(m.baseline_xla_module_id);
    out->set_fingerprint(m.fingerprint);
    out->set_baseline_fingerprint(m.baseline_fingerprint);
    out->set_matched_by(m.matched_by);
    out->set_status(ToProto(m.status));
    for (const auto& d : m.metrics) {
      auto* md = out->add_metrics();
      md->set_metric(d.metric);
      md->set_baseline(d.baseline);
      md->set_current(d.current);
      md->set_delta(d.delta);
      md->set_regressed(d.regressed);
    }
    out->set_accepted_reason(m.accepted_reason);
    out->set_baseline_peak_time(-1);
    out->set_current_peak_time(-1);
    out->set_baseline_schedule_length(-1);
    out->set_current_schedule_length(-1);
    if (m.attribution) {
      AttributionToProto(*m.attribution, out);
    }
    out->set_baseline_entry_signature(m.baseline_entry_signature);
    out->set_reshaped(m.reshaped);
    out->set_peak_metric(m.peak_metric);
    out->set_entry_sharding(m.entry_sharding);
    out->set_baseline_entry_sharding(m.baseline_entry_sharding);
    if (m.budget) ToProto(*m.budget, out->mutable_budget());
  }
  for (const auto& n : r.by_name) ToProto(n, resp->add_by_name());
  for (const auto& f : r.error_files) {
    auto* out = resp->add_error_files();
    out->set_run_name(f.run);
    out->set_path(f.path);
    out->set_kind(f.kind);
    out->set_reason(f.reason);
    out->set_module(f.module);
    out->set_xla_module_id(f.xla_module_id);
    out->set_judged(f.judged);
  }
  for (const auto& c : r.retraces) {
    auto* out = resp->add_retraces();
    out->set_module(c.module);
    out->set_stage(c.stage);
    out->set_folder(c.folder);
    out->set_baseline_compiles(c.baseline_compiles);
    out->set_current_compiles(c.current_compiles);
    out->set_failed(c.failed);
  }
  return Status::Ok();
}

Status AnswerListRetraces(store::Database& db, const v1::ListRetracesRequest& req, v1::ListRetracesResponse* resp) {
  if (req.run_name().empty()) return Status::InvalidArgument("run_name is required");
  if (req.min_compiles() < 0 || req.min_compiles() == 1) {
    return Status::InvalidArgument("min_compiles is at least 2 (0 = 2)");
  }
  auto groups = store::ListRetraces(db, req.run_name(), req.min_compiles() > 0 ? req.min_compiles() : 2);
  if (!groups.ok()) return groups.status();
  for (const auto& g : *groups) {
    auto* out = resp->add_groups();
    out->set_module(g.module);
    out->set_stage(g.stage);
    out->set_folder(g.folder);
    out->set_compiles(g.compiles);
    out->set_distinct_signatures(g.distinct_signatures);
    out->set_distinct_fingerprints(g.distinct_fingerprints);
    for (int64_t id : g.xla_module_ids) out->add_xla_module_ids(id);
  }
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
    for (const auto& b : request.budgets()) home.budgets.push_back({b.pattern(), b.metric(), b.max_bytes()});
    if (request.warn_percent() != 0) home.warn_percent = request.warn_percent();
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
  for (const auto& b : request.budgets()) page.budgets.push_back({b.pattern(), b.metric(), b.max_bytes()});
  if (request.warn_percent() != 0) page.warn_percent = request.warn_percent();
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
