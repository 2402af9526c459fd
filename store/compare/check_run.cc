#include "store/compare/check_run.h"

#include <algorithm>
#include <cmath>
#include <optional>
#include <set>
#include <tuple>

#include "base/enum_names.h"
#include "ingest/records/file_verdict.h"
#include "ingest/text/dump_name.h"
#include "store/compare/baseline_selector.h"
#include "store/backend/row_binding.h"
#include "store/compare/module_match.h"
#include "store/facts/module_metrics.h"
#include "store/query/queries.h"
#include "store/query/result_columns.h"
#include "store/query/statement_text.h"

namespace xladb::store {
namespace {

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
  if (Status st = CheckBudgetsValid(o.budgets); !st.ok()) return st;
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

// What a pair's metrics add up to (CompareMetrics).
struct MetricChanges {
  bool regressed = false;            // a metric grew past its limit
  bool all_accepted = true;          // every metric that regressed is an accepted regression
  bool shrank = false, differs = false;
  bool totals_regressed = false, totals_differ = false;  // of the totals (not the peaks)
  bool xla_peak_regressed = false, padded_peak_regressed = false;
};

// The pair's figures as they stand: names and ids from either side, without metrics or a status yet.
CheckedModule DescribePair(const ModuleRow* base, const ModuleRow* cur, const std::string& matched_by) {
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
  return m;
}

// Compares: each metric's delta into m->metrics, regressed where `judged` and past the module's limit (and
// m->accepted_reason from the first acceptance that covers one).
MetricChanges CompareMetrics(const CheckOptions& options, const std::vector<std::string>& metrics,
                             const ModuleRow* base, const ModuleRow* cur, bool judged, CheckedModule* m) {
  const GrowthLimit& limit = LimitFor(options, m->module);
  MetricChanges changes;
  for (const std::string& name : metrics) {
    MetricDelta d;
    d.metric = name;
    d.baseline = base ? base->metric(name) : -1;
    d.current = cur ? cur->metric(name) : -1;
    if (d.baseline >= 0 && d.current >= 0) d.delta = d.current - d.baseline;
    d.regressed = judged && Exceeds(limit, d.baseline, d.delta);
    if (d.regressed) {
      changes.regressed = true;
      changes.xla_peak_regressed |= name == "peak_bytes";
      changes.padded_peak_regressed |= name == "live_peak_padded_bytes";
      if (const AcceptedRegression* a = AcceptanceFor(options, m->module, d)) {
        if (m->accepted_reason.empty()) m->accepted_reason = a->reason;
      } else {
        changes.all_accepted = false;
      }
    }
    changes.totals_regressed |= d.regressed && !IsPeakMetric(name);
    changes.totals_differ |= d.delta != 0 && !IsPeakMetric(name);
    changes.shrank |= d.delta < 0;
    changes.differs |= d.delta != 0;
    m->metrics.push_back(std::move(d));
  }
  return changes;
}

// The module's status from its pairing and its metrics (budgets come after).
CheckedModule::Status StatusOf(const CheckOptions& options, const CheckedModule& m, const ModuleRow* base,
                               const ModuleRow* cur, bool judged, const MetricChanges& changes) {
  using S = CheckedModule::Status;
  if (IsIgnored(options, m.module)) return S::kIgnored;
  if (!base || !cur) return base ? S::kRemoved : S::kAdded;
  if (!judged) return S::kReshaped;
  if (m.matched_by == "order" && changes.differs) return S::kAmbiguous;
  if (changes.regressed) return changes.all_accepted ? S::kAccepted : S::kRegressed;
  return changes.shrank ? S::kImproved : S::kUnchanged;
}

// How a pair's change is attributed to buffers and source lines: buffers at the peak explain a peak, every
// value explains totals. The peak named is the peak of the metric that regressed: the padded live peak's
// time when only it did.
struct Explanation {
  AttributionPair pair;
  bool padded_peak = false;  // name the padded live peak's times
  int64_t baseline_peak_time = -1, current_peak_time = -1;
};

Explanation ExplanationOf(const CheckOptions& options, const ModuleRow& base, const ModuleRow& cur,
                          const MetricChanges& changes) {
  const bool totals = changes.regressed ? changes.totals_regressed : changes.totals_differ;
  Explanation e;
  e.pair = {base.module_id, cur.module_id, totals ? AttributionScope::kValues : AttributionScope::kPeakBuffers,
            options.max_attribution};
  e.padded_peak = changes.padded_peak_regressed && !changes.xla_peak_regressed;
  e.baseline_peak_time = base.live_peak_padded_time;
  e.current_peak_time = cur.live_peak_padded_time;
  return e;
}

void Explain(const Explanation& e, Attribution attribution, CheckedModule* m) {
  m->attribution = std::move(attribution);
  if (e.padded_peak) {
    m->peak_metric = "live_peak_padded_bytes";
    m->attribution->baseline_peak_time = e.baseline_peak_time;
    m->attribution->current_peak_time = e.current_peak_time;
  } else {
    m->peak_metric = "peak_bytes";
  }
}

// One pair (or lone module) of the two runs, judged: compared, given a status and a budget. A pair to be
// explained (regressed, accepted, or reshaped with other figures) says how in *explanation.
CheckedModule CheckPair(const CheckOptions& options, const std::vector<std::string>& metrics, const ModuleRow* base,
                        const ModuleRow* cur, const std::string& matched_by,
                        std::optional<Explanation>* explanation) {
  using S = CheckedModule::Status;
  CheckedModule m = DescribePair(base, cur, matched_by);
  const bool paired = base && cur;
  const bool judged = paired && (!m.reshaped || options.on_reshaped == UnmatchedPolicy::kJudge);
  const MetricChanges changes = CompareMetrics(options, metrics, base, cur, judged, &m);
  m.status = StatusOf(options, m, base, cur, judged, changes);
  if (m.status != S::kAccepted) m.accepted_reason.clear();
  // Regressed and accepted modules are explained; so is a reshaped pair whose figures differ, whatever its
  // status: the buffers say what its new shapes cost. Then the budget, which may override the status.
  const bool explain =
      m.status == S::kRegressed || m.status == S::kAccepted || (m.reshaped && paired && changes.differs);
  if (cur && m.status != S::kIgnored) {
    m.budget = MeasureBudget(options.budgets, *cur);
    if (m.budget && m.budget->over) m.status = S::kOverBudget;
  }
  if (explain) *explanation = ExplanationOf(options, *base, *cur, changes);
  return m;
}

// A dump_files row f of run r; the rest of an ErrorFile comes from its path.
const ResultColumns<ErrorFile> kErrorFileColumns = {
    {"r.name", &ErrorFile::run},
    {"f.path", &ErrorFile::path},
    {"f.kind", &ErrorFile::kind},
    {"COALESCE(f.reason, '')", &ErrorFile::reason},
};

// Every file with an error verdict in either run; judged when the compared metrics come from its kind.
std::vector<ErrorFile> ErrorFiles(SqlConnection& sql, int64_t baseline_run_id, int64_t run_id) {
  static constexpr std::string_view kGateKinds[] = {"buffer_assignment", "buffer_assignment_values", "live_range",
                                                    "memory_usage_report"};
  static constexpr std::string_view kGateArtifacts[] = {"-buffer-assignment.txt", "-buffer-assignment-values.txt",
                                                        "-live-range.txt", "-memory-usage-report.txt"};
  auto q = sql.Prepare(
      "SELECT " + kErrorFileColumns.SelectList() + " FROM dump_files f JOIN runs r ON r.run_id = f.run_id "
      "WHERE f.run_id IN (?, ?) AND f.verdict = ? ORDER BY r.run_time_us, r.run_id, f.path");
  BindRow(*q, baseline_run_id, run_id, ingest::FileVerdictName(ingest::FileVerdict::kError));
  std::vector<ErrorFile> files;
  while (q->Step()) {
    ErrorFile f = kErrorFileColumns.Read(*q);
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
    std::optional<Explanation> none;  // a lone module is not explained
    CheckedModule checked = CheckPair(options, result.metrics, nullptr, &row, "", &none);
    if (!checked.budget) continue;
    if (checked.status != CheckedModule::Status::kOverBudget) checked.status = CheckedModule::Status::kWithinBudget;
    Count(checked.status, &result);
    result.modules.push_back(std::move(checked));
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

std::string JoinBackends(const std::set<std::string>& backends) {
  std::string out;
  for (const auto& b : backends) out += (out.empty() ? "" : "+") + b;
  return out;
}

// Why the matched runs' figures do not compare (either has no module with a buffer assignment, or they share
// no backend), or "" when they do.
std::string WhyNotComparable(const MatchedRuns& runs, const std::string& run, const std::string& baseline) {
  std::set<std::string> backends_base, backends_cur;
  for (const ModuleRow& r : runs.baseline) {
    if (!r.backend.empty()) backends_base.insert(r.backend);
  }
  for (const ModuleRow& r : runs.current) {
    if (!r.backend.empty()) backends_cur.insert(r.backend);
  }
  std::string why;
  if (runs.current.empty()) why = "run '" + run + "' has no module with a buffer assignment";
  if (runs.baseline.empty()) why = "baseline '" + baseline + "' has no module with a buffer assignment";
  bool shared_backend = false;
  for (const std::string& b : backends_cur) shared_backend |= backends_base.count(b) > 0;
  if (!backends_base.empty() && !backends_cur.empty() && !shared_backend) {
    why = "the runs come from different backends (" + JoinBackends(backends_base) + " in '" + baseline + "', " +
          JoinBackends(backends_cur) + " in '" + run + "'): their figures do not compare";
  }
  return why;
}

// Compares every pair (CheckPair) into result->modules, counted, in the module list's order; then attributes
// those to be explained, all together.
Status CheckPairs(Database& db, const CheckOptions& options, const MatchedRuns& runs, CheckResult* result) {
  std::vector<Explanation> explanations;
  std::vector<size_t> explained;  // result->modules[explained[i]] is explained by explanations[i]
  for (const ModulePair& p : runs.pairs) {
    std::optional<Explanation> explanation;
    CheckedModule checked = CheckPair(options, result->metrics, runs.Row(p.baseline_module_id),
                                      runs.Row(p.current_module_id), p.matched_by, &explanation);
    Count(checked.status, result);
    if (explanation) {
      explained.push_back(result->modules.size());
      explanations.push_back(*explanation);
    }
    result->modules.push_back(std::move(checked));
  }
  std::vector<AttributionPair> pairs;
  for (const Explanation& e : explanations) pairs.push_back(e.pair);
  auto attributions = AttributeChanges(db, pairs);
  if (!attributions.ok()) return attributions.status();
  for (size_t i = 0; i < explained.size(); ++i) {
    Explain(explanations[i], std::move((*attributions)[i]), &result->modules[explained[i]]);
  }
  std::stable_sort(result->modules.begin(), result->modules.end(), [](const CheckedModule& x, const CheckedModule& y) {
    if (StatusRank(x.status) != StatusRank(y.status)) return StatusRank(x.status) < StatusRank(y.status);
    if (ChangeSize(x) != ChangeSize(y)) return ChangeSize(x) > ChangeSize(y);
    return KeyLess(x, y);
  });
  return Status::Ok();
}

// The jit names whose compile count changed (retraces; failed where that fails the gate), and the roll-up
// by name (the names that changed, or all of them with by_name_all).
void RollUpNames(const MatchedRuns& runs, const CheckOptions& options, CheckResult* result) {
  std::vector<NameRollup> by_name = RollUpByName(runs, result->metrics, true);
  for (const NameRollup& n : by_name) {
    // A name new or gone is an added or removed module, not a compile count that changed.
    if (n.baseline_compiles == n.current_compiles || n.baseline_compiles == 0 || n.current_compiles == 0) continue;
    RetraceChange c{n.module, n.stage, n.folder, n.baseline_compiles, n.current_compiles, false};
    c.failed = options.fail_on_retrace_growth && !IsIgnored(options, c.module) &&
               c.current_compiles > c.baseline_compiles;
    result->retraces.push_back(std::move(c));
  }
  std::sort(result->retraces.begin(), result->retraces.end(), [](const RetraceChange& a, const RetraceChange& b) {
    return std::tie(a.module, a.stage, a.folder) < std::tie(b.module, b.stage, b.folder);
  });
  for (NameRollup& n : by_name) {
    if (n.changed || options.by_name_all) result->by_name.push_back(std::move(n));
  }
}

// The gate, once its options are valid: find the runs, match their modules, compare and attribute them,
// conclude. SqlError escapes (CheckRun turns it into a Status).
StatusOr<CheckResult> Gate(Database& db, const CheckOptions& options, CheckResult result) {
  StatusOr<CheckedRun> run = FindCheckedRun(db.connection(), options.run);
  if (!run.ok()) return run.status();
  if (options.baseline.empty()) return CheckBudgetsOnly(db, options, run->run_id, std::move(result));
  auto baseline = ResolveBaseline(db.connection(), options.baseline, *run);
  if (!baseline.ok()) return baseline.status();
  result.baseline = baseline->name;
  result.baseline_selected_by = baseline->selected_by;
  if (!baseline->run_id) {
    result.verdict = CheckResult::Verdict::kInconclusive;
    result.reason = "no baseline: " + baseline->missing;
    result.summary_line.clear();
    return result;
  }
  auto runs = LoadMatchedRuns(db, baseline->run_id, run->run_id);
  if (!runs.ok()) return runs.status();
  if (Status checked = CheckPairs(db, options, *runs, &result); !checked.ok()) return checked;
  RollUpNames(*runs, options, &result);
  result.error_files = ErrorFiles(db.connection(), baseline->run_id, run->run_id);
  result.budget_warnings = UnmatchedBudgets(options.budgets, runs->current, options.run);
  Conclude(&result, options, WhyNotComparable(*runs, options.run, baseline->name));
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
  static constexpr UnmatchedPolicy kPolicies[] = {UnmatchedPolicy::kReport, UnmatchedPolicy::kJudge,
                                                  UnmatchedPolicy::kFail, UnmatchedPolicy::kInconclusive};
  return ValueNamed(name, kPolicies, UnmatchedPolicyName);
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
  return CatchSqlErrors("checking run '" + options.run + "'", [&] {
    ReadTransaction snapshot(db.connection());
    return Gate(db, options, std::move(result));
  });
}

}  // namespace xladb::store
