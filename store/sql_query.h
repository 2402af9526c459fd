// SqlQuery: runs one read-only SQL statement against a Database and streams the rows.
//
// Contract
//   * Only a single statement is accepted; anything that would write (checked with sqlite3_stmt_readonly)
//     is refused with kPermissionDenied before it runs.
//   * Values are passed as SqlValue (null, integer, real, text, blob-as-text); columns are named before the
//     first row. The row callback returns false to stop early.
//   * Errors (syntax, unknown table) come back as kInvalidArgument with SQLite's message.
//   * Uses the caller's connection; one thread at a time.
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

Status RunReadOnlySql(Database& db, const std::string& sql,
                      const std::function<void(const std::vector<SqlColumn>&)>& on_columns,
                      const std::function<bool(const std::vector<SqlValue>&)>& on_row);

}  // namespace xladb::store

#endif  // XLADB_STORE_SQL_QUERY_H_
