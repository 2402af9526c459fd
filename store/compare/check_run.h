// CheckRun: the CI memory gate. Compares a run with a baseline, module by matched module
// (store/compare/module_match.h), metric by metric (store/facts/module_metrics.h), and gives a verdict; for each
// regressed module, the buffers and source lines that made it worse (store/compare/buffer_attribution.h).
//
// Rules (docs/api.md, "The gate"):
//   * Pairing: identity matching, then the reshaped pairs (same name, stage and folder, most similar entry
//     signatures first; store/compare/reshaped_pairs.h), matched_by "name".
//   * A metric regresses when it grew past both the module's byte and percent tolerances (first matching
//     module limit, else the default; 0 and 0: any growth). Improvements never regress.
//   * Module status: ignored (name matches an ignore pattern); ambiguous (matched by order among several
//     same-key modules, and some compared metric differs: the pairing itself is not certain); reshaped (a
//     reshaped pair, reported; with on_reshaped = judge it is judged like a matched pair instead and
//     `reshaped` marks it); regressed; accepted (regressed, and every regressed metric is covered by an
//     accepted regression); improved (a metric shrank); unchanged; added or removed (no match).
//   * Budgets (store/compare/memory_budget.h): a module of the checked run over the first budget matching its name
//     is over_budget, whatever its comparison said (the comparison's figures and attribution stay). Without
//     a baseline, a gate with budgets lists the budgeted modules as over_budget or within_budget, and its
//     verdict comes from them alone (pass or fail).
//   * Verdict: fail when a module is over its budget, a module regressed, a jit name's compile count grew and
//     that fails, or an added, removed or reshaped module is there under the policy `fail`; else inconclusive
//     when a label:/commit:
//     selector found no baseline, the runs share no backend, either run has no module with a buffer
//     assignment, a module is ambiguous, a file the compared metrics come from (buffer assignment, its values,
//     live ranges, memory-usage report) has an `error` verdict in either run, or an added, removed or
//     reshaped module is there under the policy `inconclusive`; else pass. Added, removed and reshaped
//     modules are reported and do not change the verdict by default.
//
// Contract: read-only statements on the caller's connection, one thread at a time per connection. A
// label:/commit: baseline that finds no run is a verdict (inconclusive), not an error. Errors: kNotFound for
// an unknown checked run or a baseline named by an exact run name that does not exist ("no run named …"),
// kInvalidArgument for bad options (unknown metric, bad pattern, a policy a kind does not take), kIoError for
// database failures. A baseline equal to the run compares the run with itself. No exceptions escape.
#ifndef XLADB_STORE_COMPARE_CHECK_RUN_H_
#define XLADB_STORE_COMPARE_CHECK_RUN_H_

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "base/status.h"
#include "store/compare/buffer_attribution.h"
#include "store/backend/database.h"
#include "store/compare/memory_budget.h"
#include "store/compare/name_rollup.h"

