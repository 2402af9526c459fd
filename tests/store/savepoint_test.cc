// Savepoint (store/backend/sql_connection.h): work inside it stays when it is released, and goes when it is
// rolled back or left unreleased (an exception on the way), while the transaction around it goes on.
#include <gtest/gtest.h>

#include <stdexcept>
#include <utility>

#include "store/backend/database.h"
#include "tests/store/test_dirs.h"

namespace xladb {
namespace {

int64_t Labels(store::SqlConnection& sql) {
  auto q = sql.Prepare("SELECT COUNT(*) FROM run_labels");
  return q->Step() ? q->Int(0) : -1;
}

void AddLabel(store::SqlConnection& sql, const char* key) {
  auto ins = sql.Prepare("INSERT INTO run_labels(run_id, key, value) VALUES (1, ?, 'v')");
  ins->Bind(1, key);
  ins->Execute();
}

TEST(Savepoint, ReleasedWorkStaysAndRolledBackOrAbandonedWorkGoes) {
  testing::TempDir tmp;
  auto db = store::Database::Open(tmp / "x.db");
  ASSERT_TRUE(db.ok()) << db.status().ToString();
  store::SqlConnection& sql = db.value()->connection();
  sql.Exec("INSERT INTO runs(run_id, name, source_path, run_time_us, run_time_source, created_at_us, updated_at_us) "
           "VALUES (1, 'r', '/r', 0, 'flag', 0, 0)");
  store::WriteTransaction transaction(sql);
  {
    store::Savepoint kept(sql, "kept");
    AddLabel(sql, "a");
    kept.Release();
  }
  {
    store::Savepoint dropped(sql, "dropped");
    AddLabel(sql, "b");
    dropped.RollBack();
  }
  try {
    store::Savepoint abandoned(sql, "abandoned");
    AddLabel(sql, "c");
    throw std::runtime_error("half-way");
  } catch (const std::runtime_error&) {
  }
  {
    store::Savepoint opened(sql, "moved");
    AddLabel(sql, "d");
    store::Savepoint owner(std::move(opened));  // the owner rolls it back; the moved-from one does nothing
  }
  EXPECT_EQ(Labels(sql), 1);
  transaction.Commit();
  EXPECT_EQ(Labels(sql), 1);
}

}  // namespace
}  // namespace xladb
