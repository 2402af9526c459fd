// Opening a PostgreSQL store by its libpq URI (postgresql://…).
//
// Contract
//   * Read-write applies the schema (store/postgres/postgres_schema.h: CREATE … IF NOT EXISTS, one transaction,
//     under the schema's advisory lock), then finishes version 7's re-key in C++ where it is pending
//     (store/schema/module_rekey.h), so two writers opening a migrated store at once re-key it once.
//   * Read-only checks that the schema is there and sets default_transaction_read_only.
//   * Errors come back as Status, never thrown. One connection: one thread at a time.
#ifndef XLADB_STORE_POSTGRES_POSTGRES_OPEN_H_
#define XLADB_STORE_POSTGRES_POSTGRES_OPEN_H_

#include <memory>
#include <string>

#include "base/status.h"
#include "store/postgres/postgres_backend.h"

namespace xladb::store {

[[nodiscard]] StatusOr<std::unique_ptr<PostgresBackend>> OpenPostgresStore(const std::string& uri, bool read_only);

}  // namespace xladb::store

#endif  // XLADB_STORE_POSTGRES_POSTGRES_OPEN_H_
