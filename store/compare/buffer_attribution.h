// Buffer attribution: why a module's memory changed between two runs, buffer by buffer and source line by
// source line. `xladb diff` and the gate (store/compare/check_run.h) both use it.
//
// Buffers (HloValues) of the two modules are paired in two passes, each first come first paired in value_id
// order among the buffers still unpaired:
//   1. "name":   the same defining instruction and shape index;
//   2. "origin": for renamed instructions, the same metadata op_name, source file and line, shape index and
//                shape (without layout). Only buffers with an op_name take part.
// A pair whose padded sizes differ GREW or SHRANK; an unpaired buffer APPEARED (current side) or
// DISAPPEARED (baseline side). Pairs of equal size are not changes. Sizes are padded bytes (buffer_values).
//
// Scope: kPeakBuffers compares the buffers live at XLA's peak (peak_buffers, the list `Live ranges at T
// (peak)` prints), which explains a change of peak_bytes or live_peak_padded_bytes; kValues compares every
// value of the module, which explains a change of total_bytes and its parts.
//
// Contract: read-only statements on the caller's connection, one thread at a time per connection; errors
// come back as Status (kIoError for database failures). No exceptions escape.
#ifndef XLADB_STORE_COMPARE_BUFFER_ATTRIBUTION_H_
#define XLADB_STORE_COMPARE_BUFFER_ATTRIBUTION_H_

#include <cstdint>
#include <string>
#include <vector>

#include "base/status.h"
#include "store/backend/database.h"

namespace xladb::store {

struct BufferChange {
  enum class Kind { kGrew, kShrank, kAppeared, kDisappeared };
  Kind kind = Kind::kGrew;
  std::string instruction;           // defining instruction in the current run ("" when it disappeared)
  std::string baseline_instruction;  // in the baseline ("" when it appeared); differs when renamed
  std::string shape_index;           // '{}' for non-tuples
  std::string matched_by;            // "name" or "origin"; "" for appeared and disappeared buffers
  int64_t baseline_bytes = -1;       // padded bytes (-1 = absent)
  int64_t current_bytes = -1;        // padded bytes (-1 = absent)
  std::string baseline_shape, current_shape;  // with layout, as printed
  std::string op_name;               // metadata op_name (the current side's when both have one)
  std::string source;                // "file:line" (or "file"), "" when the metadata has none

  // current - baseline, an absent side counting 0.
  int64_t delta() const { return (current_bytes > 0 ? current_bytes : 0) - (baseline_bytes > 0 ? baseline_bytes : 0); }
};

// The changes of one source line ("" = buffers without a source location), summed.
struct SourceLineChange {
  std::string source;
  int64_t delta = 0;                 // bytes, current - baseline
  int64_t buffers = 0;               // buffer changes summed
};

enum class AttributionScope { kPeakBuffers, kValues };

const char* AttributionScopeName(AttributionScope scope);  // "peak_buffers" or "values"

struct Attribution {
  AttributionScope scope = AttributionScope::kValues;
  std::vector<BufferChange> changes;       // largest |delta| first, then by instruction; at most max_changes
  int64_t change_count = 0;                // changes found before the max_changes cut
  std::vector<SourceLineChange> by_source; // all changes (not only the listed ones) by source line, largest
                                           // |delta| first
  int64_t baseline_peak_time = -1, current_peak_time = -1;            // XLA's peak in the schedule
  int64_t baseline_schedule_length = -1, current_schedule_length = -1;

  // The peak is at another point of the schedule (both times known and different).
  bool peak_moved() const {
    return baseline_peak_time >= 0 && current_peak_time >= 0 && baseline_peak_time != current_peak_time;
  }
};

// One pair to attribute: two modules (module_ids of any runs), what to compare, how many changes to list.
struct AttributionPair {
  int64_t baseline_module_id = 0;
  int64_t current_module_id = 0;
  AttributionScope scope = AttributionScope::kValues;
  int64_t max_changes = -1;  // < 0 lists every change
};

// The most values (module_summary.value_count) a group of pairs holds at once, unless one pair has more:
// about 10 MB of buffers. 500 reshaped pairs of generated 45-value modules make one group.
inline constexpr int64_t kAttributionValuesPerGroup = 1 << 16;

// Compares the buffers of every pair: the i-th attribution answers pairs[i], as AttributeChange would. The
// modules' figures are read once for all pairs; then the pairs are read in groups (values_per_group): their
// buffers a scope at a time, their texts (shapes, op_names, source paths) in three rounds as the pairing
// needs them, each read by one statement over all its ids on PostgreSQL, where a statement is a round trip
// (a gate over 500 reshaped pairs waits for about a dozen answers, not thousands), and by a statement
// prepared once on SQLite (store/query/rows_by_id.h).
[[nodiscard]] StatusOr<std::vector<Attribution>> AttributeChanges(
    Database& db, const std::vector<AttributionPair>& pairs,
    int64_t values_per_group = kAttributionValuesPerGroup);

// Compares the buffers of two modules (module_ids of any runs). max_changes < 0 keeps every change.
[[nodiscard]] StatusOr<Attribution> AttributeChange(Database& db, int64_t baseline_module_id,
                                                    int64_t current_module_id, AttributionScope scope,
                                                    int64_t max_changes);

}  // namespace xladb::store

#endif  // XLADB_STORE_COMPARE_BUFFER_ATTRIBUTION_H_
