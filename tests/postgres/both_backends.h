// A fixture with a store on each backend: a SQLite file in a temporary folder and a PostgreSQL schema of the
// test server (tests/postgres/postgres_test_server.h), for tests that run the same calls on both and expect the
// same answers.
#ifndef XLADB_TESTS_POSTGRES_BOTH_BACKENDS_H_
#define XLADB_TESTS_POSTGRES_BOTH_BACKENDS_H_

#include <gtest/gtest.h>

#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "store/backend/database.h"
#include "store/backend/sql_connection.h"
#include "store/copy/store_copy.h"
#include "tests/postgres/postgres_test_server.h"
#include "tests/store/sql_rows.h"
#include "tests/store/test_dirs.h"
#include "tests/store/test_ingest.h"

namespace xladb::testing {

// Runs `work`, which must throw SqlError for a NULL given to a NOT NULL column (PostgreSQL says "null value",
// SQLite "NOT NULL constraint failed"): on SQLite at once, on PostgreSQL by the call that waits.
inline void ExpectNotNullViolation(const std::function<void()>& work) {
  try {
    work();
    ADD_FAILURE() << "the NULL was not refused";
  } catch (const store::SqlError& e) {
    const std::string message = e.what();
    EXPECT_TRUE(message.find("null") != std::string::npos || message.find("NULL") != std::string::npos) << message;
  }
}

class BothBackends : public ::testing::Test {
 protected:
  void SetUp() override {
    ASSERT_NE(pg_.connection(), nullptr) << pg_.why();
    auto sqlite = store::Database::Open(tmp_ / "store.db");
    ASSERT_TRUE(sqlite.ok()) << sqlite.status().ToString();
    auto postgres = store::Database::Open(pg_.uri());
    ASSERT_TRUE(postgres.ok()) << postgres.status().ToString();
    sqlite_ = std::move(sqlite.value());
    postgres_ = std::move(postgres.value());
  }
  std::vector<store::SqlConnection*> Backends() { return {&sqlite_->connection(), &postgres_->connection()}; }
  // Makes both stores refuse, with "refused by the test", the dump_files rows `condition` picks (SQL over NEW,
  // the row inserted): as a full disk or a broken connection would, at the place the test chooses.
  void RefuseFileRowsWhere(const std::string& condition) {
    sqlite_->connection().Exec("CREATE TRIGGER refuse BEFORE INSERT ON dump_files WHEN " + condition +
                               " BEGIN SELECT RAISE(ABORT, 'refused by the test'); END");
    postgres_->connection().Exec(
        "CREATE FUNCTION refuse() RETURNS trigger LANGUAGE plpgsql AS $$ BEGIN IF " + condition +
        " THEN RAISE EXCEPTION 'refused by the test'; END IF; RETURN NEW; END $$; "
        "CREATE TRIGGER refuse BEFORE INSERT ON dump_files FOR EACH ROW EXECUTE FUNCTION refuse()");
  }
  static const char* Name(const store::SqlConnection& sql) {
    return sql.dialect() == store::SqlDialect::kSqlite ? "sqlite" : "postgresql";
  }

  PostgresTestSchema pg_{"both"};
  TempDir tmp_;
  std::unique_ptr<store::Database> sqlite_, postgres_;
};

// A dump folder ingested as run `name`, dated `day` days after 2026-01-01 (so runs have a stable order).
struct DatedRun {
  std::string name;
  std::string folder;
  int64_t day = 0;
};

// Ingests every run into `db` (a SQLite store, to be copied); the first failure, if one fails.
inline ::testing::AssertionResult IngestRuns(store::Database& db, const std::vector<DatedRun>& runs) {
  constexpr int64_t kJan1Us = 1767225600LL * 1000000, kDayUs = 86400LL * 1000000;
  for (const DatedRun& run : runs) {
    ingest::IngestOptions options;
    options.time_us = kJan1Us + run.day * kDayUs;
    auto ingested = IngestRun(db, run.folder, run.name, options);
    if (!ingested.ok()) return ::testing::AssertionFailure() << run.name << ": " << ingested.status().ToString();
  }
  return ::testing::AssertionSuccess();
}

// Copies `sqlite` into pg's schema (`xladb copy`) and opens the copy read-only into *postgres.
inline ::testing::AssertionResult CopyAndOpenReadOnly(store::Database& sqlite, PostgresTestSchema& pg,
                                                      std::unique_ptr<store::Database>* postgres) {
  auto copied = store::CopyToPostgres(sqlite, *pg.connection());
  if (!copied.ok()) return ::testing::AssertionFailure() << "copy: " << copied.status().ToString();
  auto opened = store::Database::Open(pg.uri(), store::Database::Mode::kReadOnly);
  if (!opened.ok()) return ::testing::AssertionFailure() << "open: " << opened.status().ToString();
  *postgres = std::move(opened.value());
  return ::testing::AssertionSuccess();
}

// A SQLite store that the test fills (Fill), copied into a PostgreSQL schema and opened there read-only, for
// tests that ask both the same questions.
class CopiedStores : public ::testing::Test {
 protected:
  explicit CopiedStores(const std::string& schema) : pg_(schema) {}
  virtual ::testing::AssertionResult Fill(store::Database& sqlite) = 0;

  void SetUp() override {
    ASSERT_NE(pg_.connection(), nullptr) << pg_.why();
    auto db = store::Database::Open(tmp_ / "team.db");
    ASSERT_TRUE(db.ok()) << db.status().ToString();
    sqlite_ = std::move(db.value());
    ASSERT_TRUE(Fill(*sqlite_));
    ASSERT_TRUE(CopyAndOpenReadOnly(*sqlite_, pg_, &postgres_));
  }

  PostgresTestSchema pg_;
  TempDir tmp_;
  std::unique_ptr<store::Database> sqlite_, postgres_;
};

}  // namespace xladb::testing

#endif  // XLADB_TESTS_POSTGRES_BOTH_BACKENDS_H_
