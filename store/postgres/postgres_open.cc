#include "store/postgres/postgres_open.h"

#include <exception>
#include <string>
#include <utility>

#include "store/postgres/postgres_schema.h"
#include "store/schema/schema_dialect.h"
#include "store/schema/module_rekey.h"

namespace xladb::store {

StatusOr<std::unique_ptr<PostgresBackend>> OpenPostgresStore(const std::string& uri, bool read_only) {
  auto pg = PostgresConnection::Connect(uri);
  if (!pg.ok()) return pg.status();
  auto backend = std::make_unique<PostgresBackend>(std::move(pg.value()));
  // Schema versions: store/postgres/postgres_schema.h.
  Status schema = !read_only ? PreparePostgresStoreForWriting(backend->connection())
                                           : CheckPostgresStoreForReading(backend->connection());
  if (!schema.ok()) return schema;
  if (!read_only) {
    // Version 7's re-key runs in C++ after the migration's transaction (store/schema/module_rekey.h), here also when
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
  if (read_only) {
    Status read_only = backend->connection().Exec("SET default_transaction_read_only = on");
    if (!read_only.ok()) return read_only;
  }
  return backend;
}

}  // namespace xladb::store
