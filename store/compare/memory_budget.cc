#include "store/compare/memory_budget.h"

#include <cmath>

#include "store/facts/module_metrics.h"
#include "store/query/name_pattern.h"

namespace xladb::store {
namespace {

bool Matches(const MemoryBudget& b, const std::string& name) {
  return b.pattern.empty() || NameMatches(b.pattern, name);
}

std::string Named(const MemoryBudget& b) {
  return "budget '" + (b.pattern.empty() ? std::string("*") : b.pattern) + "' (" + b.metric + ")";
}

}  // namespace

Status CheckBudgetsValid(const MemoryBudgets& budgets) {
  if (std::isnan(budgets.warn_percent) || budgets.warn_percent < 0) {
    return Status::InvalidArgument("warn_percent must be a number >= 0");
  }
  for (const MemoryBudget& b : budgets.list) {
    if (!b.pattern.empty()) {
      if (Status st = CheckGlobPattern(b.pattern, "budget"); !st.ok()) return st;
    }
    if (!FindModuleMetric(b.metric)) {
      return Status::InvalidArgument(Named(b) + ": unknown metric '" + b.metric + "' (known: " + ModuleMetricNames() +
                                     ")");
    }
    if (b.max_bytes <= 0) return Status::InvalidArgument(Named(b) + ": max_bytes must be more than 0");
  }
  return Status::Ok();
}

std::optional<BudgetUse> MeasureBudget(const MemoryBudgets& budgets, const ModuleRow& module) {
  return MeasureBudget(budgets, module.name, [&module](std::string_view metric) { return module.metric(metric); });
}

std::optional<BudgetUse> MeasureBudget(const MemoryBudgets& budgets, const std::string& module_name,
                                       const std::function<int64_t(std::string_view)>& metric) {
  for (const MemoryBudget& b : budgets.list) {
    if (!Matches(b, module_name)) continue;
    BudgetUse use;
    use.metric = b.metric;
    use.max_bytes = b.max_bytes;
    use.current = metric(b.metric);
    if (use.current >= 0) {
      use.percent = 100.0 * static_cast<double>(use.current) / static_cast<double>(b.max_bytes);
      use.over = use.current > b.max_bytes;
      use.warn = !use.over && use.percent >= budgets.warn_percent;
    }
    return use;
  }
  return std::nullopt;
}

std::vector<std::string> UnmatchedBudgets(const MemoryBudgets& budgets, const std::vector<ModuleRow>& rows,
                                          const std::string& run) {
  std::vector<std::string> out;
  for (const MemoryBudget& b : budgets.list) {
    bool any = false;
    for (const ModuleRow& r : rows) {
      if ((any = Matches(b, r.name))) break;
    }
    if (!any) out.push_back(Named(b) + " matches no module of run '" + run + "'");
  }
  return out;
}

}  // namespace xladb::store
