#include "store/sql_query.h"

#include <sqlite3.h>

#include <cstring>

namespace xladb::store {

Status RunReadOnlySql(Database& db, const std::string& sql,
                      const std::function<void(const std::vector<SqlColumn>&)>& on_columns,
                      const std::function<bool(const std::vector<SqlValue>&)>& on_row) {
  sqlite3* handle = db.sql().getHandle();
  sqlite3_stmt* stmt = nullptr;
  const char* tail = nullptr;
  int rc = sqlite3_prepare_v2(handle, sql.c_str(), static_cast<int>(sql.size()), &stmt, &tail);
  if (rc != SQLITE_OK) return Status::InvalidArgument(std::string("SQL error: ") + sqlite3_errmsg(handle));
  if (stmt == nullptr) return Status::InvalidArgument("empty SQL statement");
  struct Finalizer {
    sqlite3_stmt* s;
    ~Finalizer() { sqlite3_finalize(s); }
  } finalizer{stmt};
  for (const char* p = tail; p && *p; ++p) {
    if (*p != ' ' && *p != '\n' && *p != '\t' && *p != '\r' && *p != ';') {
      return Status::InvalidArgument("only one SQL statement is allowed per query");
    }
  }
  if (!sqlite3_stmt_readonly(stmt)) {
    return Status::PermissionDenied("the statement would modify the database; queries are read-only");
  }
  int n = sqlite3_column_count(stmt);
  std::vector<SqlColumn> columns(static_cast<size_t>(n));
  for (int i = 0; i < n; ++i) {
    columns[i].name = sqlite3_column_name(stmt, i);
    const char* decl = sqlite3_column_decltype(stmt, i);
    columns[i].declared_type = decl ? decl : "";
  }
  on_columns(columns);
  std::vector<SqlValue> row(static_cast<size_t>(n));
  for (;;) {
    rc = sqlite3_step(stmt);
    if (rc == SQLITE_DONE) break;
    if (rc != SQLITE_ROW) return Status::InvalidArgument(std::string("SQL error: ") + sqlite3_errmsg(handle));
    for (int i = 0; i < n; ++i) {
      switch (sqlite3_column_type(stmt, i)) {
        case SQLITE_NULL: row[i] = std::monostate{}; break;
        case SQLITE_INTEGER: row[i] = static_cast<int64_t>(sqlite3_column_int64(stmt, i)); break;
        case SQLITE_FLOAT: row[i] = sqlite3_column_double(stmt, i); break;
        default: {
          const unsigned char* text = sqlite3_column_text(stmt, i);
          int bytes = sqlite3_column_bytes(stmt, i);
          row[i] = std::string(reinterpret_cast<const char*>(text), static_cast<size_t>(bytes));
        }
      }
    }
    if (!on_row(row)) break;
  }
  return Status::Ok();
}

}  // namespace xladb::store
