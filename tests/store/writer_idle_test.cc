// Between files the writer holds no transaction: another connection of the daemon (its job log) may write,
// and the writer's next run still starts. A statement left on a row would keep a read transaction open, and
// the writer's next BEGIN IMMEDIATE would then fail with "database is locked" (it did once: the derived
// module facts' single-row statements).
#include <SQLiteCpp/SQLiteCpp.h>
#include <gtest/gtest.h>

#include "ingest/dump_ingester.h"
#include "store/sqlite/sqlite_connection.h"
#include "store/backend/database.h"
#include "store/write/run_writer.h"
#include "tests/store/test_dirs.h"

namespace xladb {
namespace {

TEST(WriterIdle, AnotherConnectionWritesBetweenRunsAndTheWriterGoesOn) {
  testing::TempDir tmp;
  testing::MakeSeedRun(tmp / "run-a");
  testing::MakeSeedRun(tmp / "run-b");
  auto db = store::Database::Open(tmp / "x.db");
  ASSERT_TRUE(db.ok()) << db.status().ToString();
  store::RunWriter writer(db.value().get());
  ingest::DumpIngester ingester(&writer);
  auto first = ingester.Ingest(tmp / "run-a", {});
  ASSERT_TRUE(first.ok()) << first.status().ToString();
  ASSERT_TRUE(first->errors.empty());

  auto other = store::Database::Open(tmp / "x.db");
  ASSERT_TRUE(other.ok());
  ASSERT_TRUE(other.value()->Exec("INSERT INTO run_labels(run_id, key, value) SELECT run_id, 'k', 'v' FROM runs").ok());

  auto second = ingester.Ingest(tmp / "run-b", {});
  ASSERT_TRUE(second.ok()) << second.status().ToString();
  EXPECT_TRUE(second->errors.empty());
  EXPECT_EQ(SqliteOf(*db.value()).execAndGet("SELECT COUNT(*) FROM runs").getInt(), 2);
  EXPECT_EQ(SqliteOf(*db.value()).execAndGet("SELECT COUNT(*) FROM module_memory").getInt(), 6);
}

}  // namespace
}  // namespace xladb
