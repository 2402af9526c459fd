// The read-only SQL endpoint on a real PostgreSQL (store/postgres/postgres_sql_query.h): a store copied there, read
// through the read-only role. Queries answer what the dumps say; every escape attempt is refused and leaves
// the store as it was; the limits stop what they bound.
#include <gtest/gtest.h>
#include <libpq-fe.h>

#include <chrono>
#include <fstream>
#include <stdexcept>
#include <string>
#include <vector>

#include "store/backend/database.h"
#include "store/postgres/postgres_sql_query.h"
#include "store/copy/store_copy.h"
#include "tests/postgres/postgres_test_server.h"
#include "tests/store/peak_rss.h"
#include "tests/store/test_dirs.h"
#include "tests/store/test_ingest.h"

namespace xladb {
namespace {

class PostgresSql : public ::testing::Test {
 protected:
  void SetUp() override {
    ASSERT_NE(owner_.connection(), nullptr) << owner_.why();
    auto db = store::Database::Open(tmp_ / "team.db");
    ASSERT_TRUE(db.ok()) << db.status().ToString();
    testing::MakeSeedRun(tmp_ / "nightly-1");
    ASSERT_TRUE(testing::IngestRun(*db.value(), tmp_ / "nightly-1", "nightly-1").ok());
    ASSERT_TRUE(store::CopyToPostgres(*db.value(), *owner_.connection()).ok());
    Status granted = store::GrantReadOnlyAccess(*owner_.connection(), "xladb_reader");
    ASSERT_TRUE(granted.ok()) << granted.ToString();
    std::ifstream in(std::string(std::getenv("XLADB_TEST_POSTGRES_DIR")) + "/reader_uri");
    std::string uri;
    ASSERT_TRUE(std::getline(in, uri));
    auto reader = store::PostgresConnection::Connect(uri + "?options=-csearch_path%3D" + owner_.schema());
    ASSERT_TRUE(reader.ok()) << reader.status().ToString();
    reader_ = std::move(reader.value());
  }

  // Runs `sql` through the endpoint; the rows as text, the column names if asked.
  Status Run(const std::string& sql, const store::SqlLimits& limits, testing::TextRows* rows = nullptr,
             bool* truncated = nullptr, std::vector<std::string>* names = nullptr) {
    return store::RunReadOnlySqlOnPostgres(
        *reader_, sql, limits,
        [&](const std::vector<store::SqlColumn>& columns) {
          for (const auto& column : columns) {
            if (names) names->push_back(column.name);
          }
        },
        [&](const std::vector<store::SqlValue>& row) {
          if (rows == nullptr) return true;
          auto& out = rows->emplace_back();
          for (const auto& v : row) {
            if (auto* i = std::get_if<int64_t>(&v)) out.push_back(std::to_string(*i));
            else if (auto* s = std::get_if<std::string>(&v)) out.push_back(*s);
            else if (auto* b = std::get_if<store::SqlBlob>(&v)) out.push_back("blob:" + b->bytes);
            else out.push_back(std::holds_alternative<std::monostate>(v) ? "NULL" : "?");
          }
          return true;
        },
        truncated);
  }

  // Rows of the store's tables, as the owner sees them.
  std::string Counts() {
    auto rows = owner_.connection()->Query(
        "SELECT (SELECT COUNT(*) FROM runs) || '/' || (SELECT COUNT(*) FROM modules) || '/' || "
        "(SELECT COUNT(*) FROM allocations) || '/' || (SELECT COUNT(*) FROM run_labels)");
    EXPECT_TRUE(rows.ok()) << rows.status().ToString();
    return rows.ok() ? *rows->values[0][0] : "?";
  }

