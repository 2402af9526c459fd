// store/query/rows_by_id.h on SQLite, where it steps one cached statement an id at a time: a row callback that
// throws half-way (a bug, std::bad_alloc on a big gate) must not leave that statement on a row, which would
// hold the connection's read snapshot: every later read of the connection (a daemon's thread serves many
// calls with it) would see the store as it was, and a writer's next transaction would fail.
#include <SQLiteCpp/SQLiteCpp.h>
#include <gtest/gtest.h>

#include <cstdint>
#include <stdexcept>
#include <string>

#include "store/backend/database.h"
#include "store/query/rows_by_id.h"
#include "tests/store/test_dirs.h"

namespace xladb {
namespace {

TEST(RowsById, ARowCallbackThatThrowsLeavesNoReadSnapshotOpen) {
  testing::TempDir tmp;
  const std::string path = tmp / "x.db";
  auto db = store::Database::Open(path);
  ASSERT_TRUE(db.ok()) << db.status().ToString();
  store::SqlConnection& sql = (*db)->connection();
  sql.Exec("CREATE TABLE t(id INTEGER PRIMARY KEY, v INTEGER); INSERT INTO t VALUES (1, 10), (2, 20), (3, 30)");
  const store::RowsById read("SELECT id, v FROM t", "id", "");
  EXPECT_THROW(read.ForEach(**db, {1, 2, 3}, [](const store::SqlStatement&) { throw std::runtime_error("x"); }),
               std::runtime_error);

  SQLite::Database other(path, SQLite::OPEN_READWRITE);
  other.exec("UPDATE t SET v = 31 WHERE id = 3");
  auto q = sql.Prepare("SELECT v FROM t WHERE id = 3");
  ASSERT_TRUE(q->Step());
  EXPECT_EQ(q->Int(0), 31) << "the connection still reads the snapshot of the read that threw";
  q->Reset();
  // And the same read again, whole.
  int64_t sum = 0;
  read.ForEach(**db, {1, 2, 3}, [&](const store::SqlStatement& row) { sum += row.Int(1); });
  EXPECT_EQ(sum, 10 + 20 + 31);
}

}  // namespace
}  // namespace xladb
