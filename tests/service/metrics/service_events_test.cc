// Service events (service/metrics/service_events.h): each cap its own counter and a label value Prometheus
// accepts; the last prune's time.
#include "service/metrics/service_events.h"

#include <gtest/gtest.h>

#include <regex>
#include <set>
#include <string>

namespace xladb::service::metrics {
namespace {

TEST(ServiceEvents, EveryCapHasItsOwnCounterAndName) {
  std::set<std::string> names;
  for (RefusalCap cap : kRefusalCaps) {
    const std::string name(RefusalCapName(cap));
    EXPECT_TRUE(std::regex_match(name, std::regex("[a-z][a-z_]*"))) << name;
    EXPECT_TRUE(names.insert(name).second) << "named twice: " << name;
  }
  EXPECT_EQ(names.size(), std::size(kRefusalCaps));
  const int64_t uploads = RefusalCount(RefusalCap::kUploadBytes);
  const int64_t queries = RefusalCount(RefusalCap::kQueryLimits);
  CountRefusal(RefusalCap::kUploadBytes);
  CountRefusal(RefusalCap::kUploadBytes);
  EXPECT_EQ(RefusalCount(RefusalCap::kUploadBytes), uploads + 2);
  EXPECT_EQ(RefusalCount(RefusalCap::kQueryLimits), queries);
}

TEST(ServiceEvents, LastPrune) {
  NotePrune(1795771786.5);
  EXPECT_EQ(LastPruneSeconds(), 1795771786.5);
}

}  // namespace
}  // namespace xladb::service::metrics
