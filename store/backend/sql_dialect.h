// Which SQL engine a connection speaks, for the few statements that must differ (store/backend/sql_connection.h)
// and for the schema's translation (store/schema/schema_dialect.h).
#ifndef XLADB_STORE_BACKEND_SQL_DIALECT_H_
#define XLADB_STORE_BACKEND_SQL_DIALECT_H_

namespace xladb::store {

enum class SqlDialect { kSqlite, kPostgresql };

}  // namespace xladb::store

#endif  // XLADB_STORE_BACKEND_SQL_DIALECT_H_
