#include "service/metrics/exposition_text.h"

#include <charconv>
#include <cmath>

namespace xladb::service::metrics {
namespace {

bool NameChar(char c, bool first, bool colon_allowed) {
  if ((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_') return true;
  if (c == ':') return colon_allowed;
  return !first && c >= '0' && c <= '9';
}

const char* TypeName(MetricType type) {
  switch (type) {
    case MetricType::kCounter: return "counter";
    case MetricType::kGauge: return "gauge";
    case MetricType::kHistogram: return "histogram";
  }
  return "untyped";
}

}  // namespace

std::string FormatMetricValue(double value) {
  if (std::isnan(value)) return "NaN";
  if (std::isinf(value)) return value > 0 ? "+Inf" : "-Inf";
  char buffer[32];
  const auto [end, ec] = std::to_chars(buffer, buffer + sizeof buffer, value);
  return ec == std::errc() ? std::string(buffer, end) : "NaN";
}

void ExpositionText::Name(std::string_view name, bool label) {
  if (name.empty()) text_ += '_';
  for (size_t i = 0; i < name.size(); ++i) text_ += NameChar(name[i], i == 0, !label) ? name[i] : '_';
}

void ExpositionText::Family(std::string_view name, MetricType type, std::string_view help) {
  text_ += "# HELP ";
  Name(name, false);
  text_ += ' ';
  for (char c : help) {
    if (c == '\\') text_ += "\\\\";
    else if (c == '\n') text_ += "\\n";
    else text_ += c;
  }
  text_ += "\n# TYPE ";
  Name(name, false);
  text_ += ' ';
  text_ += TypeName(type);
  text_ += '\n';
}

void ExpositionText::Labels(const MetricLabels& labels) {
  if (labels.empty()) return;
  text_ += '{';
  for (size_t i = 0; i < labels.size(); ++i) {
    if (i > 0) text_ += ',';
    Name(labels[i].first, true);
    text_ += "=\"";
    for (char c : labels[i].second) {
      if (c == '\\') text_ += "\\\\";
      else if (c == '"') text_ += "\\\"";
      else if (c == '\n') text_ += "\\n";
      else text_ += c;
    }
    text_ += '"';
  }
  text_ += '}';
}

void ExpositionText::Sample(std::string_view name, const MetricLabels& labels, double value) {
  Name(name, false);
  Labels(labels);
  text_ += ' ';
  text_ += FormatMetricValue(value);
  text_ += '\n';
}

void ExpositionText::Sample(std::string_view name, const MetricLabels& labels, int64_t value) {
  Name(name, false);
  Labels(labels);
  text_ += ' ';
  text_ += std::to_string(value);
  text_ += '\n';
}

}  // namespace xladb::service::metrics
