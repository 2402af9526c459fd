#include "service/pages/memory_chart.h"

#include <algorithm>
#include <cmath>
#include <cstdio>

#include <nlohmann/json.hpp>

#include "service/human_bytes.h"
#include "service/pages/html_text.h"

namespace xladb::service::pages {
namespace {

constexpr double kWidth = 960, kHeight = 320;
constexpr double kLeft = 78, kRight = 16, kTop = 14, kBottom = 34;
constexpr double kPlotWidth = kWidth - kLeft - kRight, kPlotHeight = kHeight - kTop - kBottom;

std::string Num(double v) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.1f", v);
  return buf;
}

// A round step near range/parts: 1, 2 or 5 times a power of `base` (1024 for bytes, 10 for times).
double NiceStep(double range, int parts, double base) {
  if (range <= 0) return 1;
  double step = range / parts;
  double power = 1;
  while (power * base <= step) power *= base;
  for (double m : {1.0, 2.0, 5.0, 10.0, 20.0, 50.0, 100.0, 200.0, 500.0}) {
    if (power * m >= step) return power * m;
  }
  return power * base;
}

}  // namespace

ChartBuckets Downsample(const std::vector<const std::vector<int64_t>*>& series, size_t max_points) {
  ChartBuckets b;
  size_t n = 0;
  for (const auto* s : series) n = std::max(n, s->size());
  max_points = std::max<size_t>(max_points, 1);
  b.width = static_cast<int64_t>(std::max<size_t>(1, (n + max_points - 1) / max_points));
  const size_t w = static_cast<size_t>(b.width);
  b.values.resize(series.size());
  for (size_t start = 0; start < n; start += w) {
    b.starts.push_back(static_cast<int64_t>(start));
    int64_t name_time = static_cast<int64_t>(start);
    for (size_t k = 0; k < series.size(); ++k) {
      const std::vector<int64_t>& s = *series[k];
      if (start >= s.size()) {
        b.values[k].push_back(std::nullopt);
        continue;
      }
      const size_t end = std::min(s.size(), start + w);
      const auto it = std::max_element(s.begin() + static_cast<std::ptrdiff_t>(start),
                                       s.begin() + static_cast<std::ptrdiff_t>(end));  // the first maximum
      b.values[k].push_back(*it);
      if (k == 0) name_time = static_cast<int64_t>(it - s.begin());
    }
    b.name_times.push_back(name_time);
  }
  return b;
}

