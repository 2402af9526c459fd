// store/facts/interned_removals.h: a writer never writes the id of an interned row (shape, source path, name,
// whole text) that another connection removed, on either backend: ids it kept from an earlier transaction are
// forgotten once a removal was counted, and on PostgreSQL a removal waits for the writer's open group.
#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <functional>
#include <new>
#include <optional>
#include <string>
#include <thread>

#include "ingest/dump_ingester.h"
#include "store/admin/run_lifecycle.h"
#include "store/write/run_writer.h"
#include "tests/postgres/both_backends.h"
#include "tests/store/forwarding_target.h"

namespace xladb {
namespace {

using store::Database;
using store::SqlConnection;

// Ids that point at no row, over every column that refers to an interned table.
constexpr const char* kDanglingIds =
    "SELECT (SELECT COUNT(*) FROM buffer_values v WHERE v.shape_id IS NOT NULL AND NOT EXISTS "
    "         (SELECT 1 FROM shapes s WHERE s.shape_id = v.shape_id)) "
    "     + (SELECT COUNT(*) FROM instructions i WHERE i.shape_id IS NOT NULL AND NOT EXISTS "
    "         (SELECT 1 FROM shapes s WHERE s.shape_id = i.shape_id)) "
    "     + (SELECT COUNT(*) FROM instructions i WHERE i.source_file_id IS NOT NULL AND NOT EXISTS "
    "         (SELECT 1 FROM source_files f WHERE f.source_file_id = i.source_file_id)) "
    "     + (SELECT COUNT(*) FROM instructions i WHERE i.op_name_id IS NOT NULL AND NOT EXISTS "
    "         (SELECT 1 FROM names n WHERE n.name_id = i.op_name_id)) "
    "     + (SELECT COUNT(*) FROM instructions i WHERE i.computation_id IS NOT NULL AND NOT EXISTS "
    "         (SELECT 1 FROM names n WHERE n.name_id = i.computation_id)) "
    "     + (SELECT COUNT(*) FROM instructions i WHERE i.text_id IS NOT NULL AND NOT EXISTS "
    "         (SELECT 1 FROM long_texts t WHERE t.text_id = i.text_id))";
// The interned rows, table by table.
constexpr const char* kInternedCounts =
    "SELECT (SELECT COUNT(*) FROM shapes), (SELECT COUNT(*) FROM source_files), (SELECT COUNT(*) FROM names), "
    "(SELECT COUNT(*) FROM long_texts)";

class InternedRemovals : public testing::BothBackends {
 protected:
  void SetUp() override {
    BothBackends::SetUp();
    testing::MakeSeedRun(tmp_ / "run");
  }
  std::string PathOf(const SqlConnection& sql) {
    return sql.dialect() == store::SqlDialect::kSqlite ? std::string(tmp_ / "store.db") : pg_.uri();
  }
  Database& DatabaseOf(const SqlConnection& sql) {
    return sql.dialect() == store::SqlDialect::kSqlite ? *sqlite_ : *postgres_;
  }
  static ::testing::AssertionResult IngestAs(ingest::IngestTarget& target, const std::string& folder,
                                             const std::string& run) {
    ingest::DumpIngester ingester(&target);
    ingest::IngestOptions options;
    options.run_name = run;
    auto summary = ingester.Ingest(folder, options);
    if (!summary.ok()) return ::testing::AssertionFailure() << summary.status().ToString();
    if (!summary->errors.empty()) return ::testing::AssertionFailure() << summary->errors[0].reason;
    return ::testing::AssertionSuccess();
  }
};

// A writer keeps the ids of interned rows from one group to the next (xladbd's, for its whole life). A run
// deleted meanwhile through another connection (`xladb delete --db` beside the daemon) takes the interned rows
// only it referred to; when the writer ingests that run again, it stores them again. (It wrote the ids it
// kept: on SQLite, values and instructions pointing at no shape and no name, 2026-11-29.)
TEST_F(InternedRemovals, AWriterStoresAgainWhatAnotherConnectionRemovedSinceItLookedItUp) {
  for (SqlConnection* sql : Backends()) {
    SCOPED_TRACE(Name(*sql));
    store::RunWriter writer(&DatabaseOf(*sql));
    ASSERT_TRUE(IngestAs(writer, tmp_ / "run", "first"));
    const std::string interned = testing::Rows(*sql, kInternedCounts);
    ASSERT_NE(interned, "0|0|0|0\n");
    {
      auto other = Database::Open(PathOf(*sql));
      ASSERT_TRUE(other.ok()) << other.status().ToString();
      auto deleted = store::DeleteRun(*other.value(), "first");
      ASSERT_TRUE(deleted.ok()) << deleted.status().ToString();
    }
    EXPECT_EQ(testing::Rows(*sql, kInternedCounts), "0|0|0|0\n");  // the only run referred to them all
    EXPECT_EQ(testing::Rows(*sql, "SELECT value FROM store_counters WHERE name = 'interned_removals'"), "1\n");
    ASSERT_TRUE(IngestAs(writer, tmp_ / "run", "again"));
    EXPECT_EQ(testing::Rows(*sql, kDanglingIds), "0\n");
    EXPECT_EQ(testing::Rows(*sql, kInternedCounts), interned);
  }
}

// `xladb prune` removes the interned rows only the pruned runs' detail referred to, and counts it: the writer
// stores them again for the next run instead of writing the ids it kept.
TEST_F(InternedRemovals, APruneIsCountedAndTheWriterStoresAgainWhatItRemoved) {
  for (SqlConnection* sql : Backends()) {
    SCOPED_TRACE(Name(*sql));
    store::RunWriter writer(&DatabaseOf(*sql));
    ASSERT_TRUE(IngestAs(writer, tmp_ / "run", "old"));
    const std::string interned = testing::Rows(*sql, kInternedCounts);
    {
      auto other = Database::Open(PathOf(*sql));
      ASSERT_TRUE(other.ok()) << other.status().ToString();
      store::PruneOptions options;
      options.keep_detail_days = 30;
      options.now_us = int64_t{4102444800} * 1000000;  // 2100-01-01: the run is older than 30 days
      auto pruned = store::PruneDetail(*other.value(), options);
      ASSERT_TRUE(pruned.ok()) << pruned.status().ToString();
      EXPECT_EQ(pruned->runs, 1);
    }
    EXPECT_EQ(testing::Rows(*sql, "SELECT (SELECT COUNT(*) FROM shapes) + (SELECT COUNT(*) FROM names)"), "0\n");
    EXPECT_EQ(testing::Rows(*sql, "SELECT value FROM store_counters WHERE name = 'interned_removals'"), "1\n");
    ASSERT_TRUE(IngestAs(writer, tmp_ / "run", "new"));
    EXPECT_EQ(testing::Rows(*sql, kDanglingIds), "0\n");
    EXPECT_EQ(testing::Rows(*sql, kInternedCounts), interned);
  }
}

// `DeleteRun(run)` on a connection of its own, in a thread of its own from construction.
class Removal {
 public:
  Removal(const std::string& uri, const std::string& run)
      : thread_([this, uri, run] {
          auto other = Database::Open(uri);
          if (!other.ok()) {
            status_ = other.status();
            pid_ = -1;
            return;
          }
          pid_ = std::stoll(testing::Rows((*other)->connection(), "SELECT pg_backend_pid()"));
          status_ = store::DeleteRun(*other.value(), run).status();
        }) {}
  // True once pg_stat_activity shows the removal's own backend (other tests' schemas share the server and
  // the lock) where `condition` holds; false after 10 s, or when it could not connect.
  bool Seen(SqlConnection& watcher, const std::string& condition) {
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(10);
    while (pid_ >= 0 && std::chrono::steady_clock::now() < deadline) {
      const int64_t pid = pid_;
      if (pid > 0 && testing::Rows(watcher, "SELECT COUNT(*) FROM pg_stat_activity WHERE " + condition +
                                                " AND pid = " + std::to_string(pid)) != "0\n") {
        return true;
      }
      std::this_thread::sleep_for(std::chrono::milliseconds(5));
    }
    return false;
  }
  // Waits for the removal to end; what it returned.
  Status Finish() {
    thread_.join();
    return status_;
  }

