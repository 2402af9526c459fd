// Schema versions: a database of the current version opens as is; a newer one is refused with a message
// naming both versions; the schema is applied idempotently (opening twice changes nothing).
#include <SQLiteCpp/SQLiteCpp.h>
#include <gtest/gtest.h>

#include "store/database.h"
#include "tests/store/test_dirs.h"

namespace xladb::store {
namespace {

TEST(SchemaVersion, NewerDatabaseIsRefusedNamingBothVersions) {
  testing::TempDir tmp;
  std::string path = tmp / "x.db";
  ASSERT_TRUE(Database::Open(path).ok());
  {
    SQLite::Database raw(path, SQLite::OPEN_READWRITE);
    raw.exec("PRAGMA user_version = " + std::to_string(kSchemaVersion + 1));
  }
  for (auto mode : {Database::Mode::kReadWrite, Database::Mode::kReadOnly}) {
    auto db = Database::Open(path, mode);
    ASSERT_FALSE(db.ok());
    EXPECT_EQ(db.status().code(), Status::Code::kFailedPrecondition);
    EXPECT_NE(db.status().message().find(std::to_string(kSchemaVersion + 1)), std::string::npos);
    EXPECT_NE(db.status().message().find(std::to_string(kSchemaVersion)), std::string::npos);
  }
}

TEST(SchemaVersion, ReopeningKeepsTheSchemaAndVersion) {
  testing::TempDir tmp;
  std::string path = tmp / "x.db";
  ASSERT_TRUE(Database::Open(path).ok());
  int64_t objects = 0;
  {
    SQLite::Database raw(path, SQLite::OPEN_READONLY);
    objects = raw.execAndGet("SELECT COUNT(*) FROM sqlite_schema").getInt64();
    EXPECT_EQ(raw.execAndGet("PRAGMA user_version").getInt(), kSchemaVersion);
  }
  EXPECT_GT(objects, 30);
  ASSERT_TRUE(Database::Open(path).ok());
  SQLite::Database raw(path, SQLite::OPEN_READONLY);
  EXPECT_EQ(raw.execAndGet("SELECT COUNT(*) FROM sqlite_schema").getInt64(), objects);
  EXPECT_EQ(raw.execAndGet("PRAGMA journal_mode").getString(), "wal");
}

TEST(SchemaVersion, ANonDatabaseFileIsAClearError) {
  testing::TempDir tmp;
  testing::WriteFile(tmp / "notes.db", "these are my notes, not a database, and they are longer than a header\n");
  auto db = Database::Open(tmp / "notes.db");
  ASSERT_FALSE(db.ok());
  EXPECT_NE(db.status().message().find("notes.db"), std::string::npos) << db.status().message();
}

}  // namespace
}  // namespace xladb::store
