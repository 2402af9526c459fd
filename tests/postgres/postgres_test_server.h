// The PostgreSQL 15 server the postgres_tests run against: ctest starts one per build folder
// (scripts/postgres-test-server.sh, the `postgres_server` fixture of tests/CMakeLists.txt) and passes its
// folder in XLADB_TEST_POSTGRES_DIR. Each test works in a schema of its own, dropped at the end, so tests
// running at once do not meet.
#ifndef XLADB_TESTS_POSTGRES_POSTGRES_TEST_SERVER_H_
#define XLADB_TESTS_POSTGRES_POSTGRES_TEST_SERVER_H_

#include <SQLiteCpp/SQLiteCpp.h>
#include <gtest/gtest.h>
#include <unistd.h>

#include <cstdlib>
#include <fstream>
#include <memory>
#include <string>
#include <vector>

#include "store/postgres/postgres_connection.h"

namespace xladb::testing {

// A connection to the test server whose search_path is a fresh schema, dropped by the destructor.
class PostgresTestSchema {
 public:
  // Connects; on failure `connection()` is null and `why()` says why (the test must fail, not pass).
  explicit PostgresTestSchema(const std::string& name) {
    const char* dir = std::getenv("XLADB_TEST_POSTGRES_DIR");
    if (dir == nullptr) {
      why_ = "XLADB_TEST_POSTGRES_DIR is not set: run these tests through ctest, whose postgres_server "
             "fixture starts PostgreSQL (scripts/postgres-test-server.sh)";
      return;
    }
    std::ifstream in(std::string(dir) + "/uri");
    std::string uri;
    if (!std::getline(in, uri) || uri.empty()) {
      why_ = std::string("no server URI in ") + dir + "/uri: the postgres_server fixture did not start";
      return;
    }
    uri_ = uri;
    auto conn = store::PostgresConnection::Connect(uri);
    if (!conn.ok()) {
      why_ = conn.status().ToString();
      return;
    }
    conn_ = std::move(conn.value());
    schema_ = name + "_" + std::to_string(getpid());
    Status made = conn_->Exec("DROP SCHEMA IF EXISTS " + schema_ + " CASCADE; CREATE SCHEMA " + schema_ +
                              "; SET search_path TO " + schema_);
    if (!made.ok()) {
      why_ = made.ToString();
      conn_.reset();
    }
  }
  ~PostgresTestSchema() {
    if (conn_) (void)conn_->Exec("DROP SCHEMA IF EXISTS " + schema_ + " CASCADE");
  }

  store::PostgresConnection* connection() { return conn_.get(); }
  // The first value of `sql`'s first row, as text ("<none>" without one; a failed query fails the test).
  std::string Value(const std::string& sql) {
    auto rows = conn_->Query(sql);
    EXPECT_TRUE(rows.ok()) << sql << ": " << rows.status().ToString();
    if (!rows.ok() || rows->values.empty() || !rows->values[0][0]) return "<none>";
    return *rows->values[0][0];
  }
  const std::string& schema() const { return schema_; }
  // A URI that connects with this schema as its search_path (for code that opens its own connections).
  std::string uri() const {
    return uri_ + (uri_.find('?') == std::string::npos ? "?" : "&") + "options=-csearch_path%3D" + schema_;
  }
  const std::string& why() const { return why_; }

 private:
  std::unique_ptr<store::PostgresConnection> conn_;
  std::string uri_;
  std::string schema_;
  std::string why_;
};

// Every row of `sql` as text (NULL as ""), on each backend, to compare the two.
using TextRows = std::vector<std::vector<std::string>>;
inline TextRows SqliteRows(SQLite::Database& db, const std::string& sql) {
  TextRows rows;
  SQLite::Statement q(db, sql);
  while (q.executeStep()) {
    auto& row = rows.emplace_back();
    for (int c = 0; c < q.getColumnCount(); ++c) row.push_back(q.getColumn(c).getString());
  }
  return rows;
}
inline TextRows PostgresRows(store::PostgresConnection& pg, const std::string& sql) {
  TextRows rows;
  auto result = pg.Query(sql);
  EXPECT_TRUE(result.ok()) << sql << ": " << result.status().ToString();
  if (!result.ok()) return rows;
  for (const auto& r : result->values) {
    auto& row = rows.emplace_back();
    for (const auto& cell : r) row.push_back(cell.value_or(""));
  }
  return rows;
}

}  // namespace xladb::testing

#endif  // XLADB_TESTS_POSTGRES_POSTGRES_TEST_SERVER_H_
