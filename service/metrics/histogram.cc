#include "service/metrics/histogram.h"

#include <algorithm>

namespace xladb::service::metrics {

Histogram::Histogram(std::vector<double> upper_bounds)
    : bounds_(std::move(upper_bounds)), counts_(new std::atomic<int64_t>[bounds_.size() + 1]) {
  for (size_t i = 0; i <= bounds_.size(); ++i) counts_[i].store(0, std::memory_order_relaxed);
}

void Histogram::Observe(double value) {
  const size_t bucket = std::lower_bound(bounds_.begin(), bounds_.end(), value) - bounds_.begin();
  counts_[bucket].fetch_add(1, std::memory_order_relaxed);
  sum_.fetch_add(value, std::memory_order_relaxed);
}

void Histogram::Write(ExpositionText& out, std::string_view name, const MetricLabels& labels) const {
  const std::string bucket_name = std::string(name) + "_bucket";
  MetricLabels with_le = labels;
  with_le.emplace_back("le", "");
  int64_t cumulative = 0;
  for (size_t i = 0; i <= bounds_.size(); ++i) {
    cumulative += counts_[i].load(std::memory_order_relaxed);
    const std::string le = i < bounds_.size() ? FormatMetricValue(bounds_[i]) : "+Inf";
    with_le.back().second = le;
    out.Sample(bucket_name, with_le, cumulative);
  }
  out.Sample(std::string(name) + "_sum", labels, sum_.load(std::memory_order_relaxed));
  out.Sample(std::string(name) + "_count", labels, cumulative);
}

void HistogramFamily::Observe(const std::vector<std::string>& label_values, double value) {
  Histogram* histogram = nullptr;
  {
    std::lock_guard<std::mutex> lock(mu_);
    std::unique_ptr<Histogram>& slot = histograms_[label_values];
    if (!slot) slot = std::make_unique<Histogram>(bounds_);
    histogram = slot.get();  // never removed: the pointer outlives the lock
  }
  histogram->Observe(value);
}

void HistogramFamily::Write(ExpositionText& out, std::string_view name) const {
  std::lock_guard<std::mutex> lock(mu_);
  for (const auto& [values, histogram] : histograms_) {
    MetricLabels labels;
    for (size_t i = 0; i < label_names_.size() && i < values.size(); ++i) {
      labels.emplace_back(label_names_[i], values[i]);
    }
    histogram->Write(out, name, labels);
  }
}

std::vector<double> SecondsBuckets(double largest) {
  // Written out: products like 0.001 * 10 are not the decimal they print as, and `le` labels must be.
  static constexpr double kBounds[] = {0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5,
                                       10, 25, 50, 100, 250, 500, 1000, 2500, 5000, 10000};
  std::vector<double> bounds;
  for (double bound : kBounds) {
    if (bound <= largest) bounds.push_back(bound);
  }
  return bounds;
}

}  // namespace xladb::service::metrics
