// The migration from schema version 9 to 10 (store/schema/migrate_v9.sql): a version-9 file (built from
// tests/fixtures/store/schema_v9.sql, the schema as version 9 shipped) gets the table store_counters, as a new
// file has it, empty until the first removal of interned rows counts one (store/facts/interned_removals.h).
#include <SQLiteCpp/SQLiteCpp.h>
#include <gtest/gtest.h>

#include <string>

#include "store/admin/run_lifecycle.h"
#include "store/backend/database.h"
#include "store/schema/schema_migrations.h"
#include "store/sqlite/sqlite_connection.h"
#include "tests/store/test_dirs.h"
#include "tests/store/test_ingest.h"

namespace xladb::store {
namespace {

TEST(SchemaMigrationV10, AVersion9FileGetsTheStoreCountersAndCountsItsFirstRemoval) {
  testing::TempDir tmp;
  const std::string schema_v9 = testing::ReadFile(std::string(XLADB_FIXTURE_DIR) + "/store/schema_v9.sql");
  ASSERT_NE(schema_v9.find("version 9"), std::string::npos) << "tests/fixtures/store/schema_v9.sql missing?";
  {
    SQLite::Database raw(tmp / "v9.db", SQLite::OPEN_READWRITE | SQLite::OPEN_CREATE);
    raw.exec(schema_v9);
    raw.exec("PRAGMA user_version = 9");
    ASSERT_FALSE(raw.tableExists("store_counters"));
  }
  auto db = Database::Open(tmp / "v9.db");
  ASSERT_TRUE(db.ok()) << db.status().ToString();
  SQLite::Database& sql = SqliteOf(*db.value());
  EXPECT_EQ(sql.execAndGet("PRAGMA user_version").getInt(), kSchemaVersion);
  EXPECT_EQ(sql.execAndGet("SELECT COUNT(*) FROM store_counters").getInt(), 0);
  auto fresh = Database::Open(tmp / "new.db");
  ASSERT_TRUE(fresh.ok()) << fresh.status().ToString();
  const std::string q = "SELECT sql FROM sqlite_schema WHERE name = 'store_counters'";
  EXPECT_EQ(sql.execAndGet(q).getString(), SqliteOf(*fresh.value()).execAndGet(q).getString());
  // A run ingested and deleted: its interned rows go, and the removal is counted.
  testing::MakeSeedRun(tmp / "run");
  ASSERT_TRUE(testing::IngestRun(*db.value(), tmp / "run", "r").ok());
  ASSERT_TRUE(DeleteRun(*db.value(), "r").ok());
  EXPECT_EQ(sql.execAndGet("SELECT COUNT(*) FROM shapes").getInt(), 0);
  EXPECT_EQ(sql.execAndGet("SELECT value FROM store_counters WHERE name = 'interned_removals'").getInt(), 1);
}

}  // namespace
}  // namespace xladb::store
