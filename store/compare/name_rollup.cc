#include "store/compare/name_rollup.h"

#include <algorithm>
#include <cstdlib>
#include <map>
#include <tuple>

#include "store/compare/module_match.h"

namespace xladb::store {
namespace {

int64_t Known(int64_t v) { return v < 0 ? 0 : v; }

void Add(int64_t value, int64_t* max, int64_t* sum) {
  if (value < 0) return;
  *max = std::max(*max, value);
  *sum = Known(*sum) + value;
}

}  // namespace

int64_t MetricRollup::change() const {
  return std::max(std::llabs(Known(current_max) - Known(baseline_max)),
                  std::llabs(Known(current_sum) - Known(baseline_sum)));
}

int64_t NameRollup::change() const {
  int64_t c = 0;
  for (const MetricRollup& m : metrics) c = std::max(c, m.change());
  return c;
}

const MetricRollup* NameRollup::headline() const {
  const MetricRollup* best = nullptr;
  for (const MetricRollup& m : metrics) {
    if (!best || m.change() > best->change()) best = &m;
  }
  return best;
}

std::vector<NameRollup> RollUpByName(const MatchedRuns& runs, const std::vector<std::string>& metrics, bool all) {
  std::map<std::tuple<std::string, std::string, std::string>, NameRollup> rows;
  auto add_side = [&](const std::vector<ModuleRow>& side, bool current) {
    for (const ModuleRow& r : side) {
      NameRollup& row = rows[{r.name, r.stage, r.folder}];
      if (row.metrics.empty()) {
        row.module = r.name;
        row.stage = r.stage;
        row.folder = r.folder;
        for (const std::string& m : metrics) row.metrics.push_back({m});
      }
      ++(current ? row.current_compiles : row.baseline_compiles);
      for (MetricRollup& m : row.metrics) {
        const int64_t v = r.metric(m.metric);
        if (current) {
          Add(v, &m.current_max, &m.current_sum);
        } else {
          Add(v, &m.baseline_max, &m.baseline_sum);
        }
      }
    }
  };
  add_side(runs.baseline, false);
  add_side(runs.current, true);
  std::vector<NameRollup> out;
  for (auto& [key, row] : rows) {
    row.changed = row.baseline_compiles != row.current_compiles;
    for (const MetricRollup& m : row.metrics) {
      row.changed |= m.baseline_max != m.current_max || m.baseline_sum != m.current_sum;
    }
    if (row.changed || all) out.push_back(std::move(row));
  }
  std::stable_sort(out.begin(), out.end(), [](const NameRollup& a, const NameRollup& b) {
    if (a.changed != b.changed) return a.changed;
    if (a.change() != b.change()) return a.change() > b.change();
    return std::llabs(a.current_compiles - a.baseline_compiles) > std::llabs(b.current_compiles - b.baseline_compiles);
  });
  return out;
}

}  // namespace xladb::store
