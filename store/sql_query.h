// SqlQuery: runs one read-only SQL statement against a Database and streams the rows, inside limits.
//
// Contract
//   * Only a single statement is accepted. While it is prepared and run, an SQLite authorizer refuses
//     everything but reading: writes, schema changes, ATTACH/DETACH, transactions, PRAGMAs other than a few
//     read-only ones, and the functions load_extension, readfile, writefile, edit and fts3_tokenizer.
//     sqlite3_stmt_readonly is checked too. Refusals are kPermissionDenied naming what was refused.
//   * Limits: after `max_rows` rows the query stops and *truncated is set (not an error); past `max_bytes`
//     of result text or `timeout_ms` of run time it stops with kResourceExhausted naming the limit.
//   * Values are passed as SqlValue; columns are named before the first row. The row callback returns false
//     to stop early (e.g. the client went away).
//   * Errors (syntax, unknown table) come back as kInvalidArgument with SQLite's message.
//   * Uses the caller's connection and restores its authorizer and progress handler; one thread at a time.
#ifndef XLADB_STORE_SQL_QUERY_H_
#define XLADB_STORE_SQL_QUERY_H_

#include <cstdint>
#include <functional>
#include <string>
#include <variant>
#include <vector>

#include "ingest/status.h"
#include "store/database.h"

namespace xladb::store {

using SqlValue = std::variant<std::monostate, int64_t, double, std::string>;

struct SqlColumn {
  std::string name;
  std::string declared_type;  // from the schema where known, else "" (expressions)
};

struct SqlLimits {
  int64_t max_rows = -1;      // -1: no limit
  int64_t max_bytes = -1;     // -1: no limit
  int64_t timeout_ms = -1;    // -1: no limit
};

Status RunReadOnlySql(Database& db, const std::string& sql, const SqlLimits& limits,
                      const std::function<void(const std::vector<SqlColumn>&)>& on_columns,
                      const std::function<bool(const std::vector<SqlValue>&)>& on_row, bool* truncated = nullptr);

}  // namespace xladb::store

#endif  // XLADB_STORE_SQL_QUERY_H_
