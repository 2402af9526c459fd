#include "base/arena_string_map.h"

#include <array>
#include <cstdint>
#include <limits>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include <gtest/gtest.h>

namespace xladb::ingest {
namespace {

using Numbers3 = std::array<uint64_t, 3>;

struct ReadBack {
  Numbers3 numbers;
  std::string bytes;
};

std::vector<ReadBack> ReadAll(const ByteArena& arena) {
  std::vector<ReadBack> records;
  arena.ForEach<3>([&](const Numbers3& numbers, std::string_view bytes) {
    records.push_back({numbers, std::string(bytes)});
  });
  return records;
}

// An instruction-like name, e.g. "fusion.1234{0}".
std::string Name(size_t i) { return "fusion." + std::to_string(i) + (i % 3 == 0 ? "{0}" : "{}"); }

// Test-only hashes that make keys collide.
uint64_t ConstantHash(std::string_view) { return 0x0123456789abcdefULL; }
uint64_t LowBitsOnlyHash(std::string_view key) {  // the map uses the top 32 bits: all of them are 0 here
  return ArenaStringMap::XxHash(key) & 0xffffffffULL;
}
uint64_t FirstByteHash(std::string_view key) {
  return key.empty() ? 0 : static_cast<uint64_t>(static_cast<unsigned char>(key[0])) << 56;
}

TEST(ByteArena, RecordsRoundTripInOrder) {
  ByteArena arena;
  const uint64_t kMax = std::numeric_limits<uint64_t>::max();
  const std::string with_nul("a\0b", 3);
  const char* first = arena.Append({0, 127, 128}, "fusion.1{}");
  const char* second = arena.Append({kMax, 16383, 16384}, with_nul);
  const char* third = arena.Append({5, 6, 0}, "");

  Numbers3 numbers{};
  EXPECT_EQ(ByteArena::Read(first, numbers), "fusion.1{}");
  EXPECT_EQ(numbers, (Numbers3{0, 127, 128}));
  EXPECT_EQ(ByteArena::Read(second, numbers), with_nul);
  EXPECT_EQ(numbers, (Numbers3{kMax, 16383, 16384}));
  EXPECT_EQ(ByteArena::Read(third, numbers), "");
  EXPECT_EQ(numbers, (Numbers3{5, 6, 0}));

  std::vector<ReadBack> all = ReadAll(arena);
  ASSERT_EQ(all.size(), 3u);
  EXPECT_EQ(all[0].bytes, "fusion.1{}");
  EXPECT_EQ(all[1].numbers, (Numbers3{kMax, 16383, 16384}));
  EXPECT_EQ(all[1].bytes, with_nul);
  EXPECT_EQ(all[2].numbers, (Numbers3{5, 6, 0}));
  EXPECT_EQ(all[2].bytes, "");
  EXPECT_EQ(arena.block_count(), 1u);
}

TEST(ByteArena, GrowsAcrossBlocksWithoutMovingRecords) {
  ByteArena arena;
  constexpr size_t kCount = 200000;  // about 3.6 MB of records: blocks of 4 KiB doubling to 1 MiB, then more
  std::vector<const char*> starts;
  std::vector<std::string_view> views;
  for (size_t i = 0; i < kCount; ++i) {
    const char* record = arena.Append({i, i * 1000, i % 7}, Name(i));
    starts.push_back(record);
    Numbers3 numbers{};
    views.push_back(ByteArena::Read(record, numbers));
  }
  EXPECT_GT(arena.block_count(), 10u);
  EXPECT_GT(arena.allocated_bytes(), 3 * ByteArena::kMaxBlockBytes);

  // Every record is still where it was put, and ForEach sees each once, in order.
  for (size_t i = 0; i < kCount; i += 997) {
    Numbers3 numbers{};
    std::string_view bytes = ByteArena::Read(starts[i], numbers);
    EXPECT_EQ(bytes.data(), views[i].data());
    EXPECT_EQ(bytes, Name(i));
    EXPECT_EQ(numbers, (Numbers3{i, i * 1000, i % 7}));
  }
  std::vector<ReadBack> all = ReadAll(arena);
  ASSERT_EQ(all.size(), kCount);
  for (size_t i = 0; i < kCount; ++i) {
    ASSERT_EQ(all[i].bytes, Name(i)) << i;
    ASSERT_EQ(all[i].numbers, (Numbers3{i, i * 1000, i % 7})) << i;
  }
}

TEST(ByteArena, RecordLargerThanABlockGetsItsOwnBlock) {
  ByteArena arena;
  arena.Append({1, 2, 3}, "small");
  const std::string big(ByteArena::kMaxBlockBytes * 2 + 5, 'x');
  const char* big_record = arena.Append({4, 5, 6}, big);
  arena.Append({7, 8, 9}, "after");
  EXPECT_EQ(arena.block_count(), 3u);

  Numbers3 numbers{};
  EXPECT_EQ(ByteArena::Read(big_record, numbers), big);
  std::vector<ReadBack> all = ReadAll(arena);
  ASSERT_EQ(all.size(), 3u);
  EXPECT_EQ(all[0].bytes, "small");
  EXPECT_EQ(all[1].bytes.size(), big.size());
  EXPECT_EQ(all[1].numbers, (Numbers3{4, 5, 6}));
  EXPECT_EQ(all[2].bytes, "after");
  EXPECT_EQ(all[2].numbers, (Numbers3{7, 8, 9}));
}

TEST(ByteArena, ClearFreesEverythingAndTheArenaFillsAgain) {
  ByteArena arena;
  for (size_t i = 0; i < 10000; ++i) arena.Append({i, i, i}, Name(i));
  EXPECT_GT(arena.allocated_bytes(), 0u);
  arena.Clear();
  EXPECT_EQ(arena.allocated_bytes(), 0u);
  EXPECT_EQ(arena.block_count(), 0u);
  EXPECT_TRUE(ReadAll(arena).empty());

  arena.Append({1, 2, 3}, "again");
  std::vector<ReadBack> all = ReadAll(arena);
  ASSERT_EQ(all.size(), 1u);
  EXPECT_EQ(all[0].bytes, "again");
  EXPECT_EQ(arena.allocated_bytes(), ByteArena::kFirstBlockBytes);
}

TEST(ArenaStringMap, InsertKeepsTheFirstValueAndFindReturnsIt) {
  ArenaStringMap map;
  EXPECT_EQ(map.Find("fusion.1"), nullptr);  // empty map: no table yet
  EXPECT_EQ(map.allocated_bytes(), 0u);

  auto [value, inserted] = map.Insert("fusion.1", 42);
  ASSERT_NE(value, nullptr);
  EXPECT_TRUE(inserted);
  EXPECT_EQ(*value, 42u);

  auto [again, inserted_again] = map.Insert("fusion.1", 7);
  EXPECT_FALSE(inserted_again);
  EXPECT_EQ(again, value);
  EXPECT_EQ(*again, 42u);
  EXPECT_EQ(map.size(), 1u);

  *map.Find("fusion.1") -= 2;  // values are writable in place
  EXPECT_EQ(*map.Find("fusion.1"), 40u);
  EXPECT_EQ(map.Find("fusion.2"), nullptr);
}

TEST(ArenaStringMap, KeysThatDifferOnlyInLengthOrANulByteAreDistinct) {
  ArenaStringMap map;
  const std::vector<std::string> keys = {"",  "a", std::string("a\0", 2), "ab", std::string("a\0b", 3),
                                         "b", "ba"};
  for (size_t i = 0; i < keys.size(); ++i) EXPECT_TRUE(map.Insert(keys[i], i).second) << i;
  EXPECT_EQ(map.size(), keys.size());
  for (size_t i = 0; i < keys.size(); ++i) {
    const uint64_t* value = map.Find(keys[i]);
    ASSERT_NE(value, nullptr) << i;
    EXPECT_EQ(*value, i);
  }
  EXPECT_EQ(map.Find("abc"), nullptr);
}

// Every key has the same hash: the table holds them all as distinct keys, each with its own value, and a
// missing key with the same hash is not found.
TEST(ArenaStringMap, EqualHashesNeverMergeOrDropKeys) {
  for (ArenaStringMap::HashFunction hash : {&ConstantHash, &LowBitsOnlyHash}) {
    ArenaStringMap map(hash);
    constexpr size_t kCount = 1000;  // grows the table from 16 to 2048 slots while every probe collides
    for (size_t i = 0; i < kCount; ++i) ASSERT_TRUE(map.Insert(Name(i), i * 10).second) << i;
    EXPECT_EQ(map.size(), kCount);
    for (size_t i = 0; i < kCount; ++i) {
      EXPECT_FALSE(map.Insert(Name(i), 1).second) << i;
      const uint64_t* value = map.Find(Name(i));
      ASSERT_NE(value, nullptr) << i;
      EXPECT_EQ(*value, i * 10) << i;
    }
    EXPECT_EQ(map.Find(Name(kCount)), nullptr);
    EXPECT_EQ(map.Find("fusion."), nullptr);
    EXPECT_EQ(map.size(), kCount);
  }
}

// Enough keys to grow the table from 16 to 2^19 slots and the key arena across many 1 MiB blocks; values and
// value pointers taken before the growth are still right after it.
TEST(ArenaStringMap, LookupsAfterManyGrowths) {
  ArenaStringMap map;
  constexpr size_t kCount = 300000;
  std::vector<uint64_t*> early;
  for (size_t i = 0; i < kCount; ++i) {
    auto [value, inserted] = map.Insert(Name(i), i);
    ASSERT_TRUE(inserted) << i;
    if (i < 100) early.push_back(value);
  }
  EXPECT_EQ(map.size(), kCount);
  EXPECT_GT(map.allocated_bytes(), 4 * ByteArena::kMaxBlockBytes);
  for (size_t i = 0; i < early.size(); ++i) {
    EXPECT_EQ(*early[i], i);
    EXPECT_EQ(map.Find(Name(i)), early[i]);
  }
  for (size_t i = 0; i < kCount; ++i) {
    const uint64_t* value = map.Find(Name(i));
    ASSERT_NE(value, nullptr) << i;
    ASSERT_EQ(*value, i) << i;
  }
  for (size_t i = kCount; i < kCount + 1000; ++i) EXPECT_EQ(map.Find(Name(i)), nullptr) << i;
}

// A weak hash (the first byte only) and a mix of repeated and new keys, checked step by step against
// std::unordered_map.
TEST(ArenaStringMap, AgreesWithUnorderedMapUnderAWeakHash) {
  ArenaStringMap map(&FirstByteHash);
  std::unordered_map<std::string, uint64_t> reference;
  uint64_t state = 12345;
  for (int step = 0; step < 6000; ++step) {
    state = state * 6364136223846793005ULL + 1442695040888963407ULL;
    const uint64_t r = state >> 33;
    std::string key = std::string(1, static_cast<char>('a' + r % 4)) + std::to_string(r % 1000);
    auto [value, inserted] = map.Insert(key, static_cast<uint64_t>(step));
    auto [it, ref_inserted] = reference.emplace(key, static_cast<uint64_t>(step));
    ASSERT_EQ(inserted, ref_inserted) << key;
    ASSERT_EQ(*value, it->second) << key;
  }
  EXPECT_EQ(map.size(), reference.size());
  for (const auto& [key, value] : reference) {
    const uint64_t* found = map.Find(key);
    ASSERT_NE(found, nullptr) << key;
    EXPECT_EQ(*found, value) << key;
  }
}

TEST(ArenaStringMap, ClearFreesEverythingAndTheMapFillsAgain) {
  ArenaStringMap map;
  for (size_t i = 0; i < 50000; ++i) map.Insert(Name(i), i);
  EXPECT_GT(map.allocated_bytes(), 0u);
  map.Clear();
  EXPECT_EQ(map.size(), 0u);
  EXPECT_EQ(map.allocated_bytes(), 0u);
  EXPECT_EQ(map.Find(Name(1)), nullptr);

  EXPECT_TRUE(map.Insert(Name(1), 5).second);
  ASSERT_NE(map.Find(Name(1)), nullptr);
  EXPECT_EQ(*map.Find(Name(1)), 5u);
  EXPECT_EQ(map.Find(Name(2)), nullptr);
  EXPECT_EQ(map.size(), 1u);
}

}  // namespace
}  // namespace xladb::ingest