  testing::PostgresTestSchema owner_{"postgres_sql"};
  testing::TempDir tmp_;
  std::unique_ptr<store::PostgresConnection> reader_;
};

TEST_F(PostgresSql, AnswersWhatTheDumpSays) {
  testing::TextRows rows;
  Status st = Run("SELECT allocations, total_bytes FROM module_memory "
                  "WHERE module_name = 'jit_splash_attention_kernel';  -- seed 000",
                  {}, &rows);
  ASSERT_TRUE(st.ok()) << st.ToString();
  ASSERT_EQ(rows.size(), 1u);
  EXPECT_EQ(rows[0], (std::vector<std::string>{"8", "18629632"}));
}

// An on_row that throws (std::bad_alloc building the daemon's answer) ends the session as a finished query
// does: no transaction, snapshot or cursor left open, so the next query on the thread's connection runs.
// (The session stayed idle in its transaction; the next query failed "cursor xladb_query already exists".)
TEST_F(PostgresSql, AnOnRowThatThrowsLeavesTheSessionAsAFinishedQueryDoes) {
  for (int i = 0; i < 2; ++i) {
    EXPECT_THROW((void)store::RunReadOnlySqlOnPostgres(
                     *reader_, "SELECT a.allocation_index FROM allocations a", store::SqlLimits{},
                     [](const std::vector<store::SqlColumn>&) {},
                     [](const std::vector<store::SqlValue>&) -> bool { throw std::runtime_error("answer too big"); },
                     nullptr),
                 std::runtime_error);
  }
  EXPECT_EQ(PQtransactionStatus(reader_->raw()), PQTRANS_IDLE);
  auto cursors = reader_->Query("SELECT COUNT(*) FROM pg_cursors WHERE name = 'xladb_query'");
  ASSERT_TRUE(cursors.ok()) << cursors.status().ToString();
  EXPECT_EQ(*cursors->values[0][0], "0");
  testing::TextRows rows;
  const Status again = Run("SELECT COUNT(*) FROM runs", store::SqlLimits{}, &rows);
  ASSERT_TRUE(again.ok()) << again.ToString();
  EXPECT_EQ(rows, (testing::TextRows{{"1"}}));
}

TEST_F(PostgresSql, EveryEscapeIsRefusedAndChangesNothing) {
  const std::string before = Counts();
  for (const char* attempt : {
           "DELETE FROM runs",
           "INSERT INTO run_labels(run_id, key, value) VALUES (1, 'k', 'v')",
           "UPDATE runs SET name = 'x'",
           "CREATE TABLE evil(a int)",
           "DROP TABLE runs",
           "ALTER TABLE runs ADD COLUMN evil int",
           "TRUNCATE runs",
           "COPY runs TO PROGRAM 'id'",
           "COPY (SELECT 1) TO '/tmp/xladb_evil'",
           "COPY runs FROM '/etc/passwd'",
           "SELECT pg_read_file('/etc/passwd')",
           "SELECT \"PG_READ_FILE\"('/etc/passwd')",
           "SELECT pg_ls_dir('.')",
           "SELECT lo_import('/etc/passwd')",
           "SELECT set_config('statement_timeout', '0', false)",
           "SELECT Set_Config ('transaction_read_only', 'off', true)",
           "SELECT dblink('host=127.0.0.1', 'DELETE FROM runs')",
           "SELECT query_to_xml('DELETE FROM runs', true, true, '')",
           "SELECT pg_terminate_backend(1)",
           "SELECT pg_advisory_lock(1)",
           "WITH gone AS (DELETE FROM runs RETURNING 1) SELECT * FROM gone",
           "SELECT 1; DELETE FROM runs",
           "SELECT nextval('runs_run_id_seq')",
           "SET ROLE xladb",
           "RESET ROLE",
           "BEGIN",
           "COMMIT",
           "GRANT ALL ON runs TO xladb_reader",
           "ALTER ROLE xladb_reader SUPERUSER",
           "CREATE EXTENSION dblink",
           "LOCK TABLE runs",
           "SELECT * FROM runs FOR UPDATE",
           "VACUUM runs",
           "PREPARE p AS DELETE FROM runs",
           "DO $$ BEGIN DELETE FROM runs; END $$",
           "CALL nothing()",
           "NOTIFY xladb",
           // Each assigns a transaction id (a finite resource: wraparound) or queues a notification.
           "SELECT txid_current()",
           "SELECT pg_current_xact_id()",
           "SELECT pg_notify('xladb', 'x')",
           // Ways to hide a refused name from a scanner that does not know PostgreSQL's lexical rules.
           "SELECT pg_advisory_lock/**/(1)",
           "SELECT pg_advisory_lock /* a /* nested */ comment */ (1)",
           "SELECT pg_advisory_lock -- a comment\n(1)",
           "SELECT $$'$$, pg_advisory_lock(1), 'x'",
           "SELECT $q$'$q$, set_config('statement_timeout', '0', false)",
           "SELECT E'\\'', pg_advisory_lock(1), 'x'",
           "SELECT U&\"set_config\"('statement_timeout', '0', false)",
           "SELECT pg_try_advisory_lock_shared(1)",
           "SELECT pg_catalog.set_config('statement_timeout', '0', false)",
       }) {
    Status st = Run(attempt, {});
    const bool several = std::string(attempt).rfind("SELECT 1;", 0) == 0;
    EXPECT_EQ(st.code(), several ? Status::Code::kInvalidArgument : Status::Code::kPermissionDenied)
        << attempt << ": " << st.ToString();
    // The connection stays usable: the next query works.
    testing::TextRows rows;
    ASSERT_TRUE(Run("SELECT COUNT(*) FROM runs", {}, &rows).ok()) << "after " << attempt;
    ASSERT_EQ(rows.size(), 1u);
    EXPECT_EQ(rows[0][0], "1") << "after " << attempt;
  }
  EXPECT_EQ(Counts(), before);
}

// Without the endpoint's checks, the role alone refuses every write, schema change and server-file access.
TEST_F(PostgresSql, TheReadOnlyRoleRefusesOnItsOwn) {
  const std::string before = Counts();
  for (const char* attempt : {
           "DELETE FROM runs", "INSERT INTO run_labels(run_id, key, value) VALUES (1, 'k', 'v')",
           "UPDATE runs SET name = 'x'", "CREATE TABLE evil(a int)", "CREATE TABLE public.evil(a int)",
           "DROP TABLE runs", "TRUNCATE runs", "COPY runs TO PROGRAM 'id'", "COPY (SELECT 1) TO '/tmp/xladb_evil'",
           "SELECT pg_read_file('/etc/passwd')", "SELECT lo_import('/etc/passwd')", "SELECT nextval('runs_run_id_seq')",
           "SET ROLE xladb", "ALTER TABLE runs ADD COLUMN evil int", "CREATE EXTENSION dblink"}) {
    Status st = reader_->Exec(attempt);
    EXPECT_FALSE(st.ok()) << attempt;
    EXPECT_EQ(reader_->last_sqlstate(), "42501") << attempt << ": " << st.ToString();
  }
  EXPECT_EQ(Counts(), before);
}

TEST_F(PostgresSql, LimitsStopWhatTheyBound) {
  store::SqlLimits rows_limit;
  rows_limit.max_rows = 5;
  testing::TextRows rows;
  bool truncated = false;
  ASSERT_TRUE(Run("SELECT * FROM generate_series(1, 1000000)", rows_limit, &rows, &truncated).ok());
  EXPECT_EQ(rows.size(), 5u);
  EXPECT_TRUE(truncated);

  store::SqlLimits bytes_limit;
  bytes_limit.max_bytes = 1000;
  Status bytes = Run("SELECT repeat('x', 100) FROM generate_series(1, 100)", bytes_limit);
  EXPECT_EQ(bytes.code(), Status::Code::kResourceExhausted) << bytes.ToString();

  store::SqlLimits value_limit;
  value_limit.max_value_bytes = 10;
  Status value = Run("SELECT repeat('x', 11)", value_limit);
  EXPECT_EQ(value.code(), Status::Code::kResourceExhausted) << value.ToString();

  store::SqlLimits time_limit;
  time_limit.timeout_ms = 200;
  const auto start = std::chrono::steady_clock::now();
  Status slow = Run("SELECT pg_sleep(30)", time_limit);
  EXPECT_EQ(slow.code(), Status::Code::kResourceExhausted) << slow.ToString();
  EXPECT_LT(std::chrono::steady_clock::now() - start, std::chrono::seconds(10));

  store::SqlLimits bad;
  bad.max_rows = -2;
  EXPECT_EQ(Run("SELECT 1", bad).code(), Status::Code::kInvalidArgument);
}

// The *_if_assigned variants never assign a transaction id: in the endpoint's read-only transaction they
// answer NULL, so they stay allowed.
TEST_F(PostgresSql, TransactionIdsAreNotAssignedButMayBeAskedFor) {
  for (const char* sql : {"SELECT txid_current_if_assigned()", "SELECT pg_current_xact_id_if_assigned()"}) {
    testing::TextRows rows;
    Status st = Run(sql, {}, &rows);
    ASSERT_TRUE(st.ok()) << sql << ": " << st.ToString();
    EXPECT_EQ(rows, (testing::TextRows{{"NULL"}})) << sql;
  }
}

// Every shape of query the endpoint allows answers with its own columns, names and order, through the wrapper
// that checks the caps on the server.
TEST_F(PostgresSql, EveryShapeOfQueryKeepsItsColumnsAndOrder) {
  struct Case {
    const char* sql;
    std::vector<std::string> names;
    testing::TextRows rows;
  };
  const Case cases[] = {
      {"SELECT 2 AS b, 'x' AS a, NULL AS n", {"b", "a", "n"}, {{"2", "x", "NULL"}}},
      {"SELECT 1 AS same, 2 AS same", {"same", "same"}, {{"1", "2"}}},
      {"SELECT x, x * 10 AS y FROM generate_series(1, 5) x ORDER BY x DESC LIMIT 3",
       {"x", "y"},
       {{"5", "50"}, {"4", "40"}, {"3", "30"}}},
      {"VALUES (1, 'a'), (2, 'b')", {"column1", "column2"}, {{"1", "a"}, {"2", "b"}}},
      {"WITH w AS (SELECT 7 AS seven) SELECT seven FROM w", {"seven"}, {{"7"}}},
      {"TABLE run_labels", {"run_id", "key", "value"}, {}},
      {"(SELECT 1 AS u) UNION ALL (SELECT 2) ORDER BY 1 DESC", {"u"}, {{"2"}, {"1"}}},
      {"SELECT '\\x6869'::bytea AS b, 'a;b' AS \"semi;colon\"", {"b", "semi;colon"}, {{"blob:hi", "a;b"}}},
      {"SELECT 1 AS one; -- a comment after the statement", {"one"}, {{"1"}}},
      {"SELECT 1 AS one /* a block comment */ ;;", {"one"}, {{"1"}}},
      {"SELECT name FROM runs", {"name"}, {{"nightly-1"}}},
      {"SELECT FROM runs", {}, testing::TextRows(1)},
  };
  for (const Case& c : cases) {
    testing::TextRows rows;
    std::vector<std::string> names;
    Status st = Run(c.sql, {}, &rows, nullptr, &names);
    ASSERT_TRUE(st.ok()) << c.sql << ": " << st.ToString();
    EXPECT_EQ(names, c.names) << c.sql;
    EXPECT_EQ(rows, c.rows) << c.sql;
  }
}

// A value or row over its cap is refused by PostgreSQL before it is sent: the client never holds it (libpq
// receives a row whole before anyone can look at it), so this process's peak memory barely moves.
TEST_F(PostgresSql, AValueOrRowOverItsCapNeverReachesTheClient) {
  store::SqlLimits limits;
  limits.max_value_bytes = 1 << 20;
  limits.max_row_bytes = 3 << 20;
  {
    testing::PeakRssProbe probe;
    ASSERT_TRUE(probe.valid());
    Status st = Run("SELECT 1 AS small, repeat('x', 300000000) AS big", limits);
    EXPECT_EQ(st.code(), Status::Code::kResourceExhausted) << st.ToString();
    EXPECT_NE(st.message().find("a value of 300000000 bytes is over the per-value limit of 1048576 bytes"),
              std::string::npos)
        << st.ToString();
    EXPECT_LT(probe.growth(), int64_t{64} << 20);
  }
  {  // three values under the value cap, together over the row cap; bytea counted as its \x… text
    Status st = Run("SELECT repeat('x', 1000000) AS a, repeat('y', 1000000) AS b, repeat('z', 1000000) AS c, "
                    "convert_to(repeat('w', 100000), 'UTF8') AS d",
                    limits);
    EXPECT_EQ(st.code(), Status::Code::kResourceExhausted) << st.ToString();
    EXPECT_NE(st.message().find("a row of 3200002 bytes is over the per-row limit of 3145728 bytes"),
              std::string::npos)
        << st.ToString();
  }
  {  // char(n) is sent padded: counted as sent, not as its (trimmed) text
    Status st = Run("SELECT 'x'::char(2000000) AS padded", limits);
    EXPECT_EQ(st.code(), Status::Code::kResourceExhausted) << st.ToString();
    EXPECT_NE(st.message().find("a value of 2000000 bytes is over the per-value limit"), std::string::npos)
        << st.ToString();
  }
  // A row from a table, after rows that fit, and only when it is reached; the connection answers next.
  testing::TextRows rows;
  Status st = Run("SELECT CASE WHEN x < 1000 THEN repeat('x', 10) ELSE repeat('y', 2000000) END "
                  "FROM generate_series(1, 1000) x",
                  limits, &rows);
  EXPECT_EQ(st.code(), Status::Code::kResourceExhausted) << st.ToString();
  EXPECT_NE(st.message().find("per-value limit"), std::string::npos) << st.ToString();
  rows.clear();
  ASSERT_TRUE(Run("SELECT length(repeat('x', 2000000))", limits, &rows).ok());
  EXPECT_EQ(rows, (testing::TextRows{{"2000000"}}));
}

}  // namespace
}  // namespace xladb
