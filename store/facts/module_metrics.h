// The module metrics that trend, diff and the gate compare, written once: kModuleMetrics is the one list of
// their names, and every other list of them (the columns a query selects, the API's fields, the CLI's --metric
// choices, the service's TrendMetric) is made from it. Each is a column of the module_memory view (schema.sql);
// docs/schema.md explains each with a worked example.
//
// Thread-safe (constant data).
#ifndef XLADB_STORE_FACTS_MODULE_METRICS_H_
#define XLADB_STORE_FACTS_MODULE_METRICS_H_

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace xladb::store {

// A module's value of every metric; -1 where it is unknown. A result that carries a module's metrics derives
// from it, so each metric is read, compared and sent under its one name.
struct ModuleMetricValues {
  int64_t peak_bytes = -1;
  int64_t live_peak_padded_bytes = -1;
  int64_t total_bytes = -1;
  int64_t color0_total_bytes = -1;
  int64_t temp_bytes = -1;
  int64_t parameter_bytes = -1;
  int64_t output_bytes = -1;

  // The metric of that name (a kModuleMetrics name); -1 when unknown or not a metric.
  int64_t metric(std::string_view name) const;
};

struct ModuleMetric {
  std::string_view name;         // the metric's name, its module_memory column and its API field
  std::string_view description;  // one line, for --help and messages
  int64_t ModuleMetricValues::*value = nullptr;  // where a ModuleMetricValues holds it
  bool peak = false;             // a peak (IsPeakMetric) rather than a sum of allocations
  std::string_view short_name;   // the CLI's shorter --metric name, if any ("" = none)
};

inline constexpr ModuleMetric kModuleMetrics[] = {
    {.name = "peak_bytes",
     .description = "XLA's logical peak as printed: unpadded, tuples counted as pointers",
     .value = &ModuleMetricValues::peak_bytes,
     .peak = true,
     .short_name = "peak"},
    {.name = "live_peak_padded_bytes",
     .description = "the most padded bytes live at once, from live ranges and value sizes",
     .value = &ModuleMetricValues::live_peak_padded_bytes,
     .peak = true,
     .short_name = ""},
    {.name = "total_bytes",
     .description = "`Total bytes used`: every allocation, every memory space",
     .value = &ModuleMetricValues::total_bytes,
     .peak = false,
     .short_name = "total"},
    {.name = "color0_total_bytes",
     .description = "allocation bytes in memory space 0 (what must fit in HBM on an accelerator)",
     .value = &ModuleMetricValues::color0_total_bytes,
     .peak = false,
     .short_name = ""},
    {.name = "temp_bytes",
     .description = "preallocated-temp allocations",
     .value = &ModuleMetricValues::temp_bytes,
     .peak = false,
     .short_name = "temp"},
    {.name = "parameter_bytes",
     .description = "entry parameter allocations",
     .value = &ModuleMetricValues::parameter_bytes,
     .peak = false,
     .short_name = ""},
    {.name = "output_bytes",
     .description = "maybe-live-out allocations",
     .value = &ModuleMetricValues::output_bytes,
     .peak = false,
     .short_name = ""},
};

// The metric of that name, or nullptr.
constexpr const ModuleMetric* FindModuleMetric(std::string_view name) {
  for (const ModuleMetric& m : kModuleMetrics) {
    if (m.name == name) return &m;
  }
  return nullptr;
}

inline int64_t ModuleMetricValues::metric(std::string_view name) const {
  const ModuleMetric* m = FindModuleMetric(name);
  return m == nullptr ? -1 : this->*(m->value);
}

// What "the peak" of a module is when none is named: the padded live peak, which needs live ranges; else XLA's
// printed peak; else total_bytes (a memory report alone). The trend and the front page take the first a module
// has.
inline constexpr std::string_view kPeakMetricsInOrder[] = {"live_peak_padded_bytes", "peak_bytes", "total_bytes"};

// The gate's metrics when none are named.
inline constexpr std::string_view kDefaultGateMetrics[] = {"total_bytes", "live_peak_padded_bytes"};

// A peak (a moment of the schedule, explained by the buffers live then) rather than a sum of allocations.
constexpr bool IsPeakMetric(std::string_view name) {
  const ModuleMetric* m = FindModuleMetric(name);
  return m != nullptr && m->peak;
}

// The metric a --metric argument names: a metric's short name ("peak") or its name; else the argument as given.
constexpr std::string_view MetricOfArgument(std::string_view argument) {
  for (const ModuleMetric& m : kModuleMetrics) {
    if (!m.short_name.empty() && m.short_name == argument) return m.name;
  }
  return argument;
}

// Every --metric argument: the short names, then the names, each in kModuleMetrics order.
inline std::vector<std::string> ModuleMetricArguments() {
  std::vector<std::string> arguments;
  for (const ModuleMetric& m : kModuleMetrics) {
    if (!m.short_name.empty()) arguments.emplace_back(m.short_name);
  }
  for (const ModuleMetric& m : kModuleMetrics) arguments.emplace_back(m.name);
  return arguments;
}

// "peak_bytes, live_peak_padded_bytes, …": the metrics' names for messages.
inline std::string ModuleMetricNames() {
  std::string names;
  for (const ModuleMetric& m : kModuleMetrics) names += (names.empty() ? "" : ", ") + std::string(m.name);
  return names;
}

// Whether every name of `names` is a metric (tests/service/metric_names_test.cc checks the selections above; a
// static_assert would be the place, but GCC 12 cannot evaluate it in constant time under -fsanitize=undefined).
template <size_t N>
constexpr bool AreModuleMetrics(const std::string_view (&names)[N]) {
  for (std::string_view name : names) {
    if (FindModuleMetric(name) == nullptr) return false;
  }
  return true;
}

}  // namespace xladb::store

#endif  // XLADB_STORE_FACTS_MODULE_METRICS_H_
