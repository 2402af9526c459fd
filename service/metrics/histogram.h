// Histogram: a Prometheus histogram with fixed bucket bounds (seconds, bytes: whatever the family measures),
// and HistogramFamily, one histogram per set of label values (an RPC's method and status code).
//
// Contract
//   * Observe() is lock-free for a Histogram (atomics) and takes a short lock in a HistogramFamily to find the
//     histogram of its labels; both are safe from any thread, and a scrape may Write() meanwhile.
//   * Write() emits `<name>_bucket{…,le="…"}` cumulatively for every bound and +Inf, then `<name>_sum` and
//     `<name>_count`; the +Inf bucket and _count are the same number even while observations arrive (both are
//     the sum of the bucket counts read once). The family's header is the caller's (ExpositionText::Family).
//   * Bounds are given ascending; a value equal to a bound falls in that bound's bucket (le = "less or equal").
//   * A HistogramFamily holds every label set it has seen for the life of the process: give it labels with a
//     bounded number of values (method names the server registered, status codes), never client text.
#ifndef XLADB_SERVICE_METRICS_HISTOGRAM_H_
#define XLADB_SERVICE_METRICS_HISTOGRAM_H_

#include <atomic>
#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <string_view>
#include <vector>

#include "service/metrics/exposition_text.h"

namespace xladb::service::metrics {

class Histogram {
 public:
  explicit Histogram(std::vector<double> upper_bounds);
  Histogram(const Histogram&) = delete;
  Histogram& operator=(const Histogram&) = delete;

  void Observe(double value);
  void Write(ExpositionText& out, std::string_view name, const MetricLabels& labels) const;

 private:
  const std::vector<double> bounds_;
  std::unique_ptr<std::atomic<int64_t>[]> counts_;  // bounds_.size() + 1: the last is past every bound
  std::atomic<double> sum_{0};
};

class HistogramFamily {
 public:
  // `label_names`: the labels every histogram of the family carries, in order.
  HistogramFamily(std::vector<std::string> label_names, std::vector<double> upper_bounds)
      : label_names_(std::move(label_names)), bounds_(std::move(upper_bounds)) {}

  // `label_values` in the order of the label names.
  void Observe(const std::vector<std::string>& label_values, double value);
  // Every histogram of the family, in label-value order.
  void Write(ExpositionText& out, std::string_view name) const;

 private:
  const std::vector<std::string> label_names_;
  const std::vector<double> bounds_;
  mutable std::mutex mu_;
  std::map<std::vector<std::string>, std::unique_ptr<Histogram>> histograms_;
};

// Bucket bounds for durations in seconds, from 1 ms to `largest` seconds, roughly 1-2.5-5 per decade.
std::vector<double> SecondsBuckets(double largest);

}  // namespace xladb::service::metrics

#endif  // XLADB_SERVICE_METRICS_HISTOGRAM_H_
