// Database: opening an xladb SQLite file with the right pragmas, creating or migrating its schema.
//
// Contract
//   * Open() creates the file and schema when missing, migrates an older schema in place, and refuses a
//     newer one with a message naming both versions. Errors are returned, never thrown.
//   * The path must be a regular file or not exist yet: a FIFO, socket, device or folder is kInvalidArgument
//     at once (a FIFO would block SQLite's open or first read forever).
//   * Writers use WAL with synchronous=NORMAL: a crash loses at most the last committed transactions of the
//     OS buffer, never consistency; readers never block writers.
//   * Readers (kReadOnly) serve queries: they open through the VFS of store/query_temp_storage.h, so their
//     temp files count against the process-wide temp-storage cap, keep temp data in files (temp_store=FILE)
//     and sort in the calling thread; their memory stays near their 16 MiB page cache.
//   * A PostgreSQL store is opened with a libpq URI (postgresql://…) in place of the path. Read-write applies
//     the schema (CREATE … IF NOT EXISTS, one transaction); read-only checks that the schema is there and
//     sets default_transaction_read_only. Today a PostgreSQL Database serves the queries (connection()); the
//     writer, `xladb delete/prune` and the job log still need SQLite (sqlite() is null there, and callers
//     refuse with a message first).
//   * A Database is one connection: use it from one thread at a time. Open one per thread.
#ifndef XLADB_STORE_DATABASE_H_
#define XLADB_STORE_DATABASE_H_

#include <memory>
#include <string>

#include <SQLiteCpp/Database.h>

#include "ingest/status.h"
#include "store/sql_connection.h"
#include "store/schema_migrations.h"
#include "store/statement_cache.h"

namespace xladb::store {

// OK for a path Database::Open() may open: a PostgreSQL URI, a regular file (or a link to one), or a path that
// does not exist yet. A FIFO, socket, device or folder is kInvalidArgument naming the path and what it is.
// Open() checks this itself; a command line checks it first to answer with a usage error.
[[nodiscard]] Status CheckDatabaseFile(const std::string& path);

class Database {
 public:
  enum class Mode { kReadWrite, kReadOnly };

  static StatusOr<std::unique_ptr<Database>> Open(const std::string& path, Mode mode = Mode::kReadWrite);

  // The backend interface every query is written against.
  SqlConnection& connection() { return *connection_; }
  SqlDialect dialect() const { return connection_->dialect(); }
  // Statements a query runs many times (keyed by the address of static text: store/statement_cache.h),
  // prepared once for this connection.
  StatementCache& statements() {
    if (!statements_) statements_ = std::make_unique<StatementCache>(*connection_);
    return *statements_;
  }
  bool is_sqlite() const { return db_ != nullptr; }
  // The SQLite connection of an SQLite store, for the SQLite-only parts (the writer, prune, the SQL
  // endpoint's authorizer); must not be called on a PostgreSQL store.
  SQLite::Database& sql() { return *db_; }
  // The path of a file, or the URI of a PostgreSQL store.
  const std::string& path() const { return path_; }
  Mode mode() const { return mode_; }

  // Runs `sql` (several statements allowed); errors come back as Status.
  Status Exec(const std::string& sql);

 private:
  Database(std::unique_ptr<SQLite::Database> db, std::unique_ptr<SqlConnection> connection, std::string path,
           Mode mode)
      : db_(std::move(db)), connection_(std::move(connection)), path_(std::move(path)), mode_(mode) {}
  static StatusOr<std::unique_ptr<Database>> OpenPostgres(const std::string& uri, Mode mode);
  std::unique_ptr<SQLite::Database> db_;  // null for PostgreSQL
  std::unique_ptr<SqlConnection> connection_;
  std::unique_ptr<StatementCache> statements_;  // after connection_: destroyed before it
  std::string path_;
  Mode mode_;
};

}  // namespace xladb::store

#endif  // XLADB_STORE_DATABASE_H_
