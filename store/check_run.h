// CheckRun: the CI memory gate. Compares a run with a baseline, module by matched module
// (store/module_match.h), metric by metric (store/module_metrics.h), and gives a verdict; for each
// regressed module, the buffers and source lines that made it worse (store/buffer_attribution.h).
//
// Rules (docs/api.md, "The gate"):
//   * A metric regresses when it grew past both the module's byte and percent tolerances (first matching
//     module limit, else the default; 0 and 0: any growth). Improvements never regress.
//   * Module status: ignored (name matches an ignore pattern); ambiguous (matched by order among several
//     same-key modules, and some compared metric differs: the pairing itself is not certain); regressed; accepted
//     (regressed, and every regressed metric is covered by an accepted regression); improved (a metric
//     shrank); unchanged; added or removed (no match).
//   * Verdict: fail when a module regressed, or a jit name's compile count grew and that fails; else
//     inconclusive when there is no baseline, the runs share no backend, or a module is added, removed or
//     ambiguous; else pass.
//
// Contract: read-only statements on the caller's connection, one thread at a time per connection. A missing
// baseline is a verdict (inconclusive), not an error. Errors: kNotFound for an unknown checked run,
// kInvalidArgument for bad options (unknown metric, bad pattern, a baseline equal to the run), kIoError for
// database failures. No exceptions escape.
#ifndef XLADB_STORE_CHECK_RUN_H_
#define XLADB_STORE_CHECK_RUN_H_

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "ingest/status.h"
#include "store/buffer_attribution.h"
#include "store/database.h"

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
};

struct MetricDelta {
  std::string metric;
  int64_t baseline = -1, current = -1;  // -1 = unknown
  int64_t delta = 0;                    // current - baseline (0 when either is unknown)
  bool regressed = false;
};

struct CheckedModule {
  enum class Status { kRegressed, kImproved, kUnchanged, kAdded, kRemoved, kAmbiguous, kAccepted, kIgnored };
  Status status = Status::kUnchanged;
  std::string module, stage, folder, entry_signature;
  int64_t xla_module_id = -1, baseline_xla_module_id = -1;
  int64_t module_id = -1, baseline_module_id = -1;  // the stores' module_ids (-1 = absent on that side)
  std::string fingerprint, baseline_fingerprint;
  std::string matched_by;
  std::vector<MetricDelta> metrics;     // in the order of CheckResult::metrics
  std::string accepted_reason;
  std::optional<Attribution> attribution;  // regressed and accepted modules
};

struct RetraceChange {
  std::string module, stage, folder;
  int64_t baseline_compiles = 0, current_compiles = 0;
  bool failed = false;
};

struct CheckResult {
  enum class Verdict { kPass, kFail, kInconclusive };
  Verdict verdict = Verdict::kInconclusive;
  std::string reason;                    // the verdict in one line
  std::string run, baseline;             // baseline "" when none was found
  std::string baseline_selected_by;      // 'name', 'label:KEY=VALUE' or 'commit:SHA'
  std::vector<std::string> metrics;
  int64_t regressed = 0, improved = 0, unchanged = 0, added = 0, removed = 0, ambiguous = 0, accepted = 0,
          ignored = 0;
  std::vector<CheckedModule> modules;    // regressed (largest growth first), ambiguous, added, removed, accepted,
                                         // improved, unchanged, ignored
  std::vector<RetraceChange> retraces;   // compile counts that changed
};

StatusOr<CheckResult> CheckRun(Database& db, const CheckOptions& options);

}  // namespace xladb::store

#endif  // XLADB_STORE_CHECK_RUN_H_