namespace xladb::store {

struct GrowthLimit {
  int64_t max_bytes = 0;      // growth tolerated, bytes
  double max_percent = 0;     // growth tolerated, percent of the baseline value
};

struct ModuleLimit {
  std::string pattern;        // GLOB over module names
  GrowthLimit limit;
};

struct AcceptedRegression {
  std::string pattern;        // GLOB over module names
  std::string metric;         // "" = every metric
  int64_t up_to_bytes = 0;    // accepted while the current value is at most this (0 = any value)
  std::string reason;
};

// What an added, removed or reshaped module does to the verdict. kJudge is for reshaped pairs only.
enum class UnmatchedPolicy { kReport, kJudge, kFail, kInconclusive };

const char* UnmatchedPolicyName(UnmatchedPolicy policy);  // "report", "judge", "fail", "inconclusive"
// The policy of that name; nullopt for anything else.
[[nodiscard]] std::optional<UnmatchedPolicy> ParseUnmatchedPolicy(std::string_view name);

struct CheckOptions {
  std::string run;
  // A run name, `label:KEY=VALUE` (the newest other run with that label at or before the run's time), or
  // `commit:SHA` (the run labelled commit=SHA, or commit=<a unique label starting with SHA, 7+ characters>).
  std::string baseline;
  std::vector<std::string> metrics;  // empty: kDefaultGateMetrics
  GrowthLimit limit;
  std::vector<ModuleLimit> module_limits;
  std::vector<std::string> ignore;
  std::vector<AcceptedRegression> accepted;
  bool fail_on_retrace_growth = false;
  int64_t max_attribution = 20;      // buffer changes listed per regressed module (-1 = all)
  UnmatchedPolicy on_added = UnmatchedPolicy::kReport;     // report, fail or inconclusive
  UnmatchedPolicy on_removed = UnmatchedPolicy::kReport;   // report, fail or inconclusive
  UnmatchedPolicy on_reshaped = UnmatchedPolicy::kReport;  // report, judge, fail or inconclusive
  bool by_name_all = false;          // CheckResult::by_name: every jit name, not only those that changed
  MemoryBudgets budgets;             // store/compare/memory_budget.h; with budgets, `baseline` may be "" (budgets only)
};

struct MetricDelta {
  std::string metric;
  int64_t baseline = -1, current = -1;  // -1 = unknown
  int64_t delta = 0;                    // current - baseline (0 when either is unknown)
  bool regressed = false;
};

struct CheckedModule {
  enum class Status {
    kRegressed, kImproved, kUnchanged, kAdded, kRemoved, kAmbiguous, kAccepted, kIgnored, kReshaped,
    kOverBudget,    // over its memory budget, whatever the baseline says
    kWithinBudget,  // a budgets-only gate (no baseline): within its budget
  };
  Status status = Status::kUnchanged;
  std::string module, stage, folder, entry_signature;
  int64_t xla_module_id = -1, baseline_xla_module_id = -1;
  int64_t module_id = -1, baseline_module_id = -1;  // the stores' module_ids (-1 = absent on that side)
  std::string fingerprint, baseline_fingerprint;
  std::string matched_by;
  std::vector<MetricDelta> metrics;     // in the order of CheckResult::metrics
  std::string accepted_reason;
  std::optional<Attribution> attribution;  // regressed and accepted modules, and reshaped pairs whose figures
                                           // differ; its peak times are those of `peak_metric`
  std::string baseline_entry_signature;    // the baseline module's ("" when added)
  bool reshaped = false;                   // a reshaped pair (matched_by "name"), reported or judged
  std::string peak_metric;                 // whose peak the attribution's peak times are: live_peak_padded_bytes
                                           // when that regressed and XLA's peak_bytes did not, else peak_bytes
  std::string entry_sharding, baseline_entry_sharding;  // ENTRY shardings in each side's identity ("" = none)
  std::optional<BudgetUse> budget;         // the checked run's module against the first budget that matches it
};

struct RetraceChange {
  std::string module, stage, folder;
  int64_t baseline_compiles = 0, current_compiles = 0;
  bool failed = false;
};

// A file with an `error` verdict in either run, matched to its module by the file name's module number and
// name (whether or not that module has a row).
struct ErrorFile {
  std::string run, path, kind, reason;
  std::string module;             // from the file name ("" when it names none)
  int64_t xla_module_id = -1;     // from the file name (-1 when it names none)
  bool judged = false;            // a kind the compared metrics come from: the verdict is left open
};

struct CheckResult {
  enum class Verdict { kPass, kFail, kInconclusive };
  Verdict verdict = Verdict::kInconclusive;
  std::string reason;                    // the verdict in one line
  std::string run, baseline;             // baseline "" when none was found
  std::string baseline_selected_by;      // 'name', 'label:KEY=VALUE' or 'commit:SHA'
  std::vector<std::string> metrics;
  int64_t regressed = 0, improved = 0, unchanged = 0, added = 0, removed = 0, ambiguous = 0, accepted = 0,
          ignored = 0, reshaped = 0, over_budget = 0, within_budget = 0;  // modules by status (reshaped:
                                                                           // reported, not judged)
  std::vector<CheckedModule> modules;    // regressed (largest growth first), ambiguous, reshaped, added, removed,
                                         // accepted, improved, unchanged, ignored
  std::vector<RetraceChange> retraces;   // compile counts that changed
  std::vector<NameRollup> by_name;       // the roll-up by jit name over the compared metrics
  std::vector<ErrorFile> error_files;    // every file with an error verdict in either run
  std::vector<std::string> budget_warnings;  // budgets that match no module of the checked run, in words
  // Every status counted: "0 regressed, 1 improved, 453 unchanged; 4 reshaped, 23 added, 14 removed
  // (reported, not judged)"; "" when there was nothing to compare.
  std::string summary_line;
};

// "pass", "fail" or "inconclusive".
const char* VerdictName(CheckResult::Verdict verdict);

[[nodiscard]] StatusOr<CheckResult> CheckRun(Database& db, const CheckOptions& options);

}  // namespace xladb::store

#endif  // XLADB_STORE_COMPARE_CHECK_RUN_H_
