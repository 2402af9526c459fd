// The module metrics that trend, diff and the gate compare, written once. Each is a column of the
// module_memory view (schema.sql); docs/schema.md explains each with a worked example.
//
// Thread-safe (constant data).
#ifndef XLADB_STORE_FACTS_MODULE_METRICS_H_
#define XLADB_STORE_FACTS_MODULE_METRICS_H_

#include <string>
#include <string_view>

namespace xladb::store {

struct ModuleMetric {
  std::string_view name;         // the metric's name and its module_memory column
  std::string_view description;  // one line, for --help and messages
};

inline constexpr ModuleMetric kModuleMetrics[] = {
    {"peak_bytes", "XLA's logical peak as printed: unpadded, tuples counted as pointers"},
    {"live_peak_padded_bytes", "the most padded bytes live at once, from live ranges and value sizes"},
    {"total_bytes", "`Total bytes used`: every allocation, every memory space"},
    {"color0_total_bytes", "allocation bytes in memory space 0 (what must fit in HBM on an accelerator)"},
    {"temp_bytes", "preallocated-temp allocations"},
    {"parameter_bytes", "entry parameter allocations"},
    {"output_bytes", "maybe-live-out allocations"},
};

// What "the peak" of a module is when none is named: the padded live peak, which needs live ranges; else XLA's
// printed peak; else total_bytes (a memory report alone). The trend and the front page take the first a module
// has.
inline constexpr std::string_view kPeakMetricsInOrder[] = {"live_peak_padded_bytes", "peak_bytes", "total_bytes"};

// The gate's metrics when none are named.
inline constexpr std::string_view kDefaultGateMetrics[] = {"total_bytes", "live_peak_padded_bytes"};

// The metric of that name, or nullptr.
constexpr const ModuleMetric* FindModuleMetric(std::string_view name) {
  for (const ModuleMetric& m : kModuleMetrics) {
    if (m.name == name) return &m;
  }
  return nullptr;
}

// A peak (a moment of the schedule, explained by the buffers live then) rather than a sum of allocations.
constexpr bool IsPeakMetric(std::string_view name) { return name == "peak_bytes" || name == "live_peak_padded_bytes"; }

// "peak_bytes, live_peak_padded_bytes, …": the metrics' names for messages.
inline std::string ModuleMetricNames() {
  std::string names;
  for (const ModuleMetric& m : kModuleMetrics) names += (names.empty() ? "" : ", ") + std::string(m.name);
  return names;
}

}  // namespace xladb::store

#endif  // XLADB_STORE_FACTS_MODULE_METRICS_H_
