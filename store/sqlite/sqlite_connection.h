// SqliteConnection: the store's backend interface (store/backend/sql_connection.h) over one SQLiteCpp connection.
//
// Bulk appends (store/backend/bulk_insert.h) run INSERT … VALUES with kBatchRows rows a statement, the rest in
// statements of a power of two rows below that, with the BulkInsert's RETURNING list if it has one; each
// statement is prepared once per BulkInsert and size and kept for the connection's life.
//
// Contract: wraps, does not own, `db`, which must outlive it and its statements. Errors throw SqlError with
// SQLite's message. One thread at a time, as the connection.
#ifndef XLADB_STORE_SQLITE_SQLITE_CONNECTION_H_
#define XLADB_STORE_SQLITE_SQLITE_CONNECTION_H_

#include <SQLiteCpp/Database.h>

#include <array>
#include <bit>
#include <memory>
#include <unordered_map>
#include <utility>
#include <vector>

#include "store/backend/database.h"
#include "store/backend/sql_connection.h"

namespace xladb::store {

class BulkInsert;

class SqliteConnection final : public SqlConnection {
 public:
  // Borrows `db`, which must outlive the connection.
  explicit SqliteConnection(SQLite::Database& db) : db_(db) {}
  // Owns `db` (an open store: store/sqlite/sqlite_open.h).
  explicit SqliteConnection(std::unique_ptr<SQLite::Database> db) : owned_(std::move(db)), db_(*owned_) {}
  SqlDialect dialect() const override { return SqlDialect::kSqlite; }
  std::unique_ptr<SqlStatement> Prepare(std::string_view sql) override;
  void Exec(std::string_view sql) override;
  void BeginWrite() override { Exec("BEGIN IMMEDIATE"); }
  bool WritesAlone() const override;
  int64_t AppendRows(const BulkRows& rows) override { return Append(rows, nullptr); }
  int64_t AppendRowsReturning(const BulkRows& rows, std::vector<int64_t>& returned) override {
    return Append(rows, &returned);
  }
  size_t bulk_batch_rows() const override { return kBatchRows; }

  // The SQLite handle, for the SQLite-only parts (the SQL endpoint's authorizer, tests).
  SQLite::Database& database() { return db_; }

  // 1,024 rows of the widest insert (15 columns) bind 15,360 parameters, under SQLite's default limit of 32,766.
  // Against 64 rows a statement: the 100 MiB buffer assignment 1.39 → 1.27 s, the 1 GiB one 16.7 → 15.2 s, a real
  // run folder unchanged (2026-11-28).
  static constexpr size_t kBatchRows = 1024;

 private:
  // Writes `rows`; with `returned`, keeps what the BulkInsert's RETURNING answers there.
  int64_t Append(const BulkRows& rows, std::vector<int64_t>* returned);

  // A BulkInsert's statements, one for each power of two up to kBatchRows rows: a batch of 100 rows goes as
  // 64, 32 and 4.
  static constexpr size_t kSizeClasses = std::bit_width(kBatchRows);
  static_assert(std::has_single_bit(kBatchRows));
  struct BulkStatements {
    std::array<std::unique_ptr<SqlStatement>, kSizeClasses> by_size;
  };

  std::unique_ptr<SQLite::Database> owned_;  // null when borrowed
  SQLite::Database& db_;
  std::unordered_map<const BulkInsert*, BulkStatements> bulk_;
};

// The SQLite handle of an SQLite store's Database (db.is_sqlite() must hold).
inline SQLite::Database& SqliteOf(Database& db) { return static_cast<SqliteConnection&>(db.connection()).database(); }

}  // namespace xladb::store

#endif  // XLADB_STORE_SQLITE_SQLITE_CONNECTION_H_
