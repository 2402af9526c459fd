// Histogram and HistogramFamily (service/metrics/histogram.h): buckets are "less or equal", cumulative, and
// the +Inf bucket equals _count.
#include "service/metrics/histogram.h"

#include <gtest/gtest.h>

#include <thread>
#include <vector>

namespace xladb::service::metrics {
namespace {

TEST(Histogram, CumulativeLessOrEqualBucketsSumAndCount) {
  Histogram h({0.5, 1, 2.5});
  for (double v : {0.1, 0.5, 0.75, 1.0, 3.0, 100.0}) h.Observe(v);
  ExpositionText out;
  h.Write(out, "d_seconds", {{"method", "ListRuns"}});
  EXPECT_EQ(out.Take(),
            "d_seconds_bucket{method=\"ListRuns\",le=\"0.5\"} 2\n"
            "d_seconds_bucket{method=\"ListRuns\",le=\"1\"} 4\n"
            "d_seconds_bucket{method=\"ListRuns\",le=\"2.5\"} 4\n"
            "d_seconds_bucket{method=\"ListRuns\",le=\"+Inf\"} 6\n"
            "d_seconds_sum{method=\"ListRuns\"} 105.35\n"
            "d_seconds_count{method=\"ListRuns\"} 6\n");
}

TEST(Histogram, ObservationsFromManyThreadsAreAllCounted) {
  Histogram h({1, 10});
  std::vector<std::thread> threads;
  for (int t = 0; t < 4; ++t) {
    threads.emplace_back([&h] {
      for (int i = 0; i < 25000; ++i) h.Observe(i % 3 == 0 ? 0.5 : 5.0);  // integers' halves: the sum is exact
    });
  }
  for (auto& t : threads) t.join();
  ExpositionText out;
  h.Write(out, "x", {});
  // Per thread: 8334 values of 0.5 and 16666 of 5.
  EXPECT_EQ(out.Take(),
            "x_bucket{le=\"1\"} 33336\n"
            "x_bucket{le=\"10\"} 100000\n"
            "x_bucket{le=\"+Inf\"} 100000\n"
            "x_sum 349988\n"
            "x_count 100000\n");
}

TEST(HistogramFamily, OneHistogramPerLabelSetInLabelOrder) {
  HistogramFamily family({"method", "code"}, {1});
  family.Observe({"ListRuns", "OK"}, 0.5);
  family.Observe({"GetRun", "NOT_FOUND"}, 2);
  family.Observe({"ListRuns", "OK"}, 0.25);
  ExpositionText out;
  family.Write(out, "rpc");
  EXPECT_EQ(out.Take(),
            "rpc_bucket{method=\"GetRun\",code=\"NOT_FOUND\",le=\"1\"} 0\n"
            "rpc_bucket{method=\"GetRun\",code=\"NOT_FOUND\",le=\"+Inf\"} 1\n"
            "rpc_sum{method=\"GetRun\",code=\"NOT_FOUND\"} 2\n"
            "rpc_count{method=\"GetRun\",code=\"NOT_FOUND\"} 1\n"
            "rpc_bucket{method=\"ListRuns\",code=\"OK\",le=\"1\"} 2\n"
            "rpc_bucket{method=\"ListRuns\",code=\"OK\",le=\"+Inf\"} 2\n"
            "rpc_sum{method=\"ListRuns\",code=\"OK\"} 0.75\n"
            "rpc_count{method=\"ListRuns\",code=\"OK\"} 2\n");
}

TEST(SecondsBuckets, DecimalBoundsUpToTheLargest) {
  EXPECT_EQ(SecondsBuckets(1), (std::vector<double>{0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1}));
  const std::vector<double> long_jobs = SecondsBuckets(2500);
  EXPECT_EQ(long_jobs.back(), 2500);
  EXPECT_EQ(long_jobs.size(), 20u);
}

}  // namespace
}  // namespace xladb::service::metrics
