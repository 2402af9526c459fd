// ExpositionText: writes Prometheus's text exposition format, version 0.0.4 (the format every Prometheus
// server scrapes; docs/deploy.md "Metrics"). Debian has no Prometheus client library for C++, so this is the
// whole writer: a family's `# HELP` and `# TYPE` lines, then its samples.
//
//   # HELP xladb_ingest_files_total Files ingested, by verdict.
//   # TYPE xladb_ingest_files_total counter
//   xladb_ingest_files_total{verdict="error"} 3
//
// Contract
//   * Metric and label names are the program's own constants; they must match [a-zA-Z_:][a-zA-Z0-9_:]* and
//     [a-zA-Z_][a-zA-Z0-9_]* (a name that does not is a programming error: the family or sample is written
//     with the offending characters replaced by '_', so a scrape never breaks).
//   * Label values and help text are any bytes: a label value escapes backslash, double quote and newline,
//     help text backslash and newline, as the format requires. Bytes that are not UTF-8 are passed through
//     (Prometheus reads label values as UTF-8; the daemon's label values are its own words).
//   * Values: integers are written exactly (up to 2^53 without rounding through double), doubles in the
//     shortest form that reads back the same, and +Inf, -Inf, NaN spelled as the format spells them.
//   * Samples follow their family's header, each family once: callers write a family's samples together.
//   * Not thread-safe: one writer per scrape.
#ifndef XLADB_SERVICE_METRICS_EXPOSITION_TEXT_H_
#define XLADB_SERVICE_METRICS_EXPOSITION_TEXT_H_

#include <cstdint>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace xladb::service::metrics {

enum class MetricType { kCounter, kGauge, kHistogram };

// A sample's labels, in the order written.
using MetricLabels = std::vector<std::pair<std::string_view, std::string_view>>;

// The content type a scrape answers with.
inline constexpr char kExpositionContentType[] = "text/plain; version=0.0.4; charset=utf-8";

class ExpositionText {
 public:
  // Starts a family: its HELP and TYPE lines.
  void Family(std::string_view name, MetricType type, std::string_view help);
  // One sample: `name` is the family's name, or for a histogram the family's name plus _bucket, _sum or
  // _count.
  void Sample(std::string_view name, const MetricLabels& labels, double value);
  void Sample(std::string_view name, const MetricLabels& labels, int64_t value);

  // The text so far; the writer may be reused after Take().
  std::string Take() { return std::move(text_); }

 private:
  void Name(std::string_view name, bool label);
  void Labels(const MetricLabels& labels);

  std::string text_;
};

// A number as the format writes it: "+Inf", "-Inf", "NaN", or the shortest text that reads back as `value`.
std::string FormatMetricValue(double value);

}  // namespace xladb::service::metrics

#endif  // XLADB_SERVICE_METRICS_EXPOSITION_TEXT_H_
