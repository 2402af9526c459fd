#include "store/write/rows/value_key_index.h"

#include <xxhash.h>

#include <algorithm>

namespace xladb::store {

namespace {

// Ids tried after the last one found before falling back to the sorted keys: values without a live range
// (thread-local ones) are skipped over this way.
constexpr size_t kCursorWindow = 64;

// recent_ is searched linearly until it holds this many keys, or an eighth of the sorted ones.
constexpr size_t kRecentLimit = 1024;

}  // namespace

uint64_t ValueKeyIndex::Key(std::string_view instruction, std::string_view shape_index) {
  uint64_t h = XXH3_64bits(instruction.data(), instruction.size());
  h = XXH3_64bits_withSeed(shape_index.data(), shape_index.size(), h);
  return h == 0 ? 1 : h;
}

void ValueKeyIndex::Add(int64_t id, uint64_t key) {
  ++added_;
  const bool dense = id >= 0 && id <= 4 * added_ + (int64_t{1} << 20);
  if (dense) {
    const auto i = static_cast<size_t>(id);
    if (i >= key_by_id_.size()) key_by_id_.resize(i + 1, 0);
    key_by_id_[i] = key;
  } else {
    sparse_.emplace_back(key, id);
  }
  if (built_) {
    recent_.emplace_back(key, id);
    if (recent_.size() > std::max(kRecentLimit, sorted_.size() / 8)) Rebuild();
  }
}

std::optional<int64_t> ValueKeyIndex::Find(uint64_t key) {
  const size_t end = std::min(key_by_id_.size(), cursor_ + kCursorWindow);
  for (size_t i = cursor_; i < end; ++i) {
    if (key_by_id_[i] == key) {
      cursor_ = i + 1;
      return static_cast<int64_t>(i);
    }
  }
  if (!built_) Rebuild();
  auto it = std::lower_bound(sorted_.begin(), sorted_.end(), std::make_pair(key, INT64_MIN));
  if (it != sorted_.end() && it->first == key) {
    if (it->second >= 0) cursor_ = static_cast<size_t>(it->second) + 1;
    return it->second;
  }
  for (const auto& [k, id] : recent_) {
    if (k == key) return id;
  }
  return std::nullopt;
}

void ValueKeyIndex::Rebuild() {
  sorted_.clear();
  sorted_.reserve(static_cast<size_t>(added_));
  for (size_t i = 0; i < key_by_id_.size(); ++i) {
    if (key_by_id_[i] != 0) sorted_.emplace_back(key_by_id_[i], static_cast<int64_t>(i));
  }
  sorted_.insert(sorted_.end(), sparse_.begin(), sparse_.end());
  std::sort(sorted_.begin(), sorted_.end());
  recent_.clear();
  built_ = true;
}

void ValueKeyIndex::Clear() {
  key_by_id_ = {};
  sparse_ = {};
  sorted_ = {};
  recent_ = {};
  built_ = false;
  added_ = 0;
  cursor_ = 0;
}

}  // namespace xladb::store
