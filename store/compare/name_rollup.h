// The roll-up by jit name: one row per (name, stage, folder) of two matched runs (store/compare/module_match.h),
// with its compile count on each side and, per metric, the largest value and the sum over its compiles. When
// shapes change and modules are added and removed, this row says what happened to the function as a whole
// ("jit__accumulate_tau_into_window: 8 → 4 compiles, largest total_bytes 41.5 MB → 10.4 MB").
//
// Only modules with a buffer assignment count (the rows of MatchedRuns), like the compile counts of the gate.
// Pure functions over loaded rows; thread-safe.
#ifndef XLADB_STORE_COMPARE_NAME_ROLLUP_H_
#define XLADB_STORE_COMPARE_NAME_ROLLUP_H_

#include <cstdint>
#include <string>
#include <vector>

namespace xladb::store {

class MatchedRuns;

struct MetricRollup {
  std::string metric;
  // -1 where no compile on that side has the figure (the name is absent there, or the metric unknown).
  int64_t baseline_max = -1, current_max = -1, baseline_sum = -1, current_sum = -1;

  // The larger of |change of the max| and |change of the sum|, an unknown side counting 0.
  int64_t change() const;
};

struct NameRollup {
  std::string module, stage, folder;
  int64_t baseline_compiles = 0, current_compiles = 0;
  std::vector<MetricRollup> metrics;  // in the order asked for
  bool changed = false;               // the compile count or a figure differs

  int64_t change() const;             // the largest change() of its metrics
  // The metric to name in one line: the first with the largest change(); nullptr without metrics.
  const MetricRollup* headline() const;
};

// The rows of every (name, stage, folder) of either run: changed rows first, largest change first (then by
// compile count change, then name, stage, folder); unchanged rows after them only with `all`.
[[nodiscard]] std::vector<NameRollup> RollUpByName(const MatchedRuns& runs, const std::vector<std::string>& metrics,
                                                   bool all);

}  // namespace xladb::store

#endif  // XLADB_STORE_COMPARE_NAME_ROLLUP_H_