std::string RenderMemoryChart(std::string_view chart_id, const std::vector<ChartSeries>& series,
                              const std::vector<ChartPeak>& peaks, size_t max_points, const ChartAxis& axis) {
  std::vector<const std::vector<int64_t>*> curves;
  for (const ChartSeries& s : series) curves.push_back(s.bytes);
  const ChartBuckets b = Downsample(curves, max_points);
  int64_t last_time = 1, max_bytes = 1;
  for (const auto* c : curves) {
    last_time = std::max<int64_t>(last_time, static_cast<int64_t>(c->size()));
    for (int64_t v : *c) max_bytes = std::max(max_bytes, v);
  }
  for (const ChartPeak& p : peaks) {
    last_time = std::max(last_time, p.time + 1);
    max_bytes = std::max(max_bytes, p.bytes);
  }
  const double y_step = NiceStep(static_cast<double>(max_bytes), 4, 1024);
  const double y_max = std::ceil(static_cast<double>(max_bytes) * 1.04 / y_step) * y_step;
  const auto x = [&](double t) { return kLeft + t / static_cast<double>(last_time) * kPlotWidth; };
  const auto y = [&](double v) { return kTop + kPlotHeight * (1 - v / y_max); };
  const std::string id(chart_id);

  std::string out = "<div class=\"chart\">\n<div class=\"legend\">";
  for (const ChartSeries& s : series) {
    // A class, not a style attribute: the pages' CSP allows no inline style beyond the hashed sheet.
    out += "<span><i class=\"swatch-" + s.key + "\"></i>" + Html(s.label) + "</span>";
  }
  out += "</div>\n";
  out += "<svg id=\"" + id + "\" class=\"memchart\" xmlns=\"http://www.w3.org/2000/svg\" viewBox=\"0 0 " +
         Num(kWidth) + " " + Num(kHeight) + "\" data-plot-left=\"" + Num(kLeft) + "\" data-plot-top=\"" + Num(kTop) +
         "\" data-plot-width=\"" + Num(kPlotWidth) + "\" data-plot-height=\"" + Num(kPlotHeight) +
         "\" data-last-time=\"" + std::to_string(last_time) + "\" data-bucket-width=\"" + std::to_string(b.width) +
         "\" role=\"img\" aria-label=\"memory against " + Html(axis.x_label) + "\">\n";
  // Grid and axes.
  for (double v = 0; v <= y_max + 1; v += y_step) {
    out += "<line class=\"grid\" x1=\"" + Num(kLeft) + "\" x2=\"" + Num(kLeft + kPlotWidth) + "\" y1=\"" + Num(y(v)) +
           "\" y2=\"" + Num(y(v)) + "\"/><text x=\"" + Num(kLeft - 6) + "\" y=\"" + Num(y(v) + 4) +
           "\" text-anchor=\"end\">" + Html(HumanBytes(static_cast<int64_t>(v))) + "</text>\n";
  }
  const double t_step = NiceStep(static_cast<double>(last_time), 6, 10);
  for (double t = 0; t <= static_cast<double>(last_time); t += t_step) {
    out += "<text x=\"" + Num(x(t)) + "\" y=\"" + Num(kTop + kPlotHeight + 16) + "\" text-anchor=\"middle\">" +
           std::to_string(static_cast<int64_t>(t)) + "</text>\n";
  }
  out += "<text x=\"" + Num(kLeft + kPlotWidth / 2) + "\" y=\"" + Num(kHeight - 4) +
         "\" text-anchor=\"middle\">" + Html(axis.x_label) + "</text>\n";
  out += "<line class=\"axis\" x1=\"" + Num(kLeft) + "\" x2=\"" + Num(kLeft) + "\" y1=\"" + Num(kTop) + "\" y2=\"" +
         Num(kTop + kPlotHeight) + "\"/><line class=\"axis\" x1=\"" + Num(kLeft) + "\" x2=\"" +
         Num(kLeft + kPlotWidth) + "\" y1=\"" + Num(kTop + kPlotHeight) + "\" y2=\"" + Num(kTop + kPlotHeight) +
         "\"/>\n";
  // Curves: a step per bucket.
  for (size_t k = 0; k < series.size(); ++k) {
    std::string points;
    for (size_t i = 0; i < b.starts.size(); ++i) {
      if (!b.values[k][i]) break;
      const double v = y(static_cast<double>(*b.values[k][i]));
      const double t0 = static_cast<double>(b.starts[i]);
      const double t1 = std::min<double>(t0 + static_cast<double>(b.width), static_cast<double>(series[k].bytes->size()));
      points += Num(x(t0)) + "," + Num(v) + " " + Num(x(t1)) + "," + Num(v) + " ";
    }
    if (!points.empty()) points.pop_back();
    out += "<polyline class=\"" + series[k].key + "\" data-series=\"" + series[k].key + "\" points=\"" + points +
           "\"/>\n";
  }
  std::vector<std::pair<double, double>> placed;  // label anchors so far: peaks close together stack labels
  for (const ChartPeak& p : peaks) {
    const double px = x(static_cast<double>(p.time)), py = y(static_cast<double>(p.bytes));
    const bool right_half = px > kLeft + kPlotWidth * 0.7;
    double label_y = std::max(py - 6, kTop + 10);
    for (bool moved = true; moved;) {
      moved = false;
      for (const auto& [lx, ly] : placed) {
        if (std::abs(lx - px) < 260 && std::abs(ly - label_y) < 13) {
          label_y = ly + 14;
          moved = true;
        }
      }
    }
    placed.emplace_back(px, label_y);
    out += "<g class=\"peak\" id=\"" + id + "-peak-" + p.key + "\" data-time=\"" + std::to_string(p.time) +
           "\" data-bytes=\"" + std::to_string(p.bytes) + "\"><circle cx=\"" + Num(px) + "\" cy=\"" + Num(py) +
           "\" r=\"4\"/><text x=\"" + Num(px + (right_half ? -8 : 8)) + "\" y=\"" + Num(label_y) +
           "\" text-anchor=\"" + (right_half ? "end" : "start") + "\">" + Html(p.label) + ": " +
           Html(HumanBytes(p.bytes)) + " at " + std::to_string(p.time) + "</text></g>\n";
  }
  out += "<line class=\"cursor\" x1=\"0\" x2=\"0\" y1=\"" + Num(kTop) + "\" y2=\"" + Num(kTop + kPlotHeight) +
         "\" visibility=\"hidden\"/>\n</svg>\n";
  out += "<div class=\"card\" id=\"" + id + "-card\" hidden></div>\n";

  nlohmann::json data;
  data["w"] = b.width;
  data["x"] = axis.x_name;
  data["t"] = b.starts;
  nlohmann::json names = nlohmann::json::array(), list = nlohmann::json::array();
  const std::vector<std::string>* schedule = series.empty() ? nullptr : series[0].instructions;
  for (int64_t t : b.name_times) {
    names.push_back(schedule && t < static_cast<int64_t>(schedule->size()) ? JsonText((*schedule)[static_cast<size_t>(t)])
                                                                           : std::string());
  }
  data["i"] = std::move(names);
  for (size_t k = 0; k < series.size(); ++k) {
    nlohmann::json values = nlohmann::json::array();
    for (const auto& v : b.values[k]) values.push_back(v ? nlohmann::json(*v) : nlohmann::json(nullptr));
    list.push_back({{"key", series[k].key}, {"label", JsonText(series[k].label)}, {"v", std::move(values)}});
  }
  data["series"] = std::move(list);
  out += "<script type=\"application/json\" id=\"" + id + "-data\" class=\"chart-data\">" + ScriptJson(data) +
         "</script>\n</div>\n";
  return out;
}

}  // namespace xladb::service::pages
