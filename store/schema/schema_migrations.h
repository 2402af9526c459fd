// The schema's migrations, compiled in from store/migrate_vN.sql (from version N to N+1).
//
// A migration runs in two parts around schema.sql: a store of version N gets the first parts of every
// migration from N up, in order, then schema.sql, then the second parts in order. The first parts drop views
// and rename or add what schema.sql's CREATE … IF NOT EXISTS statements would otherwise leave as it was; the
// second parts move data. Migrations to version 6 and below are SQLite's only (no PostgreSQL store is older
// than version 6); from version 6 on a migration is written in the portable subset and runs on both backends,
// PostgreSQL's translated like schema.sql (store/schema/schema_dialect.h).
//
// Pure data; thread-safe.
#ifndef XLADB_STORE_SCHEMA_SCHEMA_MIGRATIONS_H_
#define XLADB_STORE_SCHEMA_SCHEMA_MIGRATIONS_H_

#include <string_view>
#include <utility>

namespace xladb::store {

inline constexpr int kSchemaVersion = 10;
// The first version a PostgreSQL store was written with.
inline constexpr int kFirstPostgresSchemaVersion = 6;

// The two parts (before and after schema.sql) of the migration from `version` to `version` + 1, for
// 1 <= version < kSchemaVersion.
std::pair<std::string_view, std::string_view> MigrationParts(int version);

}  // namespace xladb::store

#endif  // XLADB_STORE_SCHEMA_SCHEMA_MIGRATIONS_H_
