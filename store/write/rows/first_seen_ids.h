// FirstSeenIds: the integer keys (value ids, schedule times, stack-trace and peak-list ordinals) a file has
// written for a module it created (FileContext::EndModuleRow), so that a row whose key comes for the first
// time is known to be new: no other file wrote the module, and this file has not written the key before.
// Such rows go by the insert without its conflict clause (BulkBatch::Keys::kNew), which PostgreSQL writes
// without first probing the key's index for a conflict.
//
// Memory: one bit per id up to the largest claimed. An id below 0 or from kMaxIds on (garbage input) is never
// first-seen: its row takes the insert with the conflict clause, which is right whatever the key.
//
// Not thread-safe.
#ifndef XLADB_STORE_WRITE_ROWS_FIRST_SEEN_IDS_H_
#define XLADB_STORE_WRITE_ROWS_FIRST_SEEN_IDS_H_

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <vector>

namespace xladb::store {

class FirstSeenIds {
 public:
  static constexpr int64_t kMaxIds = int64_t{1} << 25;  // 4 MiB of bits at most (real modules: a few million)

  // True the first time `id` is claimed (and then marks it), false afterwards and for ids out of range.
  bool Claim(int64_t id) {
    if (id < 0 || id >= kMaxIds) return false;
    const auto i = static_cast<size_t>(id);
    if (i >= seen_.size()) seen_.resize(std::min(static_cast<size_t>(kMaxIds), std::max(i + 1, 2 * seen_.size())));
    if (seen_[i]) return false;
    seen_[i] = true;
    return true;
  }

 private:
  std::vector<bool> seen_;
};

}  // namespace xladb::store

#endif  // XLADB_STORE_WRITE_ROWS_FIRST_SEEN_IDS_H_
