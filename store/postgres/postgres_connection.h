// PostgresConnection: one libpq connection to the PostgreSQL server that holds a shared store. It is the
// start of the store's PostgreSQL backend: today it connects, applies the schema (store/schema/schema_dialect.h) and
// runs statements and parameterized queries with text results, which the tests use to hold the two backends
// to the same tables, columns and views.
//
// Contract
//   * Connect() takes a libpq connection URI (postgresql://user@host:port/db?options) and fails with the
//     server's message; no exception escapes.
//   * Exec() runs one or more statements without results; Query() runs one statement with `$1…` parameters
//     (text) and returns every row, NULL as nullopt. Errors are Status values with the server's message.
//   * Describe() prepares one statement without running it and returns its result's columns (no rows);
//     QueryRowByRow() runs one statement in libpq's single-row mode, so the client holds one row at a time
//     however many the server sends.
//   * Bulk loads use COPY … FROM STDIN (text format): BeginCopy, then rows as a CopyRows buffer builds them
//     (PutCopyData), then EndCopy, which reports the rows the server stored or why it refused them.
//   * One connection, one thread at a time. Not copyable; the destructor closes the connection.
#ifndef XLADB_STORE_POSTGRES_POSTGRES_CONNECTION_H_
#define XLADB_STORE_POSTGRES_POSTGRES_CONNECTION_H_

#include <functional>
#include <memory>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "base/status.h"

struct pg_conn;    // libpq's PGconn
struct pg_result;  // libpq's PGresult

namespace xladb::store {

// Whether `target` names a PostgreSQL database (a libpq URI: postgresql://… or postgres://…) rather than a
// SQLite file.
inline bool IsPostgresUri(std::string_view target) {
  return target.rfind("postgresql://", 0) == 0 || target.rfind("postgres://", 0) == 0;
}

// What PostgreSQL said about a failed `result` (the connection's last error when it is null): the message
// without libpq's trailing newline, and the SQLSTATE ("" without one).
struct PostgresError {
  std::string message;
  std::string sqlstate;
};
PostgresError ErrorOf(pg_conn* conn, const pg_result* result);

// `target` with the password of a URI (postgresql://user:secret@host/…) replaced by ***, for logs and output.
std::string WithoutPassword(const std::string& target);

class PostgresConnection {
 public:
  struct Rows {
    std::vector<std::string> columns;
    std::vector<uint32_t> column_types;  // PostgreSQL type OIDs (pg_type), one per column
    std::vector<std::vector<std::optional<std::string>>> values;
  };

  [[nodiscard]] static StatusOr<std::unique_ptr<PostgresConnection>> Connect(const std::string& uri);
  ~PostgresConnection();
  PostgresConnection(const PostgresConnection&) = delete;
  PostgresConnection& operator=(const PostgresConnection&) = delete;

  [[nodiscard]] Status Exec(const std::string& sql);
  [[nodiscard]] StatusOr<Rows> Query(const std::string& sql, const std::vector<std::string>& params = {});

  // The columns and types `sql` would return (the unnamed prepared statement; `values` stays empty). Nothing
  // of it runs; an error is the server's (a syntax error, several statements, an unknown table).
  [[nodiscard]] StatusOr<Rows> Describe(const std::string& sql);

  // Runs `sql` and passes each row to `on_row` as it arrives (cells NULL as nullopt, valid during the call
  // only). When `on_row` returns false, the rest of the rows are read one at a time and dropped, and the call
  // returns Ok. An error is the server's, also when it comes after some rows.
  using RowCells = std::vector<std::optional<std::string_view>>;
  [[nodiscard]] Status QueryRowByRow(const std::string& sql, const std::function<bool(const RowCells&)>& on_row);

  // COPY `table`(`columns`) FROM STDIN. Between BeginCopy and EndCopy only PutCopyData may be called.
  [[nodiscard]] Status BeginCopy(const std::string& table, const std::vector<std::string>& columns);
  [[nodiscard]] Status PutCopyData(std::string_view data);
  [[nodiscard]] StatusOr<int64_t> EndCopy();

  // The SQLSTATE of the last failed call ("" after a success or a failure without one): "25006" is a write
  // in a read-only transaction, "42501" a missing privilege, "57014" a cancelled statement (its timeout).
  const std::string& last_sqlstate() const { return last_sqlstate_; }

  // libpq's connection, for the store's backend (store/postgres/postgres_backend.h); owned by this object.
  pg_conn* raw() { return conn_; }

 private:
  explicit PostgresConnection(pg_conn* conn) : conn_(conn) {}
  // The Status of a failed result, remembering its SQLSTATE.
  Status Failure(const void* result, const char* what);

  pg_conn* conn_;
  std::string last_sqlstate_;
};

// Rows in COPY's text format: cells separated by tabs, rows ended by newlines, NULL as \N, and backslash,
// tab, newline and carriage return escaped in text. A text ends at a NUL byte, as a bound parameter does
// (PostgreSQL's text holds none).
class CopyRows {
 public:
  void Int(int64_t value);
  void Text(std::string_view text);
  void Null();
  void EndRow();
  const std::string& data() const { return data_; }
  void Clear() { data_.clear(); }

 private:
  void Separate();
  std::string data_;
  bool row_start_ = true;
};

}  // namespace xladb::store

#endif  // XLADB_STORE_POSTGRES_POSTGRES_CONNECTION_H_
