// Memory budgets for the gate (store/compare/check_run.h): "does the module still fit, and how much room is left?".
// A budget caps one metric (store/facts/module_metrics.h) of the modules whose name matches its GLOB pattern; a
// module takes the first budget that matches it. Over the budget (current > max_bytes) fails the gate
// whatever the baseline says; at or above warn_percent of it, the reports warn.
//
// Pure functions over rows already loaded; thread-safe. Errors are values: kInvalidArgument for a budget
// that names an unknown metric, a bad pattern or a size that is not positive.
#ifndef XLADB_STORE_COMPARE_MEMORY_BUDGET_H_
#define XLADB_STORE_COMPARE_MEMORY_BUDGET_H_

#include <cstdint>
#include <functional>
#include <optional>
#include <string_view>
#include <string>
#include <vector>

#include "base/status.h"
#include "store/compare/module_match.h"

namespace xladb::store {

struct MemoryBudget {
  std::string pattern;   // GLOB over module names; "" = every module
  std::string metric;    // a kModuleMetrics name
  int64_t max_bytes = 0; // > 0
};

inline constexpr double kDefaultBudgetWarnPercent = 90;

// The budgets a gate, a module listing or a page holds modules to, and the share of a budget from which a
// module warns: one policy, so the two travel together.
struct MemoryBudgets {
  std::vector<MemoryBudget> list;  // a module takes the first that matches it
  double warn_percent = kDefaultBudgetWarnPercent;
  bool empty() const { return list.empty(); }
};

// A module measured against its budget.
struct BudgetUse {
  std::string metric;
  int64_t max_bytes = 0;
  int64_t current = -1;  // -1: the module has no figure for the metric (neither over nor warned)
  double percent = 0;    // current / max_bytes × 100 (0 when current is unknown)
  bool over = false;     // current > max_bytes
  bool warn = false;     // not over, and percent >= warn_percent
};

[[nodiscard]] Status CheckBudgetsValid(const MemoryBudgets& budgets);

// The first budget whose pattern matches `module_name`, measured on `metric(name)` (-1 = unknown); nullopt
// when none matches.
[[nodiscard]] std::optional<BudgetUse> MeasureBudget(const MemoryBudgets& budgets, const std::string& module_name,
                                                     const std::function<int64_t(std::string_view)>& metric);
// The same for a module_memory row.
[[nodiscard]] std::optional<BudgetUse> MeasureBudget(const MemoryBudgets& budgets, const ModuleRow& module);

// "budget 'jit_x*' (total_bytes) matches no module of run 'r'" for each budget that matches none of `rows`.
[[nodiscard]] std::vector<std::string> UnmatchedBudgets(const MemoryBudgets& budgets, const std::vector<ModuleRow>& rows,
                                                        const std::string& run);

}  // namespace xladb::store

#endif  // XLADB_STORE_COMPARE_MEMORY_BUDGET_H_
