// The schema of a PostgreSQL store as a binary opens it: which version the store holds, and bringing it to
// this binary's (store/schema/schema_dialect.h, PostgresSchemaTransaction).
//
// A store records its schema in two functions: xladb_schema_version() (kSchemaVersion of the binary that
// last applied it) and xladb_schema_id() (a digest of that binary's schema text). A store that has the id but
// no version function was written before versions were recorded: version 6.
//
// Contract: no exception escapes; errors are Status values with the server's message. The connection must be
// outside a transaction. One connection, one thread.
#ifndef XLADB_STORE_POSTGRES_POSTGRES_SCHEMA_H_
#define XLADB_STORE_POSTGRES_POSTGRES_SCHEMA_H_

#include "base/status.h"
#include "store/postgres/postgres_connection.h"

namespace xladb::store {

// For writing: creates the schema in an empty database, migrates an older store, reapplies the schema when
// its text changed within a version (new indexes or views); leaves a current store alone. Refuses a store
// of a newer version (FailedPrecondition): an older binary would undo its schema.
[[nodiscard]] Status PreparePostgresStoreForWriting(PostgresConnection& pg);

// For reading: the database holds a store of exactly this binary's schema version (FailedPrecondition
// otherwise, saying which side to upgrade).
[[nodiscard]] Status CheckPostgresStoreForReading(PostgresConnection& pg);

}  // namespace xladb::store

#endif  // XLADB_STORE_POSTGRES_POSTGRES_SCHEMA_H_
