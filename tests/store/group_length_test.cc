// How long a group of files stays open (store/write/run_writer.h, NextGroupSeconds): at least max_seconds,
// stretched to kGroupSecondsPerRecountSecond times the last COMMIT's run-summary recount, at most
// max_stretched_seconds, and never for a writer that commits every file alone.
#include <gtest/gtest.h>

#include <cstdint>

#include "store/write/run_writer.h"

namespace xladb {
namespace {

TEST(GroupLength, AQuickRecountKeepsTheConfiguredLength) {
  const store::GroupCommit group;  // 0.1 s
  EXPECT_DOUBLE_EQ(store::NextGroupSeconds(group, 0), 0.1);
  EXPECT_DOUBLE_EQ(store::NextGroupSeconds(group, 0.001), 0.1);  // 50 ms stretched: shorter, so 0.1 s
}

TEST(GroupLength, ASlowRecountStretchesTheNextGroupUpToTheLimit) {
  const store::GroupCommit group;
  EXPECT_DOUBLE_EQ(store::NextGroupSeconds(group, 0.01), 0.5);  // 10 ms of recount: a 0.5 s group (2%)
  EXPECT_DOUBLE_EQ(store::NextGroupSeconds(group, 0.025), 1.25);
  EXPECT_DOUBLE_EQ(store::NextGroupSeconds(group, 1.0), 2.0);   // capped at max_stretched_seconds
  store::GroupCommit wider;
  wider.max_stretched_seconds = 10;
  EXPECT_DOUBLE_EQ(store::NextGroupSeconds(wider, 1.0), 10);
}

TEST(GroupLength, NeverShorterThanConfigured) {
  const store::GroupCommit long_groups{60, int64_t{1} << 30};
  EXPECT_DOUBLE_EQ(store::NextGroupSeconds(long_groups, 1.0), 60);
}

TEST(GroupLength, EveryFileAloneStaysAlone) {
  const store::GroupCommit alone{0, 0};
  EXPECT_DOUBLE_EQ(store::NextGroupSeconds(alone, 0), 0);
  EXPECT_DOUBLE_EQ(store::NextGroupSeconds(alone, 1.0), 0);
}

}  // namespace
}  // namespace xladb