 private:
  std::atomic<int64_t> pid_{0};
  Status status_ = Status::Internal("not run");
  std::jthread thread_;  // last: it starts once the members above exist
};

// Passes every call to `writer`, running `before_finish` while the run's last group is still open.
class FinishingLater : public testing::ForwardingTarget {
 public:
  FinishingLater(store::RunWriter& writer, std::function<void()> before_finish)
      : ForwardingTarget(writer), before_finish_(std::move(before_finish)) {}
  Status FinishRun(int64_t run_id, int64_t newest_mtime_us) override {
    before_finish_();
    return ForwardingTarget::FinishRun(run_id, newest_mtime_us);
  }

 private:
  std::function<void()> before_finish_;
};

// On PostgreSQL a writer looks its texts up on a connection of their own and commits the rows that refer to
// them at the end of its group. A run deleted meanwhile (another daemon's DeleteRun, sharing every text with
// the run being written) waits for that group: it then sees the group's rows, and keeps what they refer to.
// (Without the wait it removed them: the group committed ids of rows gone.)
TEST_F(InternedRemovals, OnPostgresqlARemovalWaitsForAWritersOpenGroup) {
  ASSERT_TRUE(testing::IngestRun(*postgres_, tmp_ / "run", "first").ok());
  const std::string interned = testing::Rows(postgres_->connection(), kInternedCounts);
  auto watcher = Database::Open(pg_.uri());
  ASSERT_TRUE(watcher.ok()) << watcher.status().ToString();
  // One group for the whole run.
  store::RunWriter writer(postgres_.get(), store::GroupCommit{.max_seconds = 3600, .max_bytes = int64_t{1} << 40});
  std::optional<Removal> removal;
  bool waited = false;
  FinishingLater target(writer, [&] {
    removal.emplace(pg_.uri(), "first");
    waited = removal->Seen((*watcher)->connection(), "wait_event_type = 'Lock' AND wait_event = 'advisory'");
  });
  ASSERT_TRUE(IngestAs(target, tmp_ / "run", "again"));
  ASSERT_TRUE(removal.has_value());
  const Status deleted = removal->Finish();
  EXPECT_TRUE(waited) << "the removal did not wait for the open group";
  EXPECT_TRUE(deleted.ok()) << deleted.ToString();
  EXPECT_EQ(testing::Rows(postgres_->connection(), kDanglingIds), "0\n");
  EXPECT_EQ(testing::Rows(postgres_->connection(), kInternedCounts), interned);
  EXPECT_EQ(testing::Rows(postgres_->connection(), "SELECT name FROM runs"), "again\n");
}

// A group that begins while a removal holds the lock waits for it and then reads its count, so the writer
// forgets the ids it kept from before the removal. (A count read before the lock, or with a snapshot taken
// before the wait, would miss the removal and write those ids.) The removal is held open by a trigger that
// sleeps in its delete of the run's row, after it took the lock and before it removes the interned rows.
TEST_F(InternedRemovals, OnPostgresqlAGroupBeginningDuringARemovalWaitsForItAndThenForgets) {
  store::RunWriter writer(postgres_.get());
  ASSERT_TRUE(IngestAs(writer, tmp_ / "run", "first"));
  const std::string interned = testing::Rows(postgres_->connection(), kInternedCounts);
  postgres_->connection().Exec(
      "CREATE FUNCTION slow_delete() RETURNS trigger LANGUAGE plpgsql AS $$ BEGIN PERFORM pg_sleep(1); "
      "RETURN OLD; END $$; "
      "CREATE TRIGGER slow_delete BEFORE DELETE ON runs FOR EACH ROW EXECUTE FUNCTION slow_delete()");
  auto watcher = Database::Open(pg_.uri());
  ASSERT_TRUE(watcher.ok()) << watcher.status().ToString();
  Removal removal(pg_.uri(), "first");
  ASSERT_TRUE(removal.Seen((*watcher)->connection(), "wait_event = 'PgSleep'")) << "the removal never held the lock";
  ASSERT_TRUE(IngestAs(writer, tmp_ / "run", "again"));  // its first group waits for the removal's commit
  const Status deleted = removal.Finish();
  EXPECT_TRUE(deleted.ok()) << deleted.ToString();
  EXPECT_EQ(testing::Rows(postgres_->connection(), kDanglingIds), "0\n");
  EXPECT_EQ(testing::Rows(postgres_->connection(), kInternedCounts), interned);
  EXPECT_EQ(testing::Rows(postgres_->connection(), "SELECT name FROM runs"), "again\n");
}

// A throw in the middle of a file (a bug, std::bad_alloc) where the writer lives on (the daemon fails the job
// and keeps its writer): the run is finished before the throw goes on, so the writer's connection is left with
// no transaction and no lock of the interned rows, and a removal does not wait for the writer's next job. (The
// group stayed open in that case: a removal waited for it, and every new group of every writer behind that.)
TEST_F(InternedRemovals, OnPostgresqlAThrowInTheMiddleOfAFileLeavesNoLockForARemovalToWaitFor) {
  store::RunWriter writer(postgres_.get());
  ASSERT_TRUE(IngestAs(writer, tmp_ / "run", "first"));
  std::string pid = testing::Rows(postgres_->connection(), "SELECT pg_backend_pid()");
  pid.pop_back();  // its newline
  testing::ThrowingTarget throwing(writer, testing::kSeed000FileName);
  ingest::IngestOptions again;
  again.run_name = "again";
  EXPECT_THROW((void)ingest::DumpIngester(&throwing).Ingest(tmp_ / "run", again), std::bad_alloc);

  auto watcher = Database::Open(pg_.uri());
  ASSERT_TRUE(watcher.ok()) << watcher.status().ToString();
  ASSERT_EQ(testing::Rows((*watcher)->connection(), "SELECT state FROM pg_stat_activity WHERE pid = " + pid), "idle\n");
  ASSERT_EQ(testing::Rows((*watcher)->connection(),
                          "SELECT COUNT(*) FROM pg_locks WHERE locktype = 'advisory' AND pid = " + pid),
            "0\n");
  Removal removal(pg_.uri(), "first");
  const Status deleted = removal.Finish();
  EXPECT_TRUE(deleted.ok()) << deleted.ToString();
  ASSERT_TRUE(IngestAs(writer, tmp_ / "run", "again"));
  EXPECT_EQ(testing::Rows(postgres_->connection(), kDanglingIds), "0\n");
  EXPECT_EQ(testing::Rows(postgres_->connection(), "SELECT name FROM runs"), "again\n");
  EXPECT_EQ(testing::Rows(postgres_->connection(), "SELECT COUNT(*) FROM dump_files WHERE verdict = 'ingested'"), "5\n");
}

}  // namespace
}  // namespace xladb
