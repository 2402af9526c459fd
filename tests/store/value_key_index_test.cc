// ValueKeyIndex: every id added is found by its key, whatever the order of lookups (id order through the
// cursor, any other order through the sorted copy, keys added after that copy through recent_ and rebuilds),
// for dense, sparse and negative ids; Key() separates names that differ only in where the split falls.
#include "store/write/rows/value_key_index.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <random>
#include <set>
#include <string>
#include <vector>

namespace xladb::store {
namespace {

// The key of value `id` as a dump names it: `fusion.<id>` at shape index {} (odd ids: {1}).
uint64_t KeyOf(int64_t id) {
  return ValueKeyIndex::Key("fusion." + std::to_string(id), id % 2 == 0 ? "{}" : "{1}");
}

// Adds ids [0, n) in order.
void AddDense(ValueKeyIndex& index, int64_t n) {
  for (int64_t id = 0; id < n; ++id) index.Add(id, KeyOf(id));
}

std::vector<int64_t> Shuffled(int64_t begin, int64_t end, uint32_t seed) {
  std::vector<int64_t> ids;
  for (int64_t id = begin; id < end; ++id) ids.push_back(id);
  std::shuffle(ids.begin(), ids.end(), std::mt19937(seed));
  return ids;
}

TEST(ValueKeyIndex, EmptyUntilAddedAndFindsNothing) {
  ValueKeyIndex index;
  EXPECT_TRUE(index.empty());
  EXPECT_EQ(index.Find(KeyOf(0)), std::nullopt);
  index.Add(0, KeyOf(0));
  EXPECT_FALSE(index.empty());
  EXPECT_EQ(index.Find(KeyOf(0)), 0);
}

TEST(ValueKeyIndex, IdsFoundInTheOrderTheyWereAdded) {
  ValueKeyIndex index;
  AddDense(index, 5000);
  for (int64_t id = 0; id < 5000; ++id) ASSERT_EQ(index.Find(KeyOf(id)), id) << "id " << id;
}

// BufferLiveRange lines skip thread-local values: lookups in id order with gaps, short ones (inside the
// cursor's window) and long ones (beyond it, through the sorted copy), and then id order again.
TEST(ValueKeyIndex, IdsFoundInIdOrderWithGaps) {
  ValueKeyIndex index;
  AddDense(index, 20000);
  int64_t id = 0;
  for (int step = 1; id < 20000; id += step, step = step % 150 + 7) {
    ASSERT_EQ(index.Find(KeyOf(id)), id) << "id " << id;
  }
  for (id = 0; id < 20000; ++id) ASSERT_EQ(index.Find(KeyOf(id)), id) << "id " << id;
}

TEST(ValueKeyIndex, IdsFoundInRandomOrder) {
  ValueKeyIndex index;
  AddDense(index, 5000);
  for (int64_t id : Shuffled(0, 5000, 1)) ASSERT_EQ(index.Find(KeyOf(id)), id) << "id " << id;
}

// Descending order never hits the cursor (it only looks forward), so every lookup is in the sorted copy.
TEST(ValueKeyIndex, IdsFoundInDescendingOrder) {
  ValueKeyIndex index;
  AddDense(index, 3000);
  for (int64_t id = 2999; id >= 0; --id) ASSERT_EQ(index.Find(KeyOf(id)), id) << "id " << id;
}

// Once a miss has built the sorted copy, later keys go to recent_ and are found there; ids far from the
// cursor (which sits after the last id found) are not reachable by the cursor window.
TEST(ValueKeyIndex, KeysAddedAfterTheSortedCopyAreFound) {
  ValueKeyIndex index;
  AddDense(index, 1000);
  ASSERT_EQ(index.Find(KeyOf(900)), 900);  // past the cursor window: builds the sorted copy
  ASSERT_EQ(index.Find(KeyOf(0)), 0);      // cursor back at 1
  for (int64_t id = 1000; id < 1100; ++id) index.Add(id, KeyOf(id));
  for (int64_t id : Shuffled(1000, 1100, 2)) {
    ASSERT_EQ(index.Find(KeyOf(id)), id) << "id " << id;
    ASSERT_EQ(index.Find(KeyOf(0)), 0);  // and the cursor back before them each time
  }
  EXPECT_EQ(index.Find(KeyOf(1100)), std::nullopt);
  // The old keys are still found, too.
  for (int64_t id : Shuffled(0, 1000, 3)) ASSERT_EQ(index.Find(KeyOf(id)), id) << "id " << id;
}

// Far more keys than recent_ holds (1024, or an eighth of the sorted copy) force rebuilds along the way.
TEST(ValueKeyIndex, ManyKeysAddedAfterTheSortedCopyAreFoundAcrossRebuilds) {
  ValueKeyIndex index;
  AddDense(index, 100);
  ASSERT_EQ(index.Find(KeyOf(99)), 99);  // past the window: sorted copy built
  for (int64_t id = 100; id < 10000; ++id) {
    index.Add(id, KeyOf(id));
    if (id % 997 == 0) {
      ASSERT_EQ(index.Find(KeyOf(id)), id) << "id " << id;  // found between rebuilds
    }
  }
  for (int64_t id : Shuffled(0, 10000, 4)) ASSERT_EQ(index.Find(KeyOf(id)), id) << "id " << id;
  EXPECT_EQ(index.Find(KeyOf(10000)), std::nullopt);
}

// Garbage ids: negative ones and ones far beyond the values added go to the sparse list, and are found in
// any order alongside dense ones, also when added after the sorted copy was built.
TEST(ValueKeyIndex, SparseAndNegativeIdsAreFound) {
  const std::vector<int64_t> garbage = {-1, -7, INT64_MIN, INT64_MAX, int64_t{1} << 40, 5'000'000'000};
  ValueKeyIndex index;
  AddDense(index, 50);
  for (int64_t id : garbage) index.Add(id, ValueKeyIndex::Key("garbage", std::to_string(id)));
  for (int64_t id : garbage) {
    ASSERT_EQ(index.Find(ValueKeyIndex::Key("garbage", std::to_string(id))), id) << "id " << id;
  }
  for (int64_t id = 0; id < 50; ++id) ASSERT_EQ(index.Find(KeyOf(id)), id) << "id " << id;
  // After the sorted copy: into recent_.
  index.Add(-123, ValueKeyIndex::Key("late", "{}"));
  index.Add(int64_t{1} << 50, ValueKeyIndex::Key("late", "{0}"));
  EXPECT_EQ(index.Find(ValueKeyIndex::Key("late", "{}")), -123);
  EXPECT_EQ(index.Find(ValueKeyIndex::Key("late", "{0}")), int64_t{1} << 50);
}

// An index of only garbage ids (no dense ones at all) still finds them.
TEST(ValueKeyIndex, OnlySparseIdsAreFound) {
  ValueKeyIndex index;
  for (int64_t i = 1; i <= 100; ++i) index.Add(-i, KeyOf(i));
  for (int64_t i : Shuffled(1, 101, 5)) ASSERT_EQ(index.Find(KeyOf(i)), -i) << "id " << -i;
}

TEST(ValueKeyIndex, AKeyNeverAddedIsNotFound) {
  ValueKeyIndex index;
  AddDense(index, 2000);
  EXPECT_EQ(index.Find(ValueKeyIndex::Key("fusion.1", "{}")), std::nullopt);  // id 1 is at {1}
  EXPECT_EQ(index.Find(ValueKeyIndex::Key("fusion.0", "{1}")), std::nullopt);
  EXPECT_EQ(index.Find(ValueKeyIndex::Key("fusion.2000", "{}")), std::nullopt);
  EXPECT_EQ(index.Find(ValueKeyIndex::Key("", "")), std::nullopt);
  // A miss does not disturb later lookups in id order.
  for (int64_t id = 0; id < 2000; ++id) ASSERT_EQ(index.Find(KeyOf(id)), id) << "id " << id;
}

TEST(ValueKeyIndex, TwoIdsWithOneKeyFindOneOfThem) {
  ValueKeyIndex index;
  const uint64_t key = ValueKeyIndex::Key("copy.3", "{}");
  index.Add(10, key);
  index.Add(20, key);
  auto found = index.Find(key);
  ASSERT_TRUE(found.has_value());
  EXPECT_TRUE(*found == 10 || *found == 20) << *found;
}

TEST(ValueKeyIndex, ClearEmptiesItAndItCanBeRefilled) {
  ValueKeyIndex index;
  AddDense(index, 3000);
  ASSERT_EQ(index.Find(KeyOf(2500)), 2500);  // sorted copy built
  index.Add(-5, KeyOf(-5));
  index.Clear();
  EXPECT_TRUE(index.empty());
  EXPECT_EQ(index.Find(KeyOf(0)), std::nullopt);
  EXPECT_EQ(index.Find(KeyOf(2500)), std::nullopt);
  EXPECT_EQ(index.Find(KeyOf(-5)), std::nullopt);
  // Refilled with other names at the same ids: only the new names are found.
  for (int64_t id = 0; id < 100; ++id) index.Add(id, ValueKeyIndex::Key("param." + std::to_string(id), "{}"));
  EXPECT_FALSE(index.empty());
  for (int64_t id : Shuffled(0, 100, 6)) {
    ASSERT_EQ(index.Find(ValueKeyIndex::Key("param." + std::to_string(id), "{}")), id) << "id " << id;
  }
  EXPECT_EQ(index.Find(KeyOf(50)), std::nullopt);
}

TEST(ValueKeyIndex, KeyIsNeverZeroAndDeterministic) {
  EXPECT_NE(ValueKeyIndex::Key("", ""), 0u);
  EXPECT_EQ(ValueKeyIndex::Key("fusion.7", "{0,1}"), ValueKeyIndex::Key("fusion.7", "{0,1}"));
  for (int64_t id = 0; id < 100000; ++id) ASSERT_NE(KeyOf(id), 0u) << "id " << id;
}

// The key hashes the two parts separately (the instruction's hash seeds the index's), so moving bytes across
// the split gives another key.
TEST(ValueKeyIndex, KeyDependsOnWhereTheSplitFalls) {
  EXPECT_NE(ValueKeyIndex::Key("a", "{}"), ValueKeyIndex::Key("a", "{0}"));
  EXPECT_NE(ValueKeyIndex::Key("a", "{}"), ValueKeyIndex::Key("a{", "}"));
  EXPECT_NE(ValueKeyIndex::Key("a", "{}"), ValueKeyIndex::Key("a{}", ""));
  EXPECT_NE(ValueKeyIndex::Key("a", "{}"), ValueKeyIndex::Key("", "a{}"));
  EXPECT_NE(ValueKeyIndex::Key("ab", ""), ValueKeyIndex::Key("", "ab"));
  EXPECT_NE(ValueKeyIndex::Key("", ""), ValueKeyIndex::Key("", "{}"));
  // Every split of the same bytes of a realistic name gives a distinct key.
  const std::string bytes = "custom-call.12{1,0}";
  std::set<uint64_t> keys;
  for (size_t split = 0; split <= bytes.size(); ++split) {
    keys.insert(ValueKeyIndex::Key(std::string_view(bytes).substr(0, split), std::string_view(bytes).substr(split)));
  }
  EXPECT_EQ(keys.size(), bytes.size() + 1);
}

// The real use: a buffer assignment of ~1.27 million values, looked up in id order (BufferLiveRange lines),
// every third one skipped as thread-local values are. (About 0.3 s in a Debug build, naming the values
// included; no time is asserted, as the test machines are shared.)
TEST(ValueKeyIndex, AMillionIdsInIdOrderAreFoundQuickly) {
  constexpr int64_t kValues = 1'000'000;
  std::vector<uint64_t> keys(kValues);
  for (int64_t id = 0; id < kValues; ++id) keys[id] = KeyOf(id);
  ValueKeyIndex index;
  for (int64_t id = 0; id < kValues; ++id) index.Add(id, keys[id]);
  int64_t found = 0;
  for (int64_t id = 0; id < kValues; ++id) {
    if (id % 3 == 2) continue;
    auto got = index.Find(keys[id]);
    ASSERT_EQ(got, id) << "id " << id;
    ++found;
  }
  EXPECT_EQ(found, 666'667);
}

}  // namespace
}  // namespace xladb::store
