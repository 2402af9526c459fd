#include "store/database.h"

#include <SQLiteCpp/SQLiteCpp.h>
#include <sqlite3.h>
#include <sys/stat.h>

#include <iterator>
#include <mutex>
#include <string>
#include <string_view>
#include <utility>

#include "store/interned_texts.h"
#include "store/module_facts.h"
#include "store/module_rekey.h"
#include "store/postgres_backend.h"
#include "store/postgres_schema.h"
#include "store/query_temp_storage.h"
#include "store/run_summary.h"
#include "store/schema_dialect.h"
#include "store/schema_migrations.h"
#include "store/sqlite_connection.h"

namespace xladb::store {

namespace {

Status ApplySchema(SQLite::Database& db) {
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

StatusOr<std::unique_ptr<Database>> Database::OpenPostgres(const std::string& uri, Mode mode) {
  auto pg = PostgresConnection::Connect(uri);
  if (!pg.ok()) return pg.status();
  auto backend = std::make_unique<PostgresBackend>(std::move(pg.value()));
  // Schema versions: store/postgres_schema.h.
  Status schema = mode == Mode::kReadWrite ? PreparePostgresStoreForWriting(backend->connection())
                                           : CheckPostgresStoreForReading(backend->connection());
  if (!schema.ok()) return schema;
  if (mode == Mode::kReadWrite) {
    // Version 7's re-key runs in C++ after the migration's transaction (store/module_rekey.h), here also when
    // an earlier open was interrupted between the two. Under the schema lock, held for the session so that the
    // transaction that looks again starts after the lock is taken (it then sees another writer's re-key and
    // its DROP of the table): two writers opening a migrated store at once re-key it once.
    const std::string pending_sql =
        std::string("SELECT to_regclass('") + kModulesToRekeyTable + "') IS NOT NULL";
    auto pending = backend->connection().Query(pending_sql);
    if (!pending.ok()) return pending.status();
    if (pending->values.at(0).at(0).value_or("") == "t") {
      try {
        backend->Exec(std::string("SELECT pg_advisory_lock(") + kPostgresSchemaLock + ")");
        {
          WriteTransaction transaction(*backend);
          auto still = backend->Prepare(pending_sql);
          const bool still_pending = still->Step() && still->Text(0) == "t";
          still.reset();
          if (still_pending) RekeyListedModules(*backend);
          transaction.Commit();
        }
        backend->Exec(std::string("SELECT pg_advisory_unlock(") + kPostgresSchemaLock + ")");
      } catch (const std::exception& e) {
        // The connection closes with the returned error, and the session's lock with it.
        return Status::IoError(std::string("re-keying modules for schema version 7: ") + e.what());
      }
    }
  }
  if (mode == Mode::kReadOnly) {
    Status read_only = backend->connection().Exec("SET default_transaction_read_only = on");
    if (!read_only.ok()) return read_only;
  }
  return std::unique_ptr<Database>(new Database(nullptr, std::move(backend), uri, mode));
}

// A path that does not exist is left to Open(): read-write creates it, read-only fails in SQLite with its own
// message. Only a regular file is an SQLite database: a FIFO blocks the open or the first read forever, a
// device is none, and a folder would fail later with a vaguer message.
Status CheckDatabaseFile(const std::string& path) {
  if (IsPostgresUri(path)) return Status::Ok();
  struct stat st;
  if (::stat(path.c_str(), &st) != 0 || S_ISREG(st.st_mode)) return Status::Ok();
  const char* kind = S_ISDIR(st.st_mode)    ? "a folder"
                     : S_ISFIFO(st.st_mode) ? "a FIFO"
                     : S_ISSOCK(st.st_mode) ? "a socket"
                                            : "a device";
  return Status::InvalidArgument("database " + path + " is " + kind +
                                 ", not a regular file: give an SQLite file (or a postgresql:// URI)");
}

StatusOr<std::unique_ptr<Database>> Database::Open(const std::string& path, Mode mode) {
  if (IsPostgresUri(path)) return OpenPostgres(path, mode);
  if (Status file = CheckDatabaseFile(path); !file.ok()) return file;
  ConfigureSqliteOnce();
  try {
    int flags = mode == Mode::kReadOnly ? SQLite::OPEN_READONLY : (SQLite::OPEN_READWRITE | SQLite::OPEN_CREATE);
    // Read-only connections serve queries: their temp files count against the process-wide cap.
    const char* vfs = nullptr;
    if (mode == Mode::kReadOnly) {
      vfs = QueryTempStorageVfs();
      if (vfs == nullptr) return Status::Internal("SQLite has no default VFS to count query temp files with");
    }
    auto db = std::make_unique<SQLite::Database>(path.c_str(), flags | SQLITE_OPEN_NOMUTEX,
                                                 /*busy_timeout_ms=*/30000, vfs);
    if (mode == Mode::kReadWrite) {
      // A new file gives space back incrementally after `xladb prune` (no effect on a file that has tables).
      db->exec("PRAGMA auto_vacuum = INCREMENTAL");
      db->exec("PRAGMA journal_mode = WAL");
      db->exec("PRAGMA synchronous = NORMAL");
      db->exec("PRAGMA temp_store = MEMORY");
      db->exec("PRAGMA cache_size = -65536");  // 64 MiB page cache
      Status st = ApplySchema(*db);
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
    auto connection = std::make_unique<SqliteConnection>(*db);
    return std::unique_ptr<Database>(new Database(std::move(db), std::move(connection), path, mode));
  } catch (const std::exception& e) {
    return Status::IoError("opening database " + path + ": " + e.what());
  }
}

Status Database::Exec(const std::string& sql) {
  try {
    connection_->Exec(sql);
    return Status::Ok();
  } catch (const std::exception& e) {
    return Status::Internal(e.what());
  }
}

}  // namespace xladb::store
