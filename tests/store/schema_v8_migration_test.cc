// The migration from schema version 7 to 8 (store/schema/migrate_v7.sql): a version-7 file's view
// module_matches is replaced by schema.sql's, whatever text it held, and the file then has the schema of a
// new one. (That the view's rows did not change is the golden case corpus-runs' module_matches.csv, every
// ordered pair of the corpus runs, read through the new text.)
#include <SQLiteCpp/SQLiteCpp.h>
#include <gtest/gtest.h>

#include <string>

#include "store/backend/database.h"
#include "store/schema/schema_migrations.h"
#include "store/sqlite/sqlite_connection.h"
#include "tests/store/test_dirs.h"

namespace xladb::store {
namespace {

std::string ViewText(SQLite::Database& sql, const char* name) {
  SQLite::Statement q(sql, "SELECT sql FROM sqlite_schema WHERE type = 'view' AND name = ?");
  q.bind(1, name);
  return q.executeStep() ? q.getColumn(0).getString() : std::string();
}

TEST(SchemaMigrationV8, AVersion7FileGetsTheNewModuleMatchesView) {
  testing::TempDir tmp;
  {
    // Version 8's schema (tests/fixtures/store/schema_v8.sql) with version 7's view text in its place.
    const std::string schema_v8 = testing::ReadFile(std::string(XLADB_FIXTURE_DIR) + "/store/schema_v8.sql");
    ASSERT_NE(schema_v8.find("version 8"), std::string::npos) << "tests/fixtures/store/schema_v8.sql missing?";
    SQLite::Database raw((tmp / "v7.db").c_str(), SQLite::OPEN_READWRITE | SQLite::OPEN_CREATE);
    raw.exec(schema_v8);
    raw.exec("DROP VIEW module_matches");
    raw.exec("CREATE VIEW module_matches AS SELECT 7 AS stored_by_version_7");
    raw.exec("PRAGMA user_version = 7");
  }
  auto migrated = Database::Open(tmp / "v7.db");
  ASSERT_TRUE(migrated.ok()) << migrated.status().ToString();
  auto fresh = Database::Open(tmp / "new.db");
  ASSERT_TRUE(fresh.ok()) << fresh.status().ToString();
  SQLite::Database& sql = SqliteOf(*migrated.value());
  EXPECT_EQ(sql.execAndGet("PRAGMA user_version").getInt(), kSchemaVersion);
  const std::string text = ViewText(sql, "module_matches");
  EXPECT_EQ(text.find("stored_by_version_7"), std::string::npos) << text;
  EXPECT_EQ(text, ViewText(SqliteOf(*fresh.value()), "module_matches"));
  EXPECT_NE(text.find("program_rank"), std::string::npos) << text;
}

}  // namespace
}  // namespace xladb::store
