#include "store/sqlite/sqlite_open.h"

#include <SQLiteCpp/SQLiteCpp.h>
#include <sqlite3.h>

#include <mutex>
#include <string>
#include <utility>

#include "store/facts/interned_texts.h"
#include "store/facts/module_facts.h"
#include "store/facts/run_summary.h"
#include "store/schema/module_rekey.h"
#include "store/schema/schema_dialect.h"
#include "store/schema/schema_migrations.h"
#include "store/sqlite/query_temp_storage.h"

namespace xladb::store {

namespace {

Status ApplySqliteSchema(SQLite::Database& db) {
  int version = db.execAndGet("PRAGMA user_version").getInt();
  if (version > kSchemaVersion) {
    return Status::FailedPrecondition("database schema version " + std::to_string(version) +
                                      " is newer than this xladb's version " + std::to_string(kSchemaVersion) +
                                      "; upgrade xladb to open it");
  }
  // An older file is migrated in place. schema.sql runs on every read-write open: every statement in it is
  // CREATE … IF NOT EXISTS, so indexes and tables added since the file was written appear and nothing else
  // changes. All of it is one transaction. Version 0 is a new, empty file.
  const int first_migration = version == 0 ? kSchemaVersion : version;
  db.exec("BEGIN IMMEDIATE");
  try {
    db.exec(SchemaWithMigrations(version, SqlDialect::kSqlite));
    // Version 4's derived columns (identity, padded live peak, memory spaces) are computed in C++, as ingest
    // computes them.
    SqliteConnection connection(db);
    if (first_migration < 4) UpdateDerivedFactsOfAllModules(connection);
    if (first_migration < 6) {  // version 6's name hashes and run summaries, as the writer keeps them
      HashAllNames(connection);
      UpdateSummariesOfAllRuns(connection);
    }
    if (first_migration < 7) RekeyListedModules(connection);  // version 7's folders and identities
    db.exec("PRAGMA user_version = " + std::to_string(kSchemaVersion));
    db.exec("COMMIT");
  } catch (const std::exception& e) {
    db.exec("ROLLBACK");
    return Status::Internal((first_migration < kSchemaVersion
                                 ? "migrating schema from version " + std::to_string(version) + ": "
                                 : std::string("creating schema: ")) +
                            e.what());
  }
  return Status::Ok();
}

}  // namespace

// Process-wide SQLite settings, applied once before the first connection: no memory-usage statistics
// (they take a global mutex on every allocation, and the writer allocates per row).
static void ConfigureSqliteOnce() {
  static std::once_flag once;
  std::call_once(once, [] { sqlite3_config(SQLITE_CONFIG_MEMSTATUS, 0); });
}

StatusOr<std::unique_ptr<SqliteConnection>> OpenSqliteStore(const std::string& path, bool read_only) {
  ConfigureSqliteOnce();
  try {
    int flags = read_only ? SQLite::OPEN_READONLY : (SQLite::OPEN_READWRITE | SQLite::OPEN_CREATE);
    // Read-only connections serve queries: their temp files count against the process-wide cap.
    const char* vfs = nullptr;
    if (read_only) {
      vfs = QueryTempStorageVfs();
      if (vfs == nullptr) return Status::Internal("SQLite has no default VFS to count query temp files with");
    }
    auto db = std::make_unique<SQLite::Database>(path.c_str(), flags | SQLITE_OPEN_NOMUTEX,
                                                 /*busy_timeout_ms=*/30000, vfs);
    if (!read_only) {
      // A new file: pages of kNewFilePageSize bytes, and space given back incrementally after `xladb prune`
      // (neither changes a file that exists: its pages keep their size).
      db->exec("PRAGMA page_size = " + std::to_string(kNewFilePageSize));
      db->exec("PRAGMA auto_vacuum = INCREMENTAL");
      db->exec("PRAGMA journal_mode = WAL");
      db->exec("PRAGMA synchronous = NORMAL");
      db->exec("PRAGMA temp_store = MEMORY");
      db->exec("PRAGMA cache_size = -32768");  // 32 MiB page cache: as fast as 64 on a 1 GiB file, 34 MiB less RSS
      Status st = ApplySqliteSchema(*db);
      if (!st.ok()) return st;
    } else {
      db->exec("PRAGMA cache_size = -16384");  // 16 MiB per reader: repeated queries stay in memory
      // Sorts, temp indexes and materialized subqueries spill to temp files (counted by the query VFS)
      // once they outgrow the cache_size above, so a query's memory stays near that size. The sorter runs
      // in the calling thread, where the VFS reports a refusal.
      db->exec("PRAGMA temp_store = FILE");
      db->exec("PRAGMA threads = 0");
      int version = db->execAndGet("PRAGMA user_version").getInt();
      if (version != kSchemaVersion) {
        return Status::FailedPrecondition("database " + path + " has schema version " + std::to_string(version) +
                                          ", this xladb reads version " + std::to_string(kSchemaVersion) +
                                          (version < kSchemaVersion
                                               ? " (xladbd or `xladb ingest` migrates it when it opens the file)"
                                               : ""));
      }
    }
    return std::make_unique<SqliteConnection>(std::move(db));
  } catch (const std::exception& e) {
    return Status::IoError("opening database " + path + ": " + e.what());
  }
}

}  // namespace xladb::store
