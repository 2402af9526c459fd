// MemoryTimeline: a module's memory against program order, the data of XProf's memory-vs-program-order view,
// computed from the stored live ranges (docs/formats.md §4) at each schedule time 0..last:
//
//   * logical_bytes: the unpadded bytes live at each time: every allocation slice holding a live value counts
//     once, at its largest live value's logical size (store/facts/shape_text.h LogicalByteSize: no tiling padding,
//     tuples as 8-byte pointers), capped at the slice's size, so the curve never exceeds padded_bytes. Values
//     that share a slice (an in-place update, an alias) count once. XLA's own count (its HloLiveRange peak)
//     adds every value, shared slices again: counted_at_xla_peak_time is that count at XLA's peak time. XLA
//     from 2025-04 sizes a value by its own shape; before, a tuple element by its whole defining
//     instruction's shape (§4.1). Both curves take the value's own shape unless only the older sizing
//     reproduces the printed `Live ranges at <t> (peak)` bytes at t (sized_by_instruction); when neither
//     does, matches_xla_peak() is false and the page says so.
//   * padded_bytes: the allocation slices holding a live value, each slice once (the bytes the allocator
//     really holds; store/facts/live_bytes.h), the curve whose maximum is module_summary.live_peak_padded_bytes.
//   * instructions: the schedule's instruction at each time ("" where the schedule is not stored).
//
// Contract: read-only statements on the caller's connection, one thread at a time. kNotFound for an unknown
// module_id; a module without live ranges is not an error (has_live_ranges false, empty vectors). Memory:
// 80 bytes a value while computing, then 16 bytes plus a name per schedule time. No exceptions escape.
#ifndef XLADB_STORE_QUERY_MEMORY_TIMELINE_H_
#define XLADB_STORE_QUERY_MEMORY_TIMELINE_H_

#include <cstdint>
#include <string>
#include <vector>

#include "base/status.h"
#include "store/backend/database.h"
#include "store/facts/live_bytes.h"

namespace xladb::store {

struct MemoryTimeline {
  int64_t module_id = 0;
  bool has_live_ranges = false;
  int64_t schedule_length = -1;        // HloLiveRange `max T` (-1 unknown)
  std::vector<int64_t> logical_bytes;  // at each time 0..last
  std::vector<int64_t> padded_bytes;   // at each time 0..last
  std::vector<std::string> instructions;  // at each time 0..last
  LivePeak logical_peak, padded_peak;  // the curves' maxima (first time reached)
  int64_t values_without_logical_size = 0;  // values whose shape text gave no size (counted as 0 bytes)
  bool sized_by_instruction = false;   // logical sizes are the defining instructions' (XLA before 2025-04)
  int64_t xla_peak_time = -1;          // `Live ranges at <t> (peak)`, as stored (-1 unknown)
  int64_t xla_peak_bytes = -1;         // module_summary.peak_bytes (-1 unknown)
  int64_t counted_at_xla_peak_time = -1;  // every live value's logical bytes at xla_peak_time, as XLA counts
                                          // (shared slices again; -1 unknown)

  // XLA's counting agrees with its printed peak: at xla_peak_time the live values add up to xla_peak_bytes.
  bool matches_xla_peak() const { return xla_peak_time >= 0 && counted_at_xla_peak_time == xla_peak_bytes; }
};

StatusOr<MemoryTimeline> LoadMemoryTimeline(Database& db, int64_t module_id);

}  // namespace xladb::store

#endif  // XLADB_STORE_QUERY_MEMORY_TIMELINE_H_
