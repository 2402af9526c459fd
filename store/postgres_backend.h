// PostgresBackend: the store's backend interface (store/sql_connection.h) over one libpq connection.
//
// Statements are kept as text with SQLite's `?` and `?N` placeholders renumbered `$N`, and run with
// PQexecParams on their first Step (prepared on the server from their second run on, so the writer's
// statements are parsed and planned once): reals go as float8, text as text, integers and NULL untyped (the
// server infers their type from where they stand), all in text format; results come back whole, in text, and the getters parse them (a boolean reads as 1 or 0).
//
// Contract: owns its PostgresConnection. Errors throw SqlError with the server's message and SQLSTATE. One
// thread at a time.
#ifndef XLADB_STORE_POSTGRES_BACKEND_H_
#define XLADB_STORE_POSTGRES_BACKEND_H_

#include <memory>
#include <string>
#include <string_view>

#include "store/postgres_connection.h"
#include "store/sql_connection.h"

namespace xladb::store {

class PostgresBackend final : public SqlConnection {
 public:
  explicit PostgresBackend(std::unique_ptr<PostgresConnection> pg) : pg_(std::move(pg)) {}
  SqlDialect dialect() const override { return SqlDialect::kPostgresql; }
  std::unique_ptr<SqlStatement> Prepare(std::string_view sql) override;
  void Exec(std::string_view sql) override;
  void BeginWrite() override { Exec("BEGIN"); }
  PostgresConnection& connection() { return *pg_; }

 private:
  std::unique_ptr<PostgresConnection> pg_;
};

// `sql` with SQLite's placeholders as PostgreSQL's: `?N` becomes `$N`, and a bare `?` one more than the
// largest number before it (SQLite's rule). Quoted strings, quoted names and comments are left alone.
// `*count` (when given) gets the largest number: the statement's parameters, each NULL until bound.
std::string NumberedPlaceholders(std::string_view sql, int* count = nullptr);

}  // namespace xladb::store

#endif  // XLADB_STORE_POSTGRES_BACKEND_H_
