// How long a group of files stays open (store/write/run_writer.h, NextGroupSeconds): at least max_seconds,
// stretched to kGroupSecondsPerRecountSecond times the last COMMIT's run-summary recount, at most
// max_stretched_seconds, and never for a writer that commits every file alone. The last test checks the
// writer's wiring: a COMMIT stretches the next group, a new run starts at max_seconds again.
#include <gtest/gtest.h>

#include <cstdint>
#include <string>

#include "ingest/dump_ingester.h"
#include "store/backend/database.h"
#include "store/write/run_writer.h"
#include "tests/store/test_dirs.h"

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

TEST(GroupLength, TheWriterStretchesAfterACommitAndStartsEachRunAtTheConfiguredLength) {
  testing::TempDir dir;
  auto db = store::Database::Open(dir / "store.db");
  ASSERT_TRUE(db.ok()) << db.status().ToString();
  // A length no recount is quick enough to keep: 50 times any measurable recount is longer than 1 ns. The
  // cap is far above what a fixture's recount stretches to.
  const store::GroupCommit group{1e-9, int64_t{1} << 40, 3600};
  store::RunWriter writer(db->get(), group);
  EXPECT_DOUBLE_EQ(writer.group_seconds(), 1e-9);
  ingest::DumpIngester ingester(&writer);
  ingest::IngestOptions options;
  options.run_name = "first";
  auto first = ingester.Ingest(std::string(XLADB_FIXTURE_DIR) + "/buffer_assignment", options);
  ASSERT_TRUE(first.ok()) << first.status().ToString();
  ASSERT_GT(first->Counted(ingest::FileVerdict::kIngested), 1);
  const double stretched = writer.group_seconds();
  EXPECT_GT(stretched, 1e-9);       // the COMMITs' recounts were timed and stretched the groups
  EXPECT_LT(stretched, 3600);       // by their time, not to the cap
  // The daemon keeps one writer across jobs: the next run begins with short groups again.
  ingest::RunSpec second;
  second.name = "second";
  auto next = writer.BeginRun(second);
  ASSERT_TRUE(next.ok()) << next.status().ToString();
  EXPECT_DOUBLE_EQ(writer.group_seconds(), 1e-9);
}

}  // namespace
}  // namespace xladb
