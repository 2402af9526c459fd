#include "store/facts/live_bytes.h"

#include <climits>
#include <set>

namespace xladb::store {

bool ReadSliceUse(const SqlStatement& q, SliceUse* u) {
  const int64_t start = q.Int(4), end = q.Int(5);
  if (start < 0 || end < start || end >= INT32_MAX - 1) return false;
  const int64_t allocation = q.IsNull(0) ? -1 - q.Int(6) : q.Int(0);
  if (allocation < INT32_MIN || allocation > INT32_MAX) return false;
  u->allocation = static_cast<int32_t>(allocation);
  u->offset = q.Int(1);
  u->size = q.Int(2);
  u->color = static_cast<int32_t>(q.Int(3));
  u->start = static_cast<int32_t>(start);
  u->end = static_cast<int32_t>(end);
  return true;
}

LivePeak LiveBytes::Peak() const {
  LivePeak peak;
  int64_t live = 0;
  for (size_t t = 0; t + 1 < diff_.size(); ++t) {
    live += diff_[t];
    if (live > peak.bytes) peak = {live, static_cast<int64_t>(t)};
  }
  return peak;
}

std::vector<int64_t> LiveBytes::ByTime() const {
  std::vector<int64_t> bytes(diff_.size() - 1);
  int64_t live = 0;
  for (size_t t = 0; t < bytes.size(); ++t) {
    live += diff_[t];
    bytes[t] = live;
  }
  return bytes;
}

void AddLargestPerSlice(std::vector<SliceValue>& values, LiveBytes* live) {
  std::sort(values.begin(), values.end(), [](const SliceValue& a, const SliceValue& b) {
    return std::tie(a.allocation, a.offset, a.size, a.color, a.start) <
           std::tie(b.allocation, b.offset, b.size, b.color, b.start);
  });
  const auto same_slice = [](const SliceValue& a, const SliceValue& b) {
    return a.allocation == b.allocation && a.offset == b.offset && a.size == b.size && a.color == b.color;
  };
  std::vector<std::pair<int64_t, int64_t>> events;  // (time, +bytes when a value starts, -bytes after it ends)
  std::multiset<int64_t> active;
  for (size_t i = 0; i < values.size();) {
    size_t j = i + 1;
    while (j < values.size() && same_slice(values[i], values[j])) ++j;
    const int64_t cap = values[i].size;
    if (j == i + 1) {
      live->Add(values[i].start, values[i].end, std::min(values[i].bytes, cap));
      i = j;
      continue;
    }
    // Sweep the slice's values: between consecutive event times the largest active value counts.
    events.clear();
    for (size_t k = i; k < j; ++k) {
      events.emplace_back(values[k].start, values[k].bytes + 1);
      events.emplace_back(int64_t{values[k].end} + 1, -(values[k].bytes + 1));
    }
    std::sort(events.begin(), events.end());
    active.clear();
    int64_t from = events.front().first;
    for (size_t e = 0; e < events.size();) {
      const int64_t time = events[e].first;
      if (!active.empty() && time > from) {
        live->Add(static_cast<int32_t>(from), static_cast<int32_t>(time - 1), std::min(*active.rbegin(), cap));
      }
      for (; e < events.size() && events[e].first == time; ++e) {
        if (events[e].second > 0) {
          active.insert(events[e].second - 1);
        } else {
          active.erase(active.find(-events[e].second - 1));
        }
      }
      from = time;
    }
    i = j;
  }
}

}  // namespace xladb::store
