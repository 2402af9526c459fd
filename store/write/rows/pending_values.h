// PendingValues: a buffer assignment's ` value:` lines waiting for their Used-values block, by value id, so
// that the writer stores each value once, complete, when its block arrives (docs/formats.md §2.3, §2.5: the
// blocks come later in the file, in id order, while the value lines come in allocation order).
//
// Memory: slots live in chunks of 1,024 ids, each freed once none of its values waits (blocks arrive in id
// order, so the chunks empty one after another), and names in a ByteArena: about 40 bytes plus the name per
// value, and nothing is copied as it grows.
//
// Contract: one file's values; Reset() between files. Ids too sparse to index (garbage input) get no slot:
// Get() returns nullptr and the writer stores such a value at once. Views returned by Name() are valid until
// Clear(). Not thread-safe.
#ifndef XLADB_STORE_WRITE_ROWS_PENDING_VALUES_H_
#define XLADB_STORE_WRITE_ROWS_PENDING_VALUES_H_

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "base/arena_string_map.h"
#include "ingest/records/records.h"

namespace xladb::store {

class PendingValues {
 public:
  struct Slot {
    int64_t offset = -1, size = -1;
    const char* name = nullptr;  // ByteArena record: {instruction size}, instruction + shape index
    int32_t allocation_index = -1, shape_id = -1;
    int8_t color = -1, cross_color = -1;
    bool present = false, is_phi = false;
  };

  // True when the values of a line fit a slot; otherwise the writer stores the line at once.
  static bool Fits(int64_t allocation_index, int64_t shape_id, int32_t color);

  // The slot of `id`, or nullptr when ids are too sparse to index (garbage input) or, unless `create`, when
  // its chunk holds no waiting value.
  Slot* Get(int64_t id, bool create);
  // Marks `slot` (the slot of `id`) waiting, with the name of `v`.
  void Fill(int64_t id, Slot* slot, const ingest::ValueRef& v);
  // The instruction and shape index of a filled slot.
  std::pair<std::string_view, std::string_view> Name(const Slot& slot) const;
  // Marks the slot of `id` taken, freeing its chunk once no value of it waits, and everything once no value
  // waits at all.
  void Take(int64_t id, Slot* slot);

  template <typename Fn>
  void ForEachWaiting(Fn&& fn) {
    for (size_t c = 0; c < chunks_.size(); ++c) {
      if (!chunks_[c]) continue;
      for (size_t i = 0; i < (size_t{1} << kChunkBits); ++i) {
        if (chunks_[c][i].present) fn(static_cast<int64_t>((c << kChunkBits) + i), chunks_[c][i]);
      }
    }
  }

  void Clear();  // drops every waiting value
  void Reset();  // Clear(), and forgets how many values the file had

 private:
  static constexpr int kChunkBits = 10;  // 1,024 slots (40 KiB): a small module zeroes and scans one chunk
  std::vector<std::unique_ptr<Slot[]>> chunks_;
  std::vector<uint32_t> chunk_waiting_;  // filled, not yet taken slots per chunk
  ByteArena names_;
  std::string scratch_;
  int64_t count_ = 0;    // slots filled in this file (bounds how sparse an id may be)
  int64_t waiting_ = 0;  // slots filled and not taken yet
};

}  // namespace xladb::store

#endif  // XLADB_STORE_WRITE_ROWS_PENDING_VALUES_H_
