#include "store/compare/check_run.h"

#include <algorithm>
#include <cmath>
#include <set>
#include <tuple>

#include "ingest/text/dump_name.h"
#include "store/compare/module_match.h"
#include "store/facts/module_metrics.h"
#include "store/query/queries.h"
#include "store/query/statement_text.h"

namespace xladb::store {
namespace {

struct Baseline {
  int64_t run_id = 0;       // 0: none found
  std::string name;
  std::string selected_by;
  std::string missing;      // why none was found
};

struct RunRef {
  int64_t run_id = 0;
  int64_t run_time_us = 0;
};

StatusOr<Baseline> ResolveBaseline(SqlConnection& sql, const std::string& selector, const RunRef& run) {
  Baseline b;
  auto pick = [&](SqlStatement& q) {
    if (q.Step()) {
      b.run_id = q.Int(0);
      b.name = q.Text(1);
    }
  };
  if (selector.rfind("label:", 0) == 0) {
    const std::string kv = selector.substr(6);
    const size_t eq = kv.find('=');
    if (eq == std::string::npos || eq == 0) {
      return Status::InvalidArgument("baseline '" + selector + "': a label selector is label:KEY=VALUE");
    }
    b.selected_by = selector;
    auto q = sql.Prepare(
                        "SELECT r.run_id, r.name FROM runs r JOIN run_labels l ON l.run_id = r.run_id "
                        "WHERE l.key = ? AND l.value = ? AND r.run_time_us <= ? AND r.run_id <> ? "
                        "ORDER BY r.run_time_us DESC, r.run_id DESC LIMIT 1");
    q->Bind(1, kv.substr(0, eq));
    q->Bind(2, kv.substr(eq + 1));
    q->Bind(3, run.run_time_us);
    q->Bind(4, run.run_id);
    pick(*q);
    if (!b.run_id) b.missing = "no run labelled " + kv + " at or before the checked run's time";
    return b;
  }
  if (selector.rfind("commit:", 0) == 0) {
    const std::string sha = selector.substr(7);
    if (sha.empty() || sha.find_first_not_of("0123456789abcdefABCDEF") != std::string::npos) {
      return Status::InvalidArgument("baseline '" + selector + "': commit:SHA takes a hex commit sha");
    }
    b.selected_by = selector;
    auto exact = sql.Prepare(
                            "SELECT r.run_id, r.name FROM runs r JOIN run_labels l ON l.run_id = r.run_id "
                            "WHERE l.key = 'commit' AND l.value = ? AND r.run_id <> ? "
                            "ORDER BY r.run_time_us DESC, r.run_id DESC LIMIT 1");
    exact->Bind(1, sha);
    exact->Bind(2, run.run_id);
    pick(*exact);
    if (b.run_id) return b;
    if (sha.size() >= 7) {
      auto commits = sql.Prepare(
                                "SELECT COUNT(DISTINCT l.value) FROM run_labels l "
                                "WHERE l.key = 'commit' AND substr(l.value, 1, ?) = ? AND l.run_id <> ?");
      commits->Bind(1, static_cast<int64_t>(sha.size()));
      commits->Bind(2, sha);
      commits->Bind(3, run.run_id);
      const int64_t n = commits->Step() ? commits->Int(0) : 0;
      if (n > 1) {
        b.missing = "commit prefix " + sha + " matches " + std::to_string(n) + " commits; give more of the sha";
        return b;
      }
      auto prefix = sql.Prepare(
                               "SELECT r.run_id, r.name FROM runs r JOIN run_labels l ON l.run_id = r.run_id "
                               "WHERE l.key = 'commit' AND substr(l.value, 1, ?) = ? AND r.run_id <> ? "
                               "ORDER BY r.run_time_us DESC, r.run_id DESC LIMIT 1");
      prefix->Bind(1, static_cast<int64_t>(sha.size()));
      prefix->Bind(2, sha);
      prefix->Bind(3, run.run_id);
      pick(*prefix);
      if (b.run_id) return b;
    }
    b.missing = "no run labelled commit=" + sha;
    return b;
  }
  b.selected_by = "name";
  auto q = sql.Prepare("SELECT run_id, name FROM runs WHERE name = ?");
  q->Bind(1, selector);
  pick(*q);
  if (!b.run_id) return Status::NotFound("no run named '" + selector + "' (the baseline)");
  return b;
}

const GrowthLimit& LimitFor(const CheckOptions& o, const std::string& module) {
  for (const ModuleLimit& m : o.module_limits) {
    if (NameMatches(m.pattern, module)) return m.limit;
  }
  return o.limit;
}

bool Exceeds(const GrowthLimit& limit, int64_t baseline, int64_t delta) {
  if (delta <= 0 || delta <= limit.max_bytes) return false;
  if (baseline <= 0) return true;  // growth from nothing is past any percent
  return 100.0 * static_cast<double>(delta) / static_cast<double>(baseline) > limit.max_percent;
}

bool IsIgnored(const CheckOptions& o, const std::string& module) {
  for (const std::string& pattern : o.ignore) {
    if (NameMatches(pattern, module)) return true;
  }
  return false;
}

const AcceptedRegression* AcceptanceFor(const CheckOptions& o, const std::string& module, const MetricDelta& m) {
  for (const AcceptedRegression& a : o.accepted) {
    if (!NameMatches(a.pattern, module)) continue;
    if (!a.metric.empty() && a.metric != m.metric) continue;
    if (a.up_to_bytes > 0 && m.current > a.up_to_bytes) continue;
    return &a;
  }
  return nullptr;
}

int StatusRank(CheckedModule::Status s) {
  using S = CheckedModule::Status;
  switch (s) {
    case S::kOverBudget: return -1;
    case S::kRegressed: return 0;
    case S::kAmbiguous: return 1;
    case S::kReshaped: return 2;
    case S::kAdded: return 3;
    case S::kRemoved: return 4;
    case S::kAccepted: return 5;
    case S::kImproved: return 6;
    case S::kUnchanged: return 7;
    case S::kIgnored: return 8;
    case S::kWithinBudget: return 9;
  }
  return 8;
}

// The last tie-break of the module list: name, stage, folder, module number.
bool KeyLess(const CheckedModule& x, const CheckedModule& y) {
  return std::tie(x.module, x.stage, x.folder, x.xla_module_id) < std::tie(y.module, y.stage, y.folder, y.xla_module_id);
}

// The size of a module's change, for ordering: its largest growth (regressed) or |change| (others).
int64_t ChangeSize(const CheckedModule& m) {
  int64_t size = 0;
  for (const MetricDelta& d : m.metrics) size = std::max(size, std::abs(d.delta));
  return size;
}

Status CheckOptionsValid(const CheckOptions& o, const std::vector<std::string>& metrics) {
  for (const std::string& m : metrics) {
    if (!FindModuleMetric(m)) {
      return Status::InvalidArgument("unknown metric '" + m + "' (known: " + ModuleMetricNames() + ")");
    }
  }
  if (o.limit.max_bytes < 0 || o.limit.max_percent < 0 || std::isnan(o.limit.max_percent)) {
    return Status::InvalidArgument("growth limits must not be negative");
  }
  for (const std::string& p : o.ignore) {
    if (Status st = CheckGlobPattern(p, "ignore"); !st.ok()) return st;
  }
  for (const ModuleLimit& l : o.module_limits) {
    if (Status st = CheckGlobPattern(l.pattern, "module limit"); !st.ok()) return st;
    if (l.limit.max_bytes < 0 || l.limit.max_percent < 0) {
      return Status::InvalidArgument("module limit '" + l.pattern + "': growth limits must not be negative");
    }
  }
  if (o.on_added == UnmatchedPolicy::kJudge || o.on_removed == UnmatchedPolicy::kJudge) {
    return Status::InvalidArgument(
        "on_added and on_removed are report, fail or inconclusive (judge is for on_reshaped)");
  }
  if (Status st = CheckBudgetsValid(o.budgets, o.warn_percent); !st.ok()) return st;
  for (const AcceptedRegression& a : o.accepted) {
    if (Status st = CheckGlobPattern(a.pattern, "accepted regression"); !st.ok()) return st;
    if (a.reason.empty()) return Status::InvalidArgument("accepted regression '" + a.pattern + "' needs a reason");
    if (a.up_to_bytes < 0) {
      return Status::InvalidArgument("accepted regression '" + a.pattern + "': up_to_bytes must not be negative");
    }
    if (!a.metric.empty() && !FindModuleMetric(a.metric)) {
      return Status::InvalidArgument("accepted regression '" + a.pattern + "': unknown metric '" + a.metric + "'");
    }
  }
  return Status::Ok();
}

std::string Plural(int64_t n, const char* one, const char* many) {
  return std::to_string(n) + " " + (n == 1 ? one : many);
}

void Count(CheckedModule::Status status, CheckResult* r) {
  using S = CheckedModule::Status;
  switch (status) {
    case S::kRegressed: ++r->regressed; break;
    case S::kImproved: ++r->improved; break;
    case S::kUnchanged: ++r->unchanged; break;
    case S::kAdded: ++r->added; break;
    case S::kRemoved: ++r->removed; break;
    case S::kAmbiguous: ++r->ambiguous; break;
    case S::kAccepted: ++r->accepted; break;
    case S::kIgnored: ++r->ignored; break;
    case S::kReshaped: ++r->reshaped; break;
    case S::kOverBudget: ++r->over_budget; break;
    case S::kWithinBudget: ++r->within_budget; break;
  }
}

// One pair (or lone module) of the two runs, judged: its metrics, status and attribution.
StatusOr<CheckedModule> CheckPair(Database& db, const CheckOptions& options, const std::vector<std::string>& metrics,
                                  const ModuleRow* base, const ModuleRow* cur, const std::string& matched_by) {
  using S = CheckedModule::Status;
  const ModuleRow& any = cur ? *cur : *base;
  CheckedModule m;
  m.module = any.name;
  m.stage = any.stage;
  m.folder = any.folder;
  m.entry_signature = any.entry_signature;
  m.entry_sharding = any.entry_sharding;
  m.matched_by = matched_by;
  m.reshaped = matched_by == "name";
  if (cur) {
    m.xla_module_id = cur->xla_module_id;
    m.module_id = cur->module_id;
    m.fingerprint = cur->fingerprint;
  }
  if (base) {
    m.baseline_xla_module_id = base->xla_module_id;
    m.baseline_module_id = base->module_id;
    m.baseline_fingerprint = base->fingerprint;
    m.baseline_entry_signature = base->entry_signature;
    m.baseline_entry_sharding = base->entry_sharding;
  }
  const bool judged = base && cur && (!m.reshaped || options.on_reshaped == UnmatchedPolicy::kJudge);
  const GrowthLimit& limit = LimitFor(options, m.module);
  bool regressed = false, shrank = false, differs = false, all_accepted = true;
  bool totals_regressed = false, totals_differ = false;
  bool xla_peak_regressed = false, padded_peak_regressed = false;
  for (const std::string& name : metrics) {
    MetricDelta d;
    d.metric = name;
    d.baseline = base ? base->metric(name) : -1;
    d.current = cur ? cur->metric(name) : -1;
    if (d.baseline >= 0 && d.current >= 0) d.delta = d.current - d.baseline;
    d.regressed = judged && Exceeds(limit, d.baseline, d.delta);
    if (d.regressed) {
      regressed = true;
      xla_peak_regressed |= name == "peak_bytes";
      padded_peak_regressed |= name == "live_peak_padded_bytes";
      if (const AcceptedRegression* a = AcceptanceFor(options, m.module, d)) {
        if (m.accepted_reason.empty()) m.accepted_reason = a->reason;
      } else {
        all_accepted = false;
      }
    }
    totals_regressed |= d.regressed && !IsPeakMetric(name);
    totals_differ |= d.delta != 0 && !IsPeakMetric(name);
    shrank |= d.delta < 0;
    differs |= d.delta != 0;
    m.metrics.push_back(std::move(d));
  }
  if (IsIgnored(options, m.module)) {
    m.status = S::kIgnored;
  } else if (!base || !cur) {
    m.status = base ? S::kRemoved : S::kAdded;
  } else if (!judged) {
    m.status = S::kReshaped;
  } else if (matched_by == "order" && differs) {
    m.status = S::kAmbiguous;
  } else if (regressed) {
    m.status = all_accepted ? S::kAccepted : S::kRegressed;
  } else {
    m.status = shrank ? S::kImproved : S::kUnchanged;
  }
  if (m.status != S::kAccepted) m.accepted_reason.clear();
  // Regressed and accepted modules are explained; so is a reshaped pair whose figures differ, whatever its
  // status: the buffers say what its new shapes cost. Then the budget, which may override the status.
  const bool explain = m.status == S::kRegressed || m.status == S::kAccepted || (m.reshaped && base && cur && differs);
  if (cur && m.status != S::kIgnored) {
    m.budget = MeasureBudget(options.budgets, options.warn_percent, *cur);
    if (m.budget && m.budget->over) m.status = S::kOverBudget;
  }
  if (!explain) return m;
  // Buffers at the peak explain a peak; every value explains totals.
  const bool totals = regressed ? totals_regressed : totals_differ;
  auto attribution = AttributeChange(db, base->module_id, cur->module_id,
                                     totals ? AttributionScope::kValues : AttributionScope::kPeakBuffers,
                                     options.max_attribution);
  if (!attribution.ok()) return attribution.status();
  m.attribution = std::move(*attribution);
  // The peak named is the peak of the metric that regressed: the padded live peak's time when only it did.
  if (padded_peak_regressed && !xla_peak_regressed) {
    m.peak_metric = "live_peak_padded_bytes";
    m.attribution->baseline_peak_time = base->live_peak_padded_time;
    m.attribution->current_peak_time = cur->live_peak_padded_time;
  } else {
    m.peak_metric = "peak_bytes";
  }
  return m;
}

// Every file with an error verdict in either run; judged when the compared metrics come from its kind.
StatusOr<std::vector<ErrorFile>> ErrorFiles(SqlConnection& sql, int64_t baseline_run_id, int64_t run_id) {
  static constexpr std::string_view kGateKinds[] = {"buffer_assignment", "buffer_assignment_values", "live_range",
                                                    "memory_usage_report"};
  static constexpr std::string_view kGateArtifacts[] = {"-buffer-assignment.txt", "-buffer-assignment-values.txt",
                                                        "-live-range.txt", "-memory-usage-report.txt"};
  auto q = sql.Prepare(
      "SELECT r.name, f.path, f.kind, COALESCE(f.reason, '') FROM dump_files f JOIN runs r ON r.run_id = f.run_id "
      "WHERE f.run_id IN (?, ?) AND f.verdict = 'error' ORDER BY r.run_time_us, r.run_id, f.path");
  q->Bind(1, baseline_run_id);
  q->Bind(2, run_id);
  std::vector<ErrorFile> files;
  while (q->Step()) {
    ErrorFile f;
    f.run = q->Text(0);
    f.path = q->Text(1);
    f.kind = q->Text(2);
    f.reason = q->Text(3);
    const size_t slash = f.path.rfind('/');
    const ingest::DumpName name = ingest::ParseDumpName(slash == std::string::npos ? f.path : f.path.substr(slash + 1));
    f.module = name.module_name;
    f.xla_module_id = name.xla_module_id;
    for (std::string_view k : kGateKinds) f.judged |= f.kind == k;
    for (std::string_view a : kGateArtifacts) f.judged |= name.artifact == a;
    files.push_back(std::move(f));
  }
  return files;
}

// The summary line: the judged statuses, then the added, removed and reshaped modules grouped by what
// their policy makes of them.
std::string SummaryLine(const CheckResult& r, const CheckOptions& o) {
  std::string line = o.budgets.empty() ? std::string() : std::to_string(r.over_budget) + " over budget, ";
  if (r.baseline.empty()) return line + std::to_string(r.within_budget) + " within budget (budgets only, no baseline)";
  line += std::to_string(r.regressed) + " regressed, " + std::to_string(r.improved) + " improved, " +
          std::to_string(r.unchanged) + " unchanged";
  if (r.accepted) line += ", " + std::to_string(r.accepted) + " accepted";
  if (r.ambiguous) line += ", " + std::to_string(r.ambiguous) + " ambiguous";
  if (r.ignored) line += ", " + std::to_string(r.ignored) + " ignored";
  // Judged only under on_reshaped = judge: a reshaped pair over its budget has the status over_budget whatever
  // the policy, and is counted there.
  int64_t judged_reshaped = 0;
  for (const CheckedModule& m : r.modules) {
    judged_reshaped += m.reshaped && o.on_reshaped == UnmatchedPolicy::kJudge;
  }
  if (judged_reshaped) line += "; " + std::to_string(judged_reshaped) + " reshaped (judged)";
  struct Group {
    UnmatchedPolicy policy;
    const char* note;
  };
  for (const Group& g : {Group{UnmatchedPolicy::kReport, "reported, not judged"},
                         Group{UnmatchedPolicy::kFail, "fail the gate"},
                         Group{UnmatchedPolicy::kInconclusive, "leave the verdict open"}}) {
    std::string part;
    auto add = [&](UnmatchedPolicy policy, int64_t n, const char* what) {
      if (policy == g.policy) part += (part.empty() ? "" : ", ") + std::to_string(n) + " " + what;
    };
    add(o.on_reshaped, r.reshaped, "reshaped");
    add(o.on_added, r.added, "added");
    add(o.on_removed, r.removed, "removed");
    if (!part.empty()) line += "; " + part + " (" + g.note + ")";
  }
  return line;
}

void Conclude(CheckResult* r, const CheckOptions& o, const std::string& inconclusive_reason) {
  using V = CheckResult::Verdict;
  using P = UnmatchedPolicy;
  int64_t failed_retraces = 0;
  for (const RetraceChange& c : r->retraces) failed_retraces += c.failed;
  int64_t judged_errors = 0;
  for (const ErrorFile& f : r->error_files) judged_errors += f.judged;
  r->summary_line = SummaryLine(*r, o);
  const std::string counts = r->summary_line + (r->baseline.empty() ? "" : " against " + r->baseline);
  std::vector<std::string> fails, open;
  if (r->over_budget > 0) fails.push_back(Plural(r->over_budget, "module over budget", "modules over budget"));
  if (r->regressed > 0) fails.push_back(Plural(r->regressed, "module regressed", "modules regressed"));
  if (failed_retraces > 0) fails.push_back(Plural(failed_retraces, "jit name", "jit names") + " compiled more often");
  struct Unmatched {
    UnmatchedPolicy policy;
    int64_t count;
    const char* one;
    const char* many;
  };
  std::vector<std::string> unmatched_open;
  for (const Unmatched& u : {Unmatched{o.on_added, r->added, "module added", "modules added"},
                             Unmatched{o.on_removed, r->removed, "module removed", "modules removed"},
                             Unmatched{o.on_reshaped, r->reshaped, "module reshaped", "modules reshaped"}}) {
    if (u.count == 0) continue;
    if (u.policy == P::kFail) fails.push_back(Plural(u.count, u.one, u.many));
    if (u.policy == P::kInconclusive) unmatched_open.push_back(Plural(u.count, u.one, u.many));
  }
  if (!inconclusive_reason.empty()) open.push_back(inconclusive_reason);
  if (r->ambiguous > 0) {
    open.push_back(Plural(r->ambiguous, "module", "modules") + " matched only by order with other figures (ambiguous)");
  }
  if (judged_errors > 0) {
    std::string modules;
    for (const ErrorFile& f : r->error_files) {
      if (!f.judged) continue;
      const std::string name = f.module + (f.xla_module_id >= 0 ? "#" + std::to_string(f.xla_module_id) : "");
      modules += (modules.empty() ? "" : ", ") + (name.empty() ? f.path : name) + " in '" + f.run + "'";
    }
    open.push_back(Plural(judged_errors, "file", "files") +
                   " the compared metrics come from could not be read (error verdict): missing data for " + modules);
  }
  open.insert(open.end(), unmatched_open.begin(), unmatched_open.end());
  auto join = [](const std::vector<std::string>& parts) {
    std::string out;
    for (const std::string& p : parts) out += (out.empty() ? "" : "; ") + p;
    return out;
  };
  if (!fails.empty()) {
    r->verdict = V::kFail;
    r->reason = counts + " (fails: " + join(fails) + ")";
  } else if (!open.empty()) {
    r->verdict = V::kInconclusive;
    r->reason = counts + " (inconclusive: " + join(open) + ")";
  } else {
    r->verdict = V::kPass;
    r->reason = counts;
  }
}

// A gate with budgets and no baseline: the checked run's budgeted modules, over or within their budget; the
// verdict from them alone.
StatusOr<CheckResult> CheckBudgetsOnly(Database& db, const CheckOptions& options, int64_t run_id, CheckResult result) {
  if (options.budgets.empty()) {
    return Status::InvalidArgument("a check needs a baseline, or budgets to hold the run to");
  }
  Conditions where;
  where.Add("mm.run_id = ?", run_id);
  auto rows = LoadModuleRows(db, where);
  if (!rows.ok()) return rows.status();
  for (const ModuleRow& row : *rows) {
    if (IsIgnored(options, row.name)) continue;
    // A lone module, as an added one is described: its figures and budget (over_budget when over it).
    auto checked = CheckPair(db, options, result.metrics, nullptr, &row, "");
    if (!checked.ok()) return checked.status();
    if (!checked->budget) continue;
    if (checked->status != CheckedModule::Status::kOverBudget) checked->status = CheckedModule::Status::kWithinBudget;
    Count(checked->status, &result);
    result.modules.push_back(std::move(*checked));
  }
  std::stable_sort(result.modules.begin(), result.modules.end(), [](const CheckedModule& x, const CheckedModule& y) {
    if (StatusRank(x.status) != StatusRank(y.status)) return StatusRank(x.status) < StatusRank(y.status);
    if (x.budget->percent != y.budget->percent) return x.budget->percent > y.budget->percent;
    return KeyLess(x, y);
  });
  result.budget_warnings = UnmatchedBudgets(options.budgets, *rows, options.run);
  Conclude(&result, options, "");
  return result;
}

}  // namespace

const char* UnmatchedPolicyName(UnmatchedPolicy policy) {
  switch (policy) {
    case UnmatchedPolicy::kReport: return "report";
    case UnmatchedPolicy::kJudge: return "judge";
    case UnmatchedPolicy::kFail: return "fail";
    case UnmatchedPolicy::kInconclusive: return "inconclusive";
  }
  return "report";
}

std::optional<UnmatchedPolicy> ParseUnmatchedPolicy(std::string_view name) {
  for (UnmatchedPolicy p : {UnmatchedPolicy::kReport, UnmatchedPolicy::kJudge, UnmatchedPolicy::kFail,
                            UnmatchedPolicy::kInconclusive}) {
    if (name == UnmatchedPolicyName(p)) return p;
  }
  return std::nullopt;
}

const char* VerdictName(CheckResult::Verdict verdict) {
  switch (verdict) {
    case CheckResult::Verdict::kPass: return "pass";
    case CheckResult::Verdict::kFail: return "fail";
    case CheckResult::Verdict::kInconclusive: return "inconclusive";
  }
  return "?";
}

StatusOr<CheckResult> CheckRun(Database& db, const CheckOptions& options) {
  CheckResult result;
  result.run = options.run;
  if (options.metrics.empty()) {
    for (std::string_view m : kDefaultGateMetrics) result.metrics.emplace_back(m);
  } else {
    result.metrics = options.metrics;
  }
  if (Status st = CheckOptionsValid(options, result.metrics); !st.ok()) return st;
  return CatchSqlErrors("checking run '" + options.run + "'", [&]() -> StatusOr<CheckResult> {
    auto run_q = db.connection().Prepare("SELECT run_id, run_time_us FROM runs WHERE name = ?");
    run_q->Bind(1, options.run);
    if (!run_q->Step()) return Status::NotFound("run '" + options.run + "' not found");
    const RunRef run{run_q->Int(0), run_q->Int(1)};
    if (options.baseline.empty()) return CheckBudgetsOnly(db, options, run.run_id, std::move(result));
    auto baseline = ResolveBaseline(db.connection(), options.baseline, run);
    if (!baseline.ok()) return baseline.status();
    result.baseline = baseline->name;
    result.baseline_selected_by = baseline->selected_by;
    if (!baseline->run_id) {
      result.verdict = CheckResult::Verdict::kInconclusive;
      result.reason = "no baseline: " + baseline->missing;
      result.summary_line.clear();
      return result;
    }

    auto runs = LoadMatchedRuns(db, baseline->run_id, run.run_id);
    if (!runs.ok()) return runs.status();
    std::set<std::string> backends_base, backends_cur;
    for (const ModuleRow& r : runs->baseline) {
      if (!r.backend.empty()) backends_base.insert(r.backend);
    }
    for (const ModuleRow& r : runs->current) {
      if (!r.backend.empty()) backends_cur.insert(r.backend);
    }
    std::string inconclusive;
    if (runs->current.empty()) inconclusive = "run '" + options.run + "' has no module with a buffer assignment";
    if (runs->baseline.empty()) {
      inconclusive = "baseline '" + baseline->name + "' has no module with a buffer assignment";
    }
    bool shared_backend = false;
    for (const std::string& b : backends_cur) shared_backend |= backends_base.count(b) > 0;
    if (!backends_base.empty() && !backends_cur.empty() && !shared_backend) {
      auto join = [](const std::set<std::string>& s) {
        std::string out;
        for (const auto& b : s) out += (out.empty() ? "" : "+") + b;
        return out;
      };
      inconclusive = "the runs come from different backends (" + join(backends_base) + " in '" + baseline->name +
                     "', " + join(backends_cur) + " in '" + options.run + "'): their figures do not compare";
    }

    for (const ModulePair& p : runs->pairs) {
      auto checked = CheckPair(db, options, result.metrics, runs->Row(p.baseline_module_id),
                               runs->Row(p.current_module_id), p.matched_by);
      if (!checked.ok()) return checked.status();
      Count(checked->status, &result);
      result.modules.push_back(std::move(*checked));
    }
    std::stable_sort(result.modules.begin(), result.modules.end(), [](const CheckedModule& x, const CheckedModule& y) {
      if (StatusRank(x.status) != StatusRank(y.status)) return StatusRank(x.status) < StatusRank(y.status);
      if (ChangeSize(x) != ChangeSize(y)) return ChangeSize(x) > ChangeSize(y);
      return KeyLess(x, y);
    });

    std::vector<NameRollup> by_name = RollUpByName(*runs, result.metrics, true);
    for (const NameRollup& n : by_name) {
      // A name new or gone is an added or removed module, not a compile count that changed.
      if (n.baseline_compiles == n.current_compiles || n.baseline_compiles == 0 || n.current_compiles == 0) continue;
      RetraceChange c{n.module, n.stage, n.folder, n.baseline_compiles, n.current_compiles, false};
      c.failed = options.fail_on_retrace_growth && !IsIgnored(options, c.module) &&
                 c.current_compiles > c.baseline_compiles;
      result.retraces.push_back(std::move(c));
    }
    std::sort(result.retraces.begin(), result.retraces.end(), [](const RetraceChange& a, const RetraceChange& b) {
      return std::tie(a.module, a.stage, a.folder) < std::tie(b.module, b.stage, b.folder);
    });
    for (NameRollup& n : by_name) {
      if (n.changed || options.by_name_all) result.by_name.push_back(std::move(n));
    }
    auto errors = ErrorFiles(db.connection(), baseline->run_id, run.run_id);
    if (!errors.ok()) return errors.status();
    result.error_files = std::move(*errors);
    result.budget_warnings = UnmatchedBudgets(options.budgets, runs->current, options.run);
    Conclude(&result, options, inconclusive);
    return result;
  });
}

}  // namespace xladb::store
