// The read-only SQL endpoint: what it refuses, what it allows, and its limits, on a real database.
#include "store/sql_query.h"

#include <gtest/gtest.h>

#include "ingest/dump_ingester.h"
#include "store/run_writer.h"
#include "tests/store/test_dirs.h"

namespace xladb::store {
namespace {

class SqlQueryTest : public ::testing::Test {
 protected:
  void SetUp() override {
    std::string run = tmp_ / "run";
    testing::MakeSeedRun(run);
    {
      auto rw = Database::Open(tmp_ / "x.db");
      ASSERT_TRUE(rw.ok());
      RunWriter writer(rw.value().get());
      ingest::DumpIngester ingester(&writer);
      ASSERT_TRUE(ingester.Ingest(run, {}).ok());
    }
    auto ro = Database::Open(tmp_ / "x.db", Database::Mode::kReadOnly);
    ASSERT_TRUE(ro.ok());
    db_ = std::move(ro.value());
  }

  Status Run(const std::string& sql, SqlLimits limits = {}, int64_t* rows = nullptr, bool* truncated = nullptr) {
    int64_t n = 0;
    Status st = RunReadOnlySql(
        *db_, sql, limits, [](const std::vector<SqlColumn>&) {},
        [&](const std::vector<SqlValue>&) {
          ++n;
          return true;
        },
        truncated);
    if (rows) *rows = n;
    return st;
  }

  testing::TempDir tmp_;
  std::unique_ptr<Database> db_;
};

TEST_F(SqlQueryTest, RefusesEverythingButReading) {
  for (const char* sql : {"DELETE FROM runs", "UPDATE runs SET name = 'x'", "INSERT INTO runs(name) VALUES ('x')",
                          "DROP TABLE runs", "CREATE TABLE t(x)", "ATTACH DATABASE ':memory:' AS m",
                          "PRAGMA journal_mode = DELETE", "PRAGMA writable_schema = 1",
                          "SELECT load_extension('libx')", "BEGIN", "VACUUM"}) {
    Status st = Run(sql);
    EXPECT_FALSE(st.ok()) << sql;
    EXPECT_TRUE(st.code() == Status::Code::kPermissionDenied || st.code() == Status::Code::kInvalidArgument)
        << sql << ": " << st.ToString();
  }
  int64_t runs = 0;
  ASSERT_TRUE(Run("SELECT * FROM runs", {}, &runs).ok());
  EXPECT_EQ(runs, 1);  // nothing was changed
  EXPECT_EQ(Run("SELECT 1; DELETE FROM runs").code(), Status::Code::kInvalidArgument);
}

TEST_F(SqlQueryTest, ReadsViewsJsonAndIntrospection) {
  int64_t rows = 0;
  EXPECT_TRUE(Run("SELECT * FROM value_uses", {}, &rows).ok());
  EXPECT_GT(rows, 0);
  EXPECT_TRUE(Run("PRAGMA table_info(buffer_values)", {}, &rows).ok());
  EXPECT_EQ(rows, 15);  // the columns of buffer_values in schema.sql
  EXPECT_TRUE(Run("SELECT name FROM sqlite_schema WHERE type = 'view'", {}, &rows).ok());
  EXPECT_GE(rows, 8);
}

TEST_F(SqlQueryTest, RowLimitTruncatesTimeAndByteLimitsAreErrors) {
  int64_t rows = 0;
  bool truncated = false;
  SqlLimits limits;
  limits.max_rows = 5;
  ASSERT_TRUE(Run("SELECT * FROM buffer_values", limits, &rows, &truncated).ok());
  EXPECT_EQ(rows, 5);
  EXPECT_TRUE(truncated);

  SqlLimits slow;
  slow.timeout_ms = 100;
  Status st = Run("WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM c) SELECT COUNT(*) FROM c", slow);
  EXPECT_EQ(st.code(), Status::Code::kResourceExhausted) << st.ToString();
  EXPECT_NE(st.message().find("time limit"), std::string::npos);

  SqlLimits small;
  small.max_bytes = 1000;
  st = Run("SELECT text FROM long_texts", small);
  EXPECT_EQ(st.code(), Status::Code::kResourceExhausted) << st.ToString();
  EXPECT_NE(st.message().find("bytes"), std::string::npos);
}

}  // namespace
}  // namespace xladb::store
