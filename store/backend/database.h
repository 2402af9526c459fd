// Database: one open store, SQLite or PostgreSQL, behind the backend interface (store/backend/sql_connection.h).
//
// Contract
//   * Open() creates the store and schema when missing, migrates an older schema in place, and refuses a
//     newer one with a message naming both versions. Errors are returned, never thrown.
//   * The path must be a regular file or not exist yet: a FIFO, socket, device or folder is kInvalidArgument
//     at once (a FIFO would block SQLite's open or first read forever).
//   * SQLite (store/sqlite/sqlite_open.h): writers use WAL with synchronous=NORMAL, so a crash loses at most the
//     last committed transactions of the OS buffer, never consistency, and readers never block writers.
//     Readers (kReadOnly) open through the VFS of store/sqlite/query_temp_storage.h, so their temp files count
//     against the process-wide temp-storage cap; their memory stays near their 16 MiB page cache.
//   * PostgreSQL (store/postgres/postgres_open.h) is opened with a libpq URI (postgresql://…) in place of the
//     path. Read-write applies the schema; read-only checks that it is there and sets
//     default_transaction_read_only. Every part of the store (writer, queries, lifecycle, job log) runs on both.
//   * The Database owns its connection. One connection: use it from one thread at a time; open one per thread.
#ifndef XLADB_STORE_BACKEND_DATABASE_H_
#define XLADB_STORE_BACKEND_DATABASE_H_

#include <memory>
#include <string>

#include "base/status.h"
#include "store/backend/sql_connection.h"
#include "store/backend/statement_cache.h"

namespace xladb::store {

// OK for a path Database::Open() may open: a PostgreSQL URI, a regular file (or a link to one), or a path that
// does not exist yet. A FIFO, socket, device or folder is kInvalidArgument naming the path and what it is.
// Open() checks this itself; a command line checks it first to answer with a usage error.
[[nodiscard]] Status CheckDatabaseFile(const std::string& path);

class Database {
 public:
  enum class Mode { kReadWrite, kReadOnly };

  // Opens the store at `path` (a file, or a postgresql:// URI): see the contract above. Defined in
  // store/database_open.cc (library xladb_store), the one place that knows both backends: a library below it
  // that called Open would not link.
  [[nodiscard]] static StatusOr<std::unique_ptr<Database>> Open(const std::string& path,
                                                                Mode mode = Mode::kReadWrite);

  // A store over an open backend connection (store/sqlite/sqlite_open.h, store/postgres/postgres_open.h).
  Database(std::unique_ptr<SqlConnection> connection, std::string path, Mode mode);
  ~Database();
  Database(const Database&) = delete;
  Database& operator=(const Database&) = delete;

  // The backend interface every query is written against.
  SqlConnection& connection() { return *connection_; }
  SqlDialect dialect() const { return connection_->dialect(); }
  // Statements a query runs many times (keyed by the address of static text: store/backend/statement_cache.h),
  // prepared once for this connection.
  StatementCache& statements() {
    if (!statements_) statements_ = std::make_unique<StatementCache>(*connection_);
    return *statements_;
  }
  bool is_sqlite() const { return dialect() == SqlDialect::kSqlite; }
  // The path of a file, or the URI of a PostgreSQL store.
  const std::string& path() const { return path_; }
  Mode mode() const { return mode_; }

  // Runs `sql` (several statements allowed); errors come back as Status.
  [[nodiscard]] Status Exec(const std::string& sql);

 private:
  std::unique_ptr<SqlConnection> connection_;
  std::unique_ptr<StatementCache> statements_;  // after connection_: destroyed before it
  std::string path_;
  Mode mode_;
};

}  // namespace xladb::store

#endif  // XLADB_STORE_BACKEND_DATABASE_H_
