// Live memory over schedule time, from values' live ranges (docs/formats.md §4): the arithmetic that the
// padded live peak (store/facts/module_facts.h) and the memory timeline (store/query/memory_timeline.h) share.
//
//   * A value occupies a slice of an allocation (allocation, offset, size) from its live_start to its
//     live_end, both inclusive. Values that share a slice (aliases, in-place updates) count it once while any
//     of them is live: ForEachLiveSlice merges each slice's intervals that overlap or touch.
//   * LiveBytes sums intervals with a difference array: O(values + schedule length), no per-time loops.
//
//   * kLiveSlicesSql is the one query that reads a module's values with their slices and live ranges
//     (kLiveSlicesOfModulesSql: of several modules); ReadSliceUse turns its row into a SliceUse.
//
// Pure computation on the caller's vectors, plus those SELECTs. Not thread-safe per object.
#ifndef XLADB_STORE_FACTS_LIVE_BYTES_H_
#define XLADB_STORE_FACTS_LIVE_BYTES_H_

#include "store/backend/sql_connection.h"

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <tuple>
#include <vector>

namespace xladb::store {

// One value's slice and live range, packed to 32 bytes (41 MB for a 1.3-million-value module).
struct SliceUse {
  int64_t offset;
  int64_t size;
  int32_t allocation;  // -1 - value_id for a value without an allocation: a slice of its own
  int32_t color;
  int32_t start;       // live_start, live_end (inclusive)
  int32_t end;
};
static_assert(sizeof(SliceUse) == 32);

// Columns: allocation_index, offset (-1 unknown), size, color, live_start, live_end, value_id, shape_id.
// Binds ?1 = module_id. Values without a size (only their details were printed) are left out.
#define XLADB_LIVE_SLICES_SELECT(module_filter, more_columns)                                                   \
  "SELECT v.allocation_index, COALESCE(v.offset_bytes, -1), v.size_bytes, COALESCE(a.color, 0), "                \
  "       l.live_start, l.live_end, v.value_id, v.shape_id" more_columns " "                                    \
  "FROM buffer_live_ranges l "                                                                                   \
  "JOIN buffer_values v ON v.module_id = l.module_id AND v.value_id = l.value_id "                               \
  "LEFT JOIN allocations a ON a.module_id = v.module_id AND a.allocation_index = v.allocation_index "            \
  "WHERE l.module_id " module_filter " AND v.size_bytes IS NOT NULL"
inline constexpr const char kLiveSlicesSql[] = XLADB_LIVE_SLICES_SELECT("= ?1", "");
// The same rows of several modules (store/backend/in_list_read.h's "{ids}"), the module's id in column 8.
inline constexpr const char kLiveSlicesOfModulesSql[] = XLADB_LIVE_SLICES_SELECT("IN ({ids})", ", l.module_id");
#undef XLADB_LIVE_SLICES_SELECT

// The SliceUse of a kLiveSlicesSql row; false for a row whose times or allocation are out of range (not a
// schedule time: reported elsewhere as an ingest issue).
bool ReadSliceUse(const SqlStatement& row, SliceUse* use);

// Steps `q` (kLiveSlicesSql, bound) to its end: appends each row's SliceUse to `uses` and calls
// on_row(q, use) for it (rows ReadSliceUse refuses are skipped). Returns the last live_end seen (0: none).
template <typename OnRow>
int32_t ReadLiveSlices(SqlStatement& q, std::vector<SliceUse>* uses, OnRow&& on_row) {
  int32_t last_time = 0;
  while (q.Step()) {
    SliceUse u;
    if (!ReadSliceUse(q, &u)) continue;
    last_time = std::max(last_time, u.end);
    uses->push_back(u);
    on_row(q, u);
  }
  return last_time;
}

struct LivePeak {
  int64_t bytes = 0;
  int64_t time = -1;  // the first time with that many bytes live; -1 when nothing is ever live
};

// Live bytes at each time 0..last_time, summed from intervals.
class LiveBytes {
 public:
  explicit LiveBytes(int64_t last_time) : diff_(static_cast<size_t>(last_time) + 2, 0) {}
  // start <= end <= last_time.
  void Add(int32_t start, int32_t end, int64_t size) {
    diff_[static_cast<size_t>(start)] += size;
    diff_[static_cast<size_t>(end) + 1] -= size;
  }
  LivePeak Peak() const;
  // Bytes live at each time 0..last_time.
  std::vector<int64_t> ByTime() const;

 private:
  std::vector<int64_t> diff_;
};

// Sorts `uses` and calls add(start, end, size, color) once per maximal interval over which each slice is live.
template <typename AddInterval>
void ForEachLiveSlice(std::vector<SliceUse>& uses, AddInterval&& add) {
  std::sort(uses.begin(), uses.end(), [](const SliceUse& a, const SliceUse& b) {
    return std::tie(a.allocation, a.offset, a.size, a.color, a.start) <
           std::tie(b.allocation, b.offset, b.size, b.color, b.start);
  });
  for (size_t i = 0; i < uses.size();) {
    const SliceUse& first = uses[i];
    int32_t start = first.start, end = first.end;
    size_t j = i + 1;
    for (; j < uses.size() && uses[j].allocation == first.allocation && uses[j].offset == first.offset &&
           uses[j].size == first.size && uses[j].color == first.color;
         ++j) {
      if (uses[j].start <= end + 1) {
        end = std::max(end, uses[j].end);
      } else {
        add(start, end, first.size, first.color);
        start = uses[j].start;
        end = uses[j].end;
      }
    }
    add(start, end, first.size, first.color);
    i = j;
  }
}

// One value on its slice with a byte count of its own (e.g. its logical size), for AddLargestPerSlice.
struct SliceValue {
  int64_t offset;
  int64_t size;        // the slice's (padded) size
  int32_t allocation;  // as SliceUse
  int32_t color;
  int32_t start;       // live_start, live_end (inclusive)
  int32_t end;
  int64_t bytes;       // what the value counts while live
};

// Adds to `live`, at each time, every slice's largest live value's bytes, capped at the slice's size: values
// that share a slice (an in-place update, an alias) count once, so the sum never exceeds the padded bytes
// ForEachLiveSlice gives. Sorts `values`.
void AddLargestPerSlice(std::vector<SliceValue>& values, LiveBytes* live);

}  // namespace xladb::store

#endif  // XLADB_STORE_FACTS_LIVE_BYTES_H_
