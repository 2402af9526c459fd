// Opening an SQLite store: the file, its pragmas and its schema.
//
// Contract
//   * OpenSqliteStore() opens (read-write: creates) the file at `path`. Read-write applies store/schema/
//     schema.sql and migrates an older file in place, in one transaction, with the backfills the migrations
//     need (store/facts/, store/schema/module_rekey.h); it refuses a newer file naming both versions. Read-only
//     checks the version and opens through the temp-file-counting VFS of store/sqlite/query_temp_storage.h.
//   * Writers use WAL with synchronous=NORMAL; readers keep a 16 MiB page cache and temp data in files.
//   * A file it creates has pages of kNewFilePageSize bytes; a file that exists keeps its own page size.
//   * Errors come back as Status (kFailedPrecondition for a version, kIoError for the file), never thrown.
//   * The connection returned owns the SQLite handle; one thread at a time.
#ifndef XLADB_STORE_SQLITE_SQLITE_OPEN_H_
#define XLADB_STORE_SQLITE_SQLITE_OPEN_H_

#include <memory>
#include <string>

#include "base/status.h"
#include "store/sqlite/sqlite_connection.h"

namespace xladb::store {

// The page size of a new file. 8 KiB against SQLite's 4 KiB: a big buffer assignment ingests 7-10% faster
// with half the page writes, and its file is 3% smaller (docs/PERFORMANCE.md); 16 KiB was slower on real folders.
inline constexpr int kNewFilePageSize = 8192;

[[nodiscard]] StatusOr<std::unique_ptr<SqliteConnection>> OpenSqliteStore(const std::string& path, bool read_only);

}  // namespace xladb::store

#endif  // XLADB_STORE_SQLITE_SQLITE_OPEN_H_
