// Query temp storage: a process-wide cap on the bytes of the temp files that read-only connections write.
//
// SQLite spills ORDER BY sorts, GROUP BY/DISTINCT indexes, materialized subqueries and temp tables to
// unnamed temp files once they outgrow the page cache; nothing but the time limit bounds them. Read-only
// connections (Database::Open with kReadOnly) open their files through a shim VFS, named
// QueryTempStorageVfs(), that wraps the default VFS. Files SQLite opens as TEMP_DB, TEMP_JOURNAL,
// TRANSIENT_DB or SUBJOURNAL are counted: each holds a charge equal to its highest written end (or its
// truncated size), all charges share one budget, and a write or truncate that would take the total past
// the limit fails with SQLITE_FULL and nothing is written. Closing or truncating a file gives its bytes
// back. The database, its WAL and journal pass straight to the default VFS.
//
// Contract
//   * SetQueryTempStorageLimit(bytes): -1 (any negative value) is no limit, the default. Lowering it below
//     what is in use refuses only the next growth; nothing already written is taken back.
//   * A refusal is recorded for the thread that made it; TakeQueryTempStorageRefusal() returns and clears
//     that flag, so a caller can tell the cap from a full disk. Read-only connections run SQLite's sorter in
//     the calling thread (PRAGMA threads = 0), so the refusal is seen by the thread that runs the query.
//   * All functions are thread-safe. QueryTempStorageVfs() registers the shim on first use (after SQLite's
//     global configuration: call it from Database::Open) and returns its name, or nullptr when there is no
//     default VFS to wrap.
#ifndef XLADB_STORE_SQLITE_QUERY_TEMP_STORAGE_H_
#define XLADB_STORE_SQLITE_QUERY_TEMP_STORAGE_H_

#include <cstdint>

namespace xladb::store {

void SetQueryTempStorageLimit(int64_t bytes);
int64_t QueryTempStorageLimit();

// Bytes charged to open temp files now, and the highest that total has been since the last reset.
int64_t QueryTempStorageInUse();
int64_t QueryTempStorageHighWater();
void ResetQueryTempStorageHighWater();

// True when a temp-file write on this thread was refused by the cap since the last call; clears the flag.
bool TakeQueryTempStorageRefusal();

const char* QueryTempStorageVfs();

}  // namespace xladb::store

#endif  // XLADB_STORE_SQLITE_QUERY_TEMP_STORAGE_H_
