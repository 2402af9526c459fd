// Database: opening an xladb SQLite file with the right pragmas, creating or migrating its schema.
//
// Contract
//   * Open() creates the file and schema when missing, migrates an older schema in place, and refuses a
//     newer one with a message naming both versions. Errors are returned, never thrown.
//   * Writers use WAL with synchronous=NORMAL: a crash loses at most the last committed transactions of the
//     OS buffer, never consistency; readers never block writers.
//   * Readers (kReadOnly) serve queries: they open through the VFS of store/query_temp_storage.h, so their
//     temp files count against the process-wide temp-storage cap, keep temp data in files (temp_store=FILE)
//     and sort in the calling thread; their memory stays near their 16 MiB page cache.
//   * A Database is one SQLite connection: use it from one thread at a time. Open one per thread.
#ifndef XLADB_STORE_DATABASE_H_
#define XLADB_STORE_DATABASE_H_

#include <memory>
#include <string>

#include <SQLiteCpp/Database.h>

#include "ingest/status.h"

namespace xladb::store {

inline constexpr int kSchemaVersion = 6;

class Database {
 public:
  enum class Mode { kReadWrite, kReadOnly };

  static StatusOr<std::unique_ptr<Database>> Open(const std::string& path, Mode mode = Mode::kReadWrite);

  SQLite::Database& sql() { return *db_; }
  const std::string& path() const { return path_; }
  Mode mode() const { return mode_; }

  // Runs `sql` (several statements allowed); errors come back as Status.
  Status Exec(const std::string& sql);

 private:
  Database(std::unique_ptr<SQLite::Database> db, std::string path, Mode mode)
      : db_(std::move(db)), path_(std::move(path)), mode_(mode) {}
  std::unique_ptr<SQLite::Database> db_;
  std::string path_;
  Mode mode_;
};

}  // namespace xladb::store

#endif  // XLADB_STORE_DATABASE_H_
