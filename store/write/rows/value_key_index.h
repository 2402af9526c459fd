// ValueKeyIndex: finds a module's HloValue id by its (instruction, shape index) name, in about 8 bytes per
// value, for the writer to attach BufferLiveRange and peak lines (which name values) to value ids.
//
// Keys are 64-bit hashes of the name (ValueKeyIndex::Key). A lookup for a name that is not there could match
// another name with the same hash: for a module of n values that needs a 64-bit collision among them, about
// n²/2⁶⁵ (4·10⁻⁸ for a million values), which the writer accepts.
//
// Lookups are cheap in the order dumps print them: BufferLiveRange lines come in value-id order, so Find()
// first tries the ids just after the last one it found. Any other order falls back to a sorted copy of the
// keys, built on the first such miss (16 bytes per value) and extended when values are added after it.
//
// Contract: Add() records an id for a key; when two ids share a key, Find() may return either. Value ids are
// dense (0…n-1), so they are indexed by id at 8 bytes up to the largest id added; an id far beyond the values
// added so far (garbage input) goes to a sparse list at 16 bytes instead, so memory stays linear in the values
// added. Not thread-safe.
#ifndef XLADB_STORE_WRITE_ROWS_VALUE_KEY_INDEX_H_
#define XLADB_STORE_WRITE_ROWS_VALUE_KEY_INDEX_H_

#include <cstdint>
#include <optional>
#include <string_view>
#include <utility>
#include <vector>

namespace xladb::store {

class ValueKeyIndex {
 public:
  // The key of a value's name: never 0 (0 marks an empty id slot).
  static uint64_t Key(std::string_view instruction, std::string_view shape_index);

  void Add(int64_t id, uint64_t key);
  std::optional<int64_t> Find(uint64_t key);
  // Drops everything and frees the memory.
  void Clear();
  bool empty() const { return added_ == 0; }

 private:
  void Rebuild();

  std::vector<uint64_t> key_by_id_;                    // 0: no value with that id
  std::vector<std::pair<uint64_t, int64_t>> sparse_;    // (key, id) of ids too sparse to index by id
  std::vector<std::pair<uint64_t, int64_t>> sorted_;    // (key, id) by key, then id; built on demand
  std::vector<std::pair<uint64_t, int64_t>> recent_;    // added since sorted_ was built, searched linearly
  bool built_ = false;
  int64_t added_ = 0;
  size_t cursor_ = 0;  // the id after the last one found by id order
};

}  // namespace xladb::store

#endif  // XLADB_STORE_WRITE_ROWS_VALUE_KEY_INDEX_H_
