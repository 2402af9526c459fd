// The memory chart: bytes live against schedule time, as an inline SVG plus a JSON block for its hover card
// (page.js), the view XProf's Memory Viewer draws, for one module or two overlaid.
//
//   * Long schedules are downsampled: consecutive times fall into buckets of `width` times, and each series
//     shows its maximum within a bucket, so a peak survives exactly (value and bucket); the hover card names
//     the bucket's range and the instruction at its first series' maximum.
//   * Peaks are drawn at their exact time and value, given by the caller (the store's figures), as
//     <g class="peak" id="<chart>-peak-<key>" data-time=… data-bytes=…>.
//   * Schedule time t is drawn as the interval [t, t+1), so the x axis runs to data-last-time = the longest
//     series' length. The <svg id=chart class="memchart"> carries its plot geometry (data-plot-left/-top/
//     -width/-height, data-last-time) so page.js can draw a buffer's lifetime over it.
//
// Pure functions; thread-safe.
#ifndef XLADB_SERVICE_PAGES_MEMORY_CHART_H_
#define XLADB_SERVICE_PAGES_MEMORY_CHART_H_

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace xladb::service::pages {

struct ChartSeries {
  std::string key;                     // css class and id part: "logical", "padded", "base-logical", …
  std::string label;                   // legend text
  const std::vector<int64_t>* bytes;   // at each schedule time 0..size-1; not owned
  const std::vector<std::string>* instructions = nullptr;  // the schedule, for the hover card (optional)
};

struct ChartPeak {
  std::string key;                     // id part
  std::string label;                   // e.g. "XLA peak"
  int64_t time = 0;
  int64_t bytes = 0;
};

struct ChartBuckets {
  int64_t width = 1;                   // schedule times per bucket
  std::vector<int64_t> starts;         // first time of each bucket
  std::vector<std::vector<std::optional<int64_t>>> values;  // per series, per bucket: the maximum (none past
                                                            // the series' end)
  std::vector<int64_t> name_times;     // per bucket: the time of the first series' maximum (its instruction)
};

// At most max_points buckets (max_points >= 1) over the longest series.
ChartBuckets Downsample(const std::vector<const std::vector<int64_t>*>& series, size_t max_points);

inline constexpr size_t kChartPoints = 1500;

// What the x axis counts: schedule times by default; the front page draws runs (their names in the series'
// `instructions`).
struct ChartAxis {
  std::string x_label = "schedule time (program order)";  // under the axis
  std::string x_name = "time";                            // in the hover card: "time 12", "run 3"
};

// The chart's HTML: legend, SVG, hover card and data block. `chart_id` is an HTML id ([a-z0-9-]).
std::string RenderMemoryChart(std::string_view chart_id, const std::vector<ChartSeries>& series,
                              const std::vector<ChartPeak>& peaks, size_t max_points = kChartPoints,
                              const ChartAxis& axis = ChartAxis());

}  // namespace xladb::service::pages

#endif  // XLADB_SERVICE_PAGES_MEMORY_CHART_H_
