#include "store/sql_query.h"

#include <sqlite3.h>

#include <chrono>
#include <cstring>
#include <string_view>

namespace xladb::store {
namespace {

struct AuthorizerState {
  std::string refused;  // what the authorizer refused, for the error message
};

bool IsOneOf(const char* s, std::initializer_list<std::string_view> names) {
  if (s == nullptr) return false;
  for (std::string_view n : names) {
    if (strcasecmp(s, std::string(n).c_str()) == 0) return true;
  }
  return false;
}

int ReadOnlyAuthorizer(void* user, int action, const char* arg1, const char* arg2, const char*, const char*) {
  auto* state = static_cast<AuthorizerState*>(user);
  auto refuse = [&](std::string what) {
    if (state->refused.empty()) state->refused = std::move(what);
    return SQLITE_DENY;
  };
  switch (action) {
    case SQLITE_SELECT:
    case SQLITE_READ:
    case SQLITE_RECURSIVE:
      return SQLITE_OK;
    case SQLITE_FUNCTION:
      if (IsOneOf(arg2, {"load_extension", "readfile", "writefile", "edit", "fts3_tokenizer"})) {
        return refuse(std::string("function ") + arg2 + "()");
      }
      return SQLITE_OK;
    case SQLITE_PRAGMA:
      // Read-only introspection without an argument is fine; anything that sets a value is not.
      if (arg2 == nullptr && IsOneOf(arg1, {"table_info", "table_xinfo", "table_list", "index_list", "index_info",
                                            "foreign_key_list", "user_version", "schema_version",
                                            "function_list", "collation_list", "compile_options"})) {
        return SQLITE_OK;
      }
      if (arg2 != nullptr && IsOneOf(arg1, {"table_info", "table_xinfo", "index_list", "index_info",
                                            "foreign_key_list"})) {
        return SQLITE_OK;
      }
      return refuse(std::string("PRAGMA ") + (arg1 ? arg1 : "?"));
    case SQLITE_ATTACH: return refuse("ATTACH");
    case SQLITE_DETACH: return refuse("DETACH");
    case SQLITE_TRANSACTION: return refuse("transactions");
    case SQLITE_SAVEPOINT: return refuse("SAVEPOINT");
    default:
      return refuse("statements that modify the database");
  }
}

struct ProgressState {
  std::chrono::steady_clock::time_point deadline;
  bool timed_out = false;
};

int ProgressHandler(void* user) {
  auto* state = static_cast<ProgressState*>(user);
  if (std::chrono::steady_clock::now() > state->deadline) {
    state->timed_out = true;
    return 1;  // interrupt
  }
  return 0;
}

}  // namespace

Status RunReadOnlySql(Database& db, const std::string& sql, const SqlLimits& limits,
                      const std::function<void(const std::vector<SqlColumn>&)>& on_columns,
                      const std::function<bool(const std::vector<SqlValue>&)>& on_row, bool* truncated) {
  if (truncated) *truncated = false;
  sqlite3* handle = db.sql().getHandle();
  AuthorizerState auth;
  ProgressState progress;
  sqlite3_set_authorizer(handle, ReadOnlyAuthorizer, &auth);
  if (limits.timeout_ms >= 0) {
    progress.deadline = std::chrono::steady_clock::now() + std::chrono::milliseconds(limits.timeout_ms);
    sqlite3_progress_handler(handle, 10000, ProgressHandler, &progress);
  }
  struct Restore {
    sqlite3* h;
    ~Restore() {
      sqlite3_set_authorizer(h, nullptr, nullptr);
      sqlite3_progress_handler(h, 0, nullptr, nullptr);
    }
  } restore{handle};

  sqlite3_stmt* stmt = nullptr;
  const char* tail = nullptr;
  int rc = sqlite3_prepare_v2(handle, sql.c_str(), static_cast<int>(sql.size()), &stmt, &tail);
  if (rc != SQLITE_OK) {
    if (!auth.refused.empty()) {
      return Status::PermissionDenied("refused: " + auth.refused + " (queries are read-only)");
    }
    return Status::InvalidArgument(std::string("SQL error: ") + sqlite3_errmsg(handle));
  }
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
    return Status::PermissionDenied("refused: the statement would modify the database (queries are read-only)");
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
  int64_t rows = 0, bytes = 0;
  for (;;) {
    rc = sqlite3_step(stmt);
    if (rc == SQLITE_DONE) break;
    if (rc != SQLITE_ROW) {
      if (progress.timed_out) {
        return Status::ResourceExhausted("query stopped after its time limit of " +
                                         std::to_string(limits.timeout_ms) + " ms");
      }
      if (!auth.refused.empty()) return Status::PermissionDenied("refused: " + auth.refused);
      return Status::InvalidArgument(std::string("SQL error: ") + sqlite3_errmsg(handle));
    }
    if (limits.max_rows >= 0 && rows >= limits.max_rows) {
      if (truncated) *truncated = true;
      break;
    }
    for (int i = 0; i < n; ++i) {
      switch (sqlite3_column_type(stmt, i)) {
        case SQLITE_NULL: row[i] = std::monostate{}; break;
        case SQLITE_INTEGER: row[i] = static_cast<int64_t>(sqlite3_column_int64(stmt, i)); bytes += 8; break;
        case SQLITE_FLOAT: row[i] = sqlite3_column_double(stmt, i); bytes += 8; break;
        default: {
          const unsigned char* text = sqlite3_column_text(stmt, i);
          int len = sqlite3_column_bytes(stmt, i);
          bytes += len;
          row[i] = std::string(reinterpret_cast<const char*>(text), static_cast<size_t>(len));
        }
      }
    }
    if (limits.max_bytes >= 0 && bytes > limits.max_bytes) {
      return Status::ResourceExhausted("query result exceeds the limit of " + std::to_string(limits.max_bytes) +
                                       " bytes; select fewer columns or add LIMIT");
    }
    ++rows;
    if (!on_row(row)) break;
  }
  return Status::Ok();
}

}  // namespace xladb::store
