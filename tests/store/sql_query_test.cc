// The read-only SQL endpoint: what it refuses, what it allows, and its limits, on a real database.
#include "store/schema/schema_migrations.h"
#include "store/sqlite/sqlite_connection.h"
#include "store/sql_endpoint.h"

#include <gtest/gtest.h>
#include <sqlite3.h>

#include <cstdio>
#include <limits>

#include "ingest/dump_ingester.h"
#include "store/sqlite/query_temp_storage.h"
#include "store/write/run_writer.h"
#include "tests/store/peak_rss.h"
#include "tests/store/test_dirs.h"

namespace xladb::store {
namespace {

using testing::PeakRssProbe;

// Sets the process-wide temp-storage limit for one test, and its high-water mark back to what is in use.
class TempStorageLimitScope {
 public:
  explicit TempStorageLimitScope(int64_t bytes) : previous_(QueryTempStorageLimit()) {
    SetQueryTempStorageLimit(bytes);
    ResetQueryTempStorageHighWater();
  }
  ~TempStorageLimitScope() { SetQueryTempStorageLimit(previous_); }

 private:
  int64_t previous_;
};

// An ORDER BY over `rows` generated rows of (x, 100 random bytes): about 110 bytes a row to sort, so from a
// few hundred thousand rows on it outgrows a reader's 16 MiB cache and spills to temp files.
std::string BigSort(int64_t rows) {
  return "SELECT x, b FROM (WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM c LIMIT " +
         std::to_string(rows) + ") SELECT x, randomblob(100) AS b FROM c) ORDER BY b";
}

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

  // Runs `sql` and keeps every row.
  Status Collect(const std::string& sql, const SqlLimits& limits, std::vector<std::vector<SqlValue>>* rows) {
    return RunReadOnlySql(
        *db_, sql, limits, [](const std::vector<SqlColumn>&) {},
        [&](const std::vector<SqlValue>& row) {
          rows->push_back(row);
          return true;
        });
  }

