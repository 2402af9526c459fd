// The SQL endpoint: runs one read-only SQL statement against a Database and streams the rows, inside limits. This
// header's contract is SQLite's; on a PostgreSQL store the call goes to store/postgres/postgres_sql_query.h, which keeps
// the same limits, values and errors with PostgreSQL's own layers.
//
// Contract
//   * Only a single statement is accepted; what follows it may only be comments, spaces and semicolons.
//     While it is prepared and run, an SQLite authorizer refuses everything but reading: writes, schema
//     changes, ATTACH/DETACH, transactions, PRAGMAs other than a few read-only ones (also allowed as
//     table-valued functions: pragma_table_info('runs')), and the functions load_extension, readfile,
//     writefile, edit and fts3_tokenizer.
//     sqlite3_stmt_readonly is checked too. Refusals are kPermissionDenied naming what was refused.
//   * Limits (each -1 for none; below -1 is kInvalidArgument naming the limit):
//     - `max_rows`: after that many rows the query stops and *truncated is set (not an error).
//     - `max_value_bytes`: no single TEXT or BLOB value may be longer. It is SQLite's SQLITE_LIMIT_LENGTH for
//       the duration of the call, so SQLite refuses such a value before it builds it (a row being sorted or
//       grouped counts as one value). kResourceExhausted naming the per-value limit.
//     - `max_row_bytes`: the TEXT and BLOB bytes of one row together, checked before any of it is copied;
//       `max_columns` bounds what SQLite builds for a row (kInvalidArgument at prepare time when exceeded).
//       kResourceExhausted naming the per-row limit.
//     - `max_bytes`: the total size of the values passed to on_row (TEXT and BLOB by length, numbers 8),
//       checked before a value is copied. kResourceExhausted naming the per-response limit.
//     - `timeout_ms` of run time: kResourceExhausted naming the time limit.
//     - Temp files (sorts, temp indexes) count against the process-wide cap of store/sqlite/query_temp_storage.h
//       when `db` is read-only; reaching it is kResourceExhausted naming that cap.
//   * Values are passed as SqlValue: TEXT as std::string with SQLite's bytes unchanged (not necessarily
//     UTF-8), BLOB as SqlBlob. Columns are named before the first row. The row callback returns false to
//     stop early (e.g. the client went away).
//   * Errors (syntax, unknown table) come back as kInvalidArgument with SQLite's message.
//   * Uses the caller's connection and restores its authorizer, progress handler and length limit; one thread
//     at a time.
#ifndef XLADB_STORE_SQL_ENDPOINT_H_
#define XLADB_STORE_SQL_ENDPOINT_H_

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "base/status.h"
#include "store/backend/database.h"
#include "store/backend/sql_result.h"

namespace xladb::store {

[[nodiscard]] Status RunReadOnlySql(Database& db, const std::string& sql, const SqlLimits& limits,
                      const std::function<void(const std::vector<SqlColumn>&)>& on_columns,
                      const std::function<bool(const std::vector<SqlValue>&)>& on_row, bool* truncated = nullptr);

}  // namespace xladb::store

#endif  // XLADB_STORE_SQL_ENDPOINT_H_
