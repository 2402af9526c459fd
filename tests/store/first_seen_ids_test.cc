// FirstSeenIds: an id is first-seen once, whatever the order ids come in (growing the bits past earlier ones);
// ids below 0 or from kMaxIds on never are, so their rows take the upsert.
#include "store/write/rows/first_seen_ids.h"

#include <gtest/gtest.h>

#include <cstdint>

namespace xladb::store {
namespace {

TEST(FirstSeenIds, AnIdIsFirstSeenOnceInAnyOrder) {
  FirstSeenIds ids;
  EXPECT_TRUE(ids.Claim(5));
  EXPECT_TRUE(ids.Claim(0));
  EXPECT_TRUE(ids.Claim(1000));  // past the bits held so far
  EXPECT_FALSE(ids.Claim(5));
  EXPECT_FALSE(ids.Claim(0));
  EXPECT_FALSE(ids.Claim(1000));
  EXPECT_TRUE(ids.Claim(999));
  EXPECT_TRUE(ids.Claim(1001));
  for (int64_t id = 0; id < 2000; ++id) {
    const bool claimed_before = id == 0 || id == 5 || (id >= 999 && id <= 1001);
    EXPECT_EQ(ids.Claim(id), !claimed_before) << id;
  }
}

TEST(FirstSeenIds, IdsOutOfRangeAreNeverFirstSeen) {
  FirstSeenIds ids;
  EXPECT_FALSE(ids.Claim(-1));
  EXPECT_FALSE(ids.Claim(FirstSeenIds::kMaxIds));
  EXPECT_FALSE(ids.Claim(INT64_MAX));
  EXPECT_TRUE(ids.Claim(FirstSeenIds::kMaxIds - 1));
  EXPECT_FALSE(ids.Claim(FirstSeenIds::kMaxIds - 1));
}

}  // namespace
}  // namespace xladb::store
