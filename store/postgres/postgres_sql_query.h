// The read-only SQL endpoint on PostgreSQL: store/sql_endpoint.h's contract (one statement, the same SqlLimits,
// the same SqlValue rows) for a store held in PostgreSQL. Where SQLite has an authorizer, PostgreSQL has these
// layers:
//   * the role: the connection should log in as a role that may only SELECT the store (GrantReadOnlyAccess;
//     xladbd --sql-db checks it with PrepareSqlReader),
//     which refuses writes, DDL, sequences and server files on its own;
//   * the transaction: READ ONLY, REPEATABLE READ, always rolled back, and the session reset after it
//     (DISCARD ALL), so no write, setting or session lock outlives the call;
//   * the statement: it runs as the body of a cursor (DECLARE … CURSOR FOR), which PostgreSQL accepts only for
//     a query (SELECT, VALUES, TABLE, WITH … SELECT without data-modifying parts), sent in one extended-protocol
//     message, which carries one statement only;
//   * the functions: any role may change settings (set_config) and take advisory locks, so these are refused
//     by name before the statement is sent, with server files (pg_read_file, pg_ls_dir, lo_*), other sessions
//     and servers (pg_terminate_backend, dblink*) and SQL run from text (query_to_xml and kin), as
//     kPermissionDenied naming the function. The scanner knows string literals ('…', E'…', $tag$…$tag$),
//     comments and quoted identifiers, and refuses U&"…" identifiers, which could spell a name it would miss.
//   * the shape: anything that does not start as a query (SELECT, VALUES, TABLE, WITH) is refused unsent.
// Limits: `timeout_ms` bounds the whole call: each FETCH runs under a statement_timeout of what is left of it,
// set again before every FETCH (so a setting changed by the statement does not carry over). Rows arrive through
// the cursor 256 at a time, so `max_rows` stops the query early. `max_value_bytes` and `max_row_bytes` are
// checked by PostgreSQL itself: the statement runs wrapped in a query that fails a row over either cap before
// the row is sent (libpq receives a row whole before the client could look at it), with the statement's own
// columns, names and order; the client checks them again, and `max_bytes`, reading one row at a time (libpq's
// single-row mode), so it never holds more than one row under the caps.
// kResourceExhausted names the limit. Values: integers as int64_t, floating point as double, bytea as SqlBlob,
// booleans as 0/1, everything else as its text.
//
// Uses the caller's connection, one call at a time; the connection is left outside any transaction, with its
// session state reset.
#ifndef XLADB_STORE_POSTGRES_POSTGRES_SQL_QUERY_H_
#define XLADB_STORE_POSTGRES_POSTGRES_SQL_QUERY_H_

#include <functional>
#include <string>
#include <vector>

#include "base/status.h"
#include "store/postgres/postgres_connection.h"
#include "store/backend/sql_result.h"

namespace xladb::store {

[[nodiscard]] Status RunReadOnlySqlOnPostgres(PostgresConnection& reader, const std::string& sql,
                                              const SqlLimits& limits,
                                              const std::function<void(const std::vector<SqlColumn>&)>& on_columns,
                                              const std::function<bool(const std::vector<SqlValue>&)>& on_row,
                                              bool* truncated = nullptr);

// A value PostgreSQL sent as text, as an SqlValue by its type (pg_type OID): integers as int64_t, floating
// point as double, booleans as 0/1, bytea (\x…) as SqlBlob, everything else as its text.
SqlValue FromPostgresText(const std::string& text, uint32_t type_oid);

// Lets `role` read the store in the connection's current schema and nothing else: USAGE on the schema and
// SELECT on its tables and views (present ones; run again after the schema gains tables). Run by the store's
// owner.
[[nodiscard]] Status GrantReadOnlyAccess(PostgresConnection& owner, const std::string& role);

// Makes `reader_uri` fit for the SQL endpoint of the store at `owner_uri` (xladbd --sql-db): grants its role
// read access (GrantReadOnlyAccess, as the owner), then checks, connected as that role, that it sees the same
// database and schema and can change nothing there: not a superuser nor CREATEROLE, no INSERT, UPDATE, DELETE
// or TRUNCATE on any of the store's tables and views, no INSERT or UPDATE on any of their columns, no UPDATE on
// a sequence, no CREATE on its schema. Errors say which check failed (FailedPrecondition) or
// why a connection failed.
[[nodiscard]] Status PrepareSqlReader(const std::string& owner_uri, const std::string& reader_uri);

}  // namespace xladb::store

#endif  // XLADB_STORE_POSTGRES_POSTGRES_SQL_QUERY_H_