  testing::TempDir tmp_;
  std::unique_ptr<Database> db_;
};

TEST_F(SqlQueryTest, BlobsAndTextKeepTheirTypeAndBytes) {
  std::vector<std::vector<SqlValue>> rows;
  ASSERT_TRUE(Collect("SELECT x'00ff41', CAST(x'ff41' AS TEXT), 'ok', 7, 2.5, NULL, x''", {}, &rows).ok());
  ASSERT_EQ(rows.size(), 1u);
  const std::vector<SqlValue>& r = rows[0];
  ASSERT_EQ(r.size(), 7u);
  EXPECT_EQ(r[0], SqlValue(SqlBlob{std::string("\0\xff" "A", 3)}));
  EXPECT_EQ(r[1], SqlValue(std::string("\xff" "A")));  // TEXT that is not UTF-8 stays byte for byte
  EXPECT_EQ(r[2], SqlValue(std::string("ok")));
  EXPECT_EQ(r[3], SqlValue(int64_t{7}));
  EXPECT_EQ(r[4], SqlValue(2.5));
  EXPECT_EQ(r[5], SqlValue(std::monostate{}));
  EXPECT_EQ(r[6], SqlValue(SqlBlob{}));  // zero bytes, still a BLOB

  rows.clear();  // the reproduction: one column, a BLOB in one row and TEXT in the next
  ASSERT_TRUE(Collect("SELECT 1 AS a, x'ff' AS b UNION ALL SELECT 2, 'ok'", {}, &rows).ok());
  ASSERT_EQ(rows.size(), 2u);
  EXPECT_EQ(rows[0][1], SqlValue(SqlBlob{"\xff"}));
  EXPECT_EQ(rows[1][1], SqlValue(std::string("ok")));
}

TEST_F(SqlQueryTest, PerValueCapRefusesAValueBeforeSqliteBuildsIt) {
  sqlite3* handle = SqliteOf(*db_).getHandle();
  const int length_before = sqlite3_limit(handle, SQLITE_LIMIT_LENGTH, -1);
  SqlLimits limits;
  limits.max_value_bytes = 1 << 20;
  PeakRssProbe rss;
  ASSERT_TRUE(rss.valid()) << "could not reset the peak-RSS mark; this test cannot measure";
  Status st = Run("SELECT hex(zeroblob(499000000))", limits);
  const int64_t growth = rss.growth();
  EXPECT_EQ(st.code(), Status::Code::kResourceExhausted) << st.ToString();
  EXPECT_NE(st.message().find("per-value limit of 1048576 bytes"), std::string::npos) << st.message();
  EXPECT_LT(growth, 16 << 20);  // building the blob takes 499 MB, its hex 998 MB
  RecordProperty("peak_rss_growth_bytes", std::to_string(growth));
  std::printf("peak RSS growth for hex(zeroblob(499000000)) under a 1 MiB value cap: %lld bytes\n",
              static_cast<long long>(growth));
  EXPECT_EQ(sqlite3_limit(handle, SQLITE_LIMIT_LENGTH, -1), length_before);  // restored after the error

  // hex() doubles its input: 1000 zero bytes make 2000 characters, exactly at a cap of 2000.
  std::vector<std::vector<SqlValue>> rows;
  limits.max_value_bytes = 2000;
  ASSERT_TRUE(Collect("SELECT hex(zeroblob(1000))", limits, &rows).ok());
  ASSERT_EQ(rows.size(), 1u);
  EXPECT_EQ(rows[0][0], SqlValue(std::string(2000, '0')));
  limits.max_value_bytes = 1999;
  EXPECT_EQ(Run("SELECT hex(zeroblob(1000))", limits).code(), Status::Code::kResourceExhausted);
  rows.clear();  // a BLOB of exactly the cap passes, one byte more does not
  ASSERT_TRUE(Collect("SELECT zeroblob(1999)", limits, &rows).ok());
  ASSERT_EQ(rows.size(), 1u);
  EXPECT_EQ(rows[0][0], SqlValue(SqlBlob{std::string(1999, '\0')}));
  EXPECT_EQ(Run("SELECT zeroblob(2000)", limits).code(), Status::Code::kResourceExhausted);
  EXPECT_EQ(Run("SELECT 'x' || hex(zeroblob(1000))", limits).code(), Status::Code::kResourceExhausted);

  // A stored value longer than the cap is refused as it is read.
  const int64_t longest =
      SqliteOf(*db_).execAndGet("SELECT max(length(CAST(text AS BLOB))) FROM long_texts").getInt64();
  ASSERT_GT(longest, 1);
  limits.max_value_bytes = longest;
  EXPECT_TRUE(Run("SELECT text FROM long_texts", limits).ok());
  limits.max_value_bytes = longest - 1;
  st = Run("SELECT text FROM long_texts", limits);
  EXPECT_EQ(st.code(), Status::Code::kResourceExhausted) << st.ToString();
  EXPECT_EQ(sqlite3_limit(handle, SQLITE_LIMIT_LENGTH, -1), length_before);
}

TEST_F(SqlQueryTest, PerResponseCapCountsEveryValueStreamed) {
  const std::string ten_blobs =
      "WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM c LIMIT 10) SELECT randomblob(100) FROM c";
  SqlLimits limits;
  limits.max_bytes = 1000;  // ten values of 100 bytes
  int64_t rows = 0;
  ASSERT_TRUE(Run(ten_blobs, limits, &rows).ok());
  EXPECT_EQ(rows, 10);
  limits.max_bytes = 999;
  Status st = Run(ten_blobs, limits, &rows);
  EXPECT_EQ(st.code(), Status::Code::kResourceExhausted) << st.ToString();
  EXPECT_NE(st.message().find("per-response limit of 999 bytes"), std::string::npos) << st.message();
  EXPECT_EQ(rows, 9);  // the tenth value was refused before it was passed on
}

TEST_F(SqlQueryTest, ReadersKeepTempDataInFilesAndSortInTheCallingThread) {
  EXPECT_EQ(SqliteOf(*db_).execAndGet("PRAGMA temp_store").getInt(), 1);  // 1 = FILE
  EXPECT_EQ(SqliteOf(*db_).execAndGet("PRAGMA threads").getInt(), 0);
}

TEST_F(SqlQueryTest, TempStorageCapStopsASpillingSort) {
  constexpr int64_t kCap = 4 << 20;
  TempStorageLimitScope scope(kCap);
  Status st = Run(BigSort(3000000));
  EXPECT_EQ(st.code(), Status::Code::kResourceExhausted) << st.ToString();
  EXPECT_NE(st.message().find("temp storage"), std::string::npos) << st.message();
  EXPECT_NE(st.message().find("limit of 4194304 bytes"), std::string::npos) << st.message();
  EXPECT_GT(QueryTempStorageHighWater(), kCap / 2);  // the sort did spill through the counted files …
  EXPECT_LE(QueryTempStorageHighWater(), kCap);      // … and no write went past the cap
  EXPECT_EQ(QueryTempStorageInUse(), 0);
}

TEST_F(SqlQueryTest, SortWithinTheTempCapSucceedsWithBoundedMemoryAndGivesTheBytesBack) {
  constexpr int64_t kRows = 400000;  // about 44 MB to sort
  TempStorageLimitScope scope(int64_t{1} << 30);
  PeakRssProbe rss;
  ASSERT_TRUE(rss.valid()) << "could not reset the peak-RSS mark; this test cannot measure";
  int64_t n = 0;
  int64_t in_use_while_streaming = 0;
  bool sorted = true;
  std::string previous;
  Status st = RunReadOnlySql(
      *db_, BigSort(kRows), {}, [](const std::vector<SqlColumn>&) {},
      [&](const std::vector<SqlValue>& row) {
        const auto* b = std::get_if<SqlBlob>(&row[1]);
        if (b == nullptr || b->bytes.size() != 100) return sorted = false;
        if (n == 0) in_use_while_streaming = QueryTempStorageInUse();
        if (n > 0 && b->bytes < previous) sorted = false;  // std::string compares bytes unsigned, as SQLite does
        previous = b->bytes;
        ++n;
        return true;
      });
  const int64_t growth = rss.growth();
  ASSERT_TRUE(st.ok()) << st.ToString();
  EXPECT_EQ(n, kRows);
  EXPECT_TRUE(sorted);
  EXPECT_GT(in_use_while_streaming, 16 << 20);  // the part of 44 MB past the 16 MiB cache, charged while open
  EXPECT_GE(QueryTempStorageHighWater(), in_use_while_streaming);
  EXPECT_EQ(QueryTempStorageInUse(), 0);  // closing the sort's files gave every byte back
  // The sorter holds at most the reader's 16 MiB cache_size in memory: about 13 MB of growth measured here,
  // against 54 MB when the same sort stays in memory (temp_store=MEMORY, run alone). Under ASan the
  // quarantine of freed blocks (256 MiB by default) counts as resident too.
#if defined(__SANITIZE_ADDRESS__)
  constexpr int64_t kPeakRssBound = int64_t{320} << 20;
#else
  constexpr int64_t kPeakRssBound = int64_t{32} << 20;
#endif
  EXPECT_LT(growth, kPeakRssBound);
  RecordProperty("peak_rss_growth_bytes", std::to_string(growth));
  std::printf("peak RSS growth for sorting %lld rows (%lld bytes spilled): %lld bytes\n",
              static_cast<long long>(kRows), static_cast<long long>(QueryTempStorageHighWater()),
              static_cast<long long>(growth));
}

TEST_F(SqlQueryTest, TempCapIsSharedByAllConnections) {
  auto other = Database::Open(tmp_ / "x.db", Database::Mode::kReadOnly);
  ASSERT_TRUE(other.ok());
  TempStorageLimitScope scope(int64_t{1} << 30);
  Status inner;
  int64_t n = 0;
  // While the first sort streams, its spilled files hold their bytes: a second query that needs more than
  // what is left under a lowered cap is refused.
  Status outer = RunReadOnlySql(
      *db_, BigSort(400000), {}, [](const std::vector<SqlColumn>&) {},
      [&](const std::vector<SqlValue>&) {
        if (n++ == 0) {
          SetQueryTempStorageLimit(QueryTempStorageInUse() + (1 << 20));
          inner = RunReadOnlySql(
              *other.value(), BigSort(400000), {}, [](const std::vector<SqlColumn>&) {},
              [](const std::vector<SqlValue>&) { return true; });
        }
        return true;
      });
  EXPECT_TRUE(outer.ok()) << outer.ToString();  // reading back what it spilled needs no more room
  EXPECT_EQ(n, 400000);
  EXPECT_EQ(inner.code(), Status::Code::kResourceExhausted) << inner.ToString();
  EXPECT_NE(inner.message().find("temp storage"), std::string::npos) << inner.message();
  EXPECT_EQ(QueryTempStorageInUse(), 0);
}

TEST_F(SqlQueryTest, CommentsAndEmptyStatementsMayFollowTheStatement) {
  for (const char* sql : {"SELECT 1; -- c", "SELECT 1; /* c */ ;", "SELECT 1;;", "SELECT 1 -- c",
                          "SELECT 1;\n-- one\n/* two */\n", "SELECT 1; /* unterminated"}) {
    int64_t rows = 0;
    Status st = Run(sql, {}, &rows);
    EXPECT_TRUE(st.ok()) << sql << ": " << st.ToString();
    EXPECT_EQ(rows, 1) << sql;
  }
  for (const char* sql : {"SELECT 1; SELECT 2", "SELECT 1; -- c\nSELECT 2", "SELECT 1; /* c */ DELETE FROM runs",
                          "SELECT 1; garbage"}) {
    Status st = Run(sql);
    EXPECT_EQ(st.code(), Status::Code::kInvalidArgument) << sql << ": " << st.ToString();
  }
  EXPECT_NE(Run("SELECT 1; SELECT 2").message().find("only one SQL statement"), std::string::npos);
  EXPECT_EQ(SqliteOf(*db_).execAndGet("SELECT count(*) FROM runs").getInt(), 1);
}

TEST_F(SqlQueryTest, ReadOnlyPragmaFunctionsAreAllowed) {
  std::vector<std::vector<SqlValue>> rows;
  ASSERT_TRUE(Collect("SELECT name FROM pragma_table_info('buffer_values')", {}, &rows).ok());
  EXPECT_EQ(rows.size(), 15u);  // the columns of buffer_values in schema.sql
  rows.clear();
  ASSERT_TRUE(Collect("SELECT name FROM pragma_index_list('modules') ORDER BY name", {}, &rows).ok());
  ASSERT_EQ(rows.size(), 4u);  // the four indexes schema.sql creates on modules
  EXPECT_EQ(rows[0][0], SqlValue(std::string("modules_by_identity")));
  EXPECT_EQ(rows[1][0], SqlValue(std::string("modules_by_key")));
  EXPECT_EQ(rows[2][0], SqlValue(std::string("modules_by_name")));
  EXPECT_EQ(rows[3][0], SqlValue(std::string("modules_by_run")));
  // Each is the first use of its table-valued function on this connection.
  for (const char* sql : {"SELECT * FROM pragma_table_list", "SELECT * FROM pragma_table_list('runs')",
                          "SELECT * FROM pragma_index_info('modules_by_run')",
                          "SELECT * FROM pragma_index_xinfo('modules_by_run')",
                          "SELECT * FROM pragma_foreign_key_list('modules')",
                          "SELECT * FROM main.pragma_table_xinfo('runs')",
                          "SELECT * FROM pragma_table_info('runs', 'main')", "SELECT * FROM pragma_function_list",
                          "SELECT * FROM pragma_user_version", "SELECT * FROM json_each('[1, 2, 3]')"}) {
    int64_t n = 0;
    Status st = Run(sql, {}, &n);
    EXPECT_TRUE(st.ok()) << sql << ": " << st.ToString();
    EXPECT_GT(n, 0) << sql;
  }
  // Pragmas outside the read-only list stay refused in either form; none can set a value.
  for (const char* sql : {"SELECT * FROM pragma_database_list", "SELECT * FROM pragma_journal_mode",
                          "PRAGMA user_version = 5", "PRAGMA main.cache_size = 5"}) {
    Status st = Run(sql);
    EXPECT_EQ(st.code(), Status::Code::kPermissionDenied) << sql << ": " << st.ToString();
  }
  EXPECT_FALSE(Run("SELECT * FROM pragma_user_version(5)").ok());
  EXPECT_EQ(SqliteOf(*db_).execAndGet("PRAGMA user_version").getInt(), kSchemaVersion);
}

TEST_F(SqlQueryTest, LimitsBelowMinusOneAreRefused) {
  const char* names[] = {"max_rows", "max_bytes", "max_value_bytes", "timeout_ms"};
  for (int field = 0; field < 4; ++field) {
    for (int64_t bad : {int64_t{-2}, std::numeric_limits<int64_t>::min()}) {
      SqlLimits limits;
      int64_t* fields[] = {&limits.max_rows, &limits.max_bytes, &limits.max_value_bytes, &limits.timeout_ms};
      *fields[field] = bad;
      Status st = Run("SELECT 1", limits);
      EXPECT_EQ(st.code(), Status::Code::kInvalidArgument) << names[field] << " = " << bad;
      EXPECT_NE(st.message().find(names[field]), std::string::npos) << st.message();
    }
  }
  SqlLimits none;
  none.max_rows = none.max_bytes = none.max_value_bytes = none.timeout_ms = -1;
  EXPECT_TRUE(Run("SELECT 1", none).ok());
}

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
