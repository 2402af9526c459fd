#include "store/live_bytes.h"

#include <climits>

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

}  // namespace xladb::store
