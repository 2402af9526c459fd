// A fixture with a store on each backend: a SQLite file in a temporary folder and a PostgreSQL schema of the
// test server (tests/postgres/postgres_test_server.h), for tests that run the same calls on both and expect the
// same answers.
#ifndef XLADB_TESTS_POSTGRES_BOTH_BACKENDS_H_
#define XLADB_TESTS_POSTGRES_BOTH_BACKENDS_H_

#include <gtest/gtest.h>

#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "store/backend/database.h"
#include "store/backend/sql_connection.h"
#include "tests/postgres/postgres_test_server.h"
#include "tests/store/test_dirs.h"

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
  static const char* Name(const store::SqlConnection& sql) {
    return sql.dialect() == store::SqlDialect::kSqlite ? "sqlite" : "postgresql";
  }

  PostgresTestSchema pg_{"both"};
  TempDir tmp_;
  std::unique_ptr<store::Database> sqlite_, postgres_;
};

// Every row of `query`, columns joined by '|', rows ended by '\n', NULL as "NULL".
inline std::string Rows(store::SqlConnection& sql, const std::string& query) {
  auto q = sql.Prepare(query);
  std::string out;
  while (q->Step()) {
    for (int c = 0; c < q->ColumnCount(); ++c) out += (c ? "|" : "") + (q->IsNull(c) ? "NULL" : q->Text(c));
    out += "\n";
  }
  return out;
}

}  // namespace xladb::testing

#endif  // XLADB_TESTS_POSTGRES_BOTH_BACKENDS_H_
