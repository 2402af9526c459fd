// The API's TrendMetric and the store's metrics (store/facts/module_metrics.h) name the same metrics: the
// service turns a TrendMetric into a metric by its lower-case enum name, and the CLI a metric into a TrendMetric
// by its upper-case name, so neither keeps a list of its own.
#include <gtest/gtest.h>

#include <cctype>
#include <string>

#include "store/facts/module_metrics.h"
#include "xladb/v1/xladb.pb.h"

namespace xladb {
namespace {

std::string Cased(std::string s, int (*to)(int)) {
  for (char& c : s) c = static_cast<char>(to(static_cast<unsigned char>(c)));
  return s;
}

TEST(MetricNames, EveryTrendMetricIsAStoreMetric) {
  const auto* values = v1::TrendMetric_descriptor();
  for (int i = 0; i < values->value_count(); ++i) {
    if (values->value(i)->number() == v1::TREND_METRIC_UNSPECIFIED) continue;
    const std::string name = Cased(values->value(i)->name(), std::tolower);
    EXPECT_NE(store::FindModuleMetric(name), nullptr) << name;
  }
}

TEST(MetricNames, EveryStoreMetricIsATrendMetric) {
  for (const store::ModuleMetric& m : store::kModuleMetrics) {
    v1::TrendMetric metric;
    EXPECT_TRUE(v1::TrendMetric_Parse(Cased(std::string(m.name), std::toupper), &metric)) << m.name;
  }
}

TEST(MetricNames, TheSelectionsNameMetricsOfTheList) {
  EXPECT_TRUE(store::AreModuleMetrics(store::kPeakMetricsInOrder));
  EXPECT_TRUE(store::AreModuleMetrics(store::kDefaultGateMetrics));
  const std::string_view not_a_metric[] = {"total_bytes", "peak"};
  EXPECT_FALSE(store::AreModuleMetrics(not_a_metric));
}

}  // namespace
}  // namespace xladb
