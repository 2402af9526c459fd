// SqliteConnection: the store's backend interface (store/sql_connection.h) over one SQLiteCpp connection.
//
// Contract: wraps, does not own, `db`, which must outlive it and its statements. Errors throw SqlError with
// SQLite's message. One thread at a time, as the connection.
#ifndef XLADB_STORE_SQLITE_CONNECTION_H_
#define XLADB_STORE_SQLITE_CONNECTION_H_

#include <SQLiteCpp/Database.h>

#include "store/sql_connection.h"

namespace xladb::store {

class SqliteConnection final : public SqlConnection {
 public:
  explicit SqliteConnection(SQLite::Database& db) : db_(db) {}
  SqlDialect dialect() const override { return SqlDialect::kSqlite; }
  std::unique_ptr<SqlStatement> Prepare(std::string_view sql) override;
  void Exec(std::string_view sql) override;
  void BeginWrite() override { Exec("BEGIN IMMEDIATE"); }

 private:
  SQLite::Database& db_;
};

}  // namespace xladb::store

#endif  // XLADB_STORE_SQLITE_CONNECTION_H_
