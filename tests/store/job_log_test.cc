// JobLog's states (store/admin/job_log.h): the names are the schema's ingest_jobs.state values and read back,
// and List filters by state only when one is given.
#include <gtest/gtest.h>

#include "store/admin/job_log.h"
#include "store/backend/database.h"
#include "tests/store/test_dirs.h"

namespace xladb {
namespace {

TEST(JobState, NamesAreTheSchemaValuesAndReadBack) {
  EXPECT_EQ(store::JobStateName(store::JobState::kQueued), "QUEUED");
  EXPECT_EQ(store::JobStateName(store::JobState::kRunning), "RUNNING");
  EXPECT_EQ(store::JobStateName(store::JobState::kSucceeded), "SUCCEEDED");
  EXPECT_EQ(store::JobStateName(store::JobState::kFailed), "FAILED");
  for (store::JobState state : store::kJobStates) EXPECT_EQ(store::ParseJobState(store::JobStateName(state)), state);
  EXPECT_EQ(store::ParseJobState("done"), std::nullopt);
  EXPECT_EQ(store::ParseJobState("queued"), std::nullopt);
  EXPECT_EQ(store::ParseJobState(""), std::nullopt);
}

TEST(JobLog, ListsEveryStateUnlessOneIsAskedForAndResumesTheUnfinished) {
  testing::TempDir tmp;
  auto db = store::Database::Open(tmp / "x.db");
  ASSERT_TRUE(db.ok()) << db.status().ToString();
  store::JobLog log(db.value().get());
  for (const char* id : {"job-a", "job-b"}) {
    store::JobRecord job;
    job.job_id = id;
    job.source = "path";
    job.path = "/runs/r";
    job.run_name = "r";
    job.created_at_us = id[4] == 'a' ? 1 : 2;
    ASSERT_TRUE(log.Insert(job).ok());
  }
  ASSERT_TRUE(log.SetState("job-a", store::JobState::kSucceeded, "").ok());

  auto all = log.List({});
  ASSERT_TRUE(all.ok()) << all.status().ToString();
  ASSERT_EQ(all->size(), 2u);
  EXPECT_EQ((*all)[0].job_id, "job-b");  // newest first
  EXPECT_EQ((*all)[0].state, store::JobState::kQueued);
  EXPECT_EQ((*all)[1].state, store::JobState::kSucceeded);
  EXPECT_GT((*all)[1].finished_at_us, 0);

  auto succeeded = log.List({"", store::JobState::kSucceeded, 10});
  ASSERT_TRUE(succeeded.ok());
  ASSERT_EQ(succeeded->size(), 1u);
  EXPECT_EQ((*succeeded)[0].job_id, "job-a");

  auto unfinished = log.Unfinished();
  ASSERT_TRUE(unfinished.ok());
  ASSERT_EQ(unfinished->size(), 1u);
  EXPECT_EQ((*unfinished)[0].job_id, "job-b");
}

}  // namespace
}  // namespace xladb
