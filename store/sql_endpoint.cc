#include "store/sql_endpoint.h"

#include <sqlite3.h>

#include <algorithm>
#include <chrono>
#include <cstring>
#include <limits>
#include <string_view>
#include <utility>

#include "store/postgres/postgres_backend.h"
#include "store/postgres/postgres_sql_query.h"
#include "store/sqlite/query_temp_storage.h"
#include "store/sqlite/sqlite_connection.h"

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

int ReadOnlyAuthorizer(void* user, int action, const char* arg1, const char* arg2, const char* db_name,
                       const char* trigger) {
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
      // Read-only introspection without an argument is fine; anything that sets a value is not. The
      // table-valued forms (SELECT * FROM pragma_index_list('runs')) arrive here too, as the same PRAGMA
      // with the function's arguments, while the statement steps; SQLite offers them only for pragmas
      // without side effects, and their arguments never set a value.
      if (arg2 == nullptr && IsOneOf(arg1, {"table_info", "table_xinfo", "table_list", "index_list", "index_info",
                                            "index_xinfo", "foreign_key_list", "user_version", "schema_version",
                                            "function_list", "collation_list", "module_list", "pragma_list",
                                            "compile_options"})) {
        return SQLITE_OK;
      }
      if (arg2 != nullptr && IsOneOf(arg1, {"table_info", "table_xinfo", "table_list", "index_list", "index_info",
                                            "index_xinfo", "foreign_key_list"})) {
        return SQLITE_OK;
      }
      return refuse(std::string("PRAGMA ") + (arg1 ? arg1 : "?"));
    case SQLITE_UPDATE:
      // The first use on a connection of an eponymous virtual table (pragma_table_info(), json_each())
      // declares its columns by parsing a CREATE TABLE whose code never runs; SQLite 3.40 authorizes that
      // as an UPDATE of the columns of main.sqlite_master, outside any trigger. A real change to
      // sqlite_master is refused by SQLite itself (writable_schema is refused above), and
      // sqlite3_stmt_readonly is checked after the prepare.
      if (IsOneOf(arg1, {"sqlite_master"}) && IsOneOf(db_name, {"main"}) && trigger == nullptr) return SQLITE_OK;
      return refuse("statements that modify the database");
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

// Limits below -1 are a caller's mistake, not "no limit".
Status CheckLimits(const SqlLimits& limits) {
  const std::pair<const char*, int64_t> named[] = {{"max_rows", limits.max_rows},
                                                   {"max_bytes", limits.max_bytes},
                                                   {"max_value_bytes", limits.max_value_bytes},
                                                   {"max_row_bytes", limits.max_row_bytes},
                                                   {"max_columns", limits.max_columns},
                                                   {"timeout_ms", limits.timeout_ms}};
  for (const auto& [name, value] : named) {
    if (value < -1) {
      return Status::InvalidArgument(std::string("query limit ") + name + " is " + std::to_string(value) +
                                     "; it must be -1 (no limit) or at least 0");
    }
  }
  return Status::Ok();
}

// Makes sure the statement is the only one: what follows it must prepare to no statement at all (comments,
// spaces and semicolons do).
Status CheckNothingFollows(sqlite3* handle, const char* tail, const char* end, const AuthorizerState& auth) {
  while (tail < end) {
    sqlite3_stmt* next = nullptr;
    const char* rest = nullptr;
    int rc = sqlite3_prepare_v2(handle, tail, static_cast<int>(end - tail), &next, &rest);
    sqlite3_finalize(next);
    if (next != nullptr || !auth.refused.empty()) {
      return Status::InvalidArgument("only one SQL statement is allowed per query");
    }
    if (rc != SQLITE_OK) {
      return Status::InvalidArgument(std::string("SQL error after the first statement: ") + sqlite3_errmsg(handle));
    }
    if (rest == nullptr || rest <= tail) break;
    tail = rest;
  }
  return Status::Ok();
}

Status ValueTooLarge(int64_t max_value_bytes) {
  return Status::ResourceExhausted("a value in the query exceeds the per-value limit of " +
                                   std::to_string(max_value_bytes) +
                                   " bytes (a row being sorted or grouped counts as one value)");
}

// Why sqlite3_step (or the prepare) failed with `rc`, as the caller should hear it.
Status StepError(sqlite3* handle, int rc, const SqlLimits& limits, const AuthorizerState& auth,
                 const ProgressState& progress) {
  if (progress.timed_out) {
    return Status::ResourceExhausted("query stopped after its time limit of " + std::to_string(limits.timeout_ms) +
                                     " ms");
  }
  if ((rc & 0xff) == SQLITE_FULL && TakeQueryTempStorageRefusal()) {
    return Status::ResourceExhausted("query temp storage (sorts, temp indexes) reached the limit of " +
                                     std::to_string(QueryTempStorageLimit()) +
                                     " bytes shared by all queries; add LIMIT or a narrower WHERE, or retry later");
  }
  if ((rc & 0xff) == SQLITE_TOOBIG) {
    if (limits.max_value_bytes >= 0) return ValueTooLarge(limits.max_value_bytes);
    return Status::ResourceExhausted(std::string("a value in the query is too large: ") + sqlite3_errmsg(handle));
  }
  if (!auth.refused.empty()) return Status::PermissionDenied("refused: " + auth.refused + " (queries are read-only)");
  return Status::InvalidArgument(std::string("SQL error: ") + sqlite3_errmsg(handle));
}

// Reads column `i` of the current row into `out`, adding its size to `*bytes`, unless it is longer than
// `max_value_bytes` or would take `*bytes` past `max_bytes`.
Status ReadValue(sqlite3_stmt* stmt, int i, const SqlLimits& limits, int64_t* bytes, SqlValue* out) {
  const int type = sqlite3_column_type(stmt, i);
  int64_t size = 0;
  const void* data = nullptr;
  switch (type) {
    case SQLITE_NULL: *out = std::monostate{}; break;
    case SQLITE_INTEGER: *out = static_cast<int64_t>(sqlite3_column_int64(stmt, i)); size = 8; break;
    case SQLITE_FLOAT: *out = sqlite3_column_double(stmt, i); size = 8; break;
    default:  // TEXT or BLOB: the pointer first, then its length (SQLite's documented order), both as stored
      data = type == SQLITE_TEXT ? static_cast<const void*>(sqlite3_column_text(stmt, i))
                                 : sqlite3_column_blob(stmt, i);
      size = sqlite3_column_bytes(stmt, i);
      if (limits.max_value_bytes >= 0 && size > limits.max_value_bytes) return ValueTooLarge(limits.max_value_bytes);
  }
  *bytes += size;
  if (limits.max_bytes >= 0 && *bytes > limits.max_bytes) {
    return Status::ResourceExhausted("query result exceeds the per-response limit of " +
                                     std::to_string(limits.max_bytes) + " bytes; select fewer columns or add LIMIT");
  }
  if (type == SQLITE_TEXT || type == SQLITE_BLOB) {
    std::string value(static_cast<const char*>(data), data ? static_cast<size_t>(size) : 0);
    if (type == SQLITE_TEXT) *out = std::move(value);
    else *out = SqlBlob{std::move(value)};
  }
  return Status::Ok();
}

}  // namespace

Status RunReadOnlySql(Database& db, const std::string& sql, const SqlLimits& limits,
                      const std::function<void(const std::vector<SqlColumn>&)>& on_columns,
                      const std::function<bool(const std::vector<SqlValue>&)>& on_row, bool* truncated) {
  if (!db.is_sqlite()) {
    // A PostgreSQL store: its own layers (store/postgres/postgres_sql_query.h) on the store's connection. The call
    // resets the session (DISCARD ALL), so a reader's read-only default is set again after it.
    auto& pg = static_cast<PostgresBackend&>(db.connection()).connection();
    Status st = RunReadOnlySqlOnPostgres(pg, sql, limits, on_columns, on_row, truncated);
    if (db.mode() == Database::Mode::kReadOnly) (void)pg.Exec("SET default_transaction_read_only = on");
    return st;
  }
  if (truncated) *truncated = false;
  Status valid = CheckLimits(limits);
  if (!valid.ok()) return valid;
  sqlite3* handle = SqliteOf(db).getHandle();
  AuthorizerState auth;
  ProgressState progress;
  sqlite3_set_authorizer(handle, ReadOnlyAuthorizer, &auth);
  if (limits.timeout_ms >= 0) {
    progress.deadline = std::chrono::steady_clock::now() + std::chrono::milliseconds(limits.timeout_ms);
    sqlite3_progress_handler(handle, 10000, ProgressHandler, &progress);
  }
  // SQLite refuses to build a string or blob longer than SQLITE_LIMIT_LENGTH, but counts a function's text
  // with its terminating NUL: one byte of slack keeps a value of exactly max_value_bytes possible, and
  // ReadValue refuses the one size that slack lets through.
  const int previous_length = sqlite3_limit(handle, SQLITE_LIMIT_LENGTH, -1);
  if (limits.max_value_bytes >= 0) {
    sqlite3_limit(handle, SQLITE_LIMIT_LENGTH,
                  static_cast<int>(std::min<int64_t>(limits.max_value_bytes, std::numeric_limits<int>::max() - 1) + 1));
  }
  const int previous_columns = sqlite3_limit(handle, SQLITE_LIMIT_COLUMN, -1);
  if (limits.max_columns > 0) sqlite3_limit(handle, SQLITE_LIMIT_COLUMN, limits.max_columns);
  struct Restore {
    sqlite3* h;
    int length;
    int columns;
    ~Restore() {
      sqlite3_set_authorizer(h, nullptr, nullptr);
      sqlite3_progress_handler(h, 0, nullptr, nullptr);
      sqlite3_limit(h, SQLITE_LIMIT_LENGTH, length);
      sqlite3_limit(h, SQLITE_LIMIT_COLUMN, columns);
    }
  } restore{handle, previous_length, previous_columns};
  (void)TakeQueryTempStorageRefusal();  // forget a refusal this thread saw outside this query

  sqlite3_stmt* stmt = nullptr;
  const char* tail = nullptr;
  int rc = sqlite3_prepare_v2(handle, sql.c_str(), static_cast<int>(sql.size()), &stmt, &tail);
  if (rc != SQLITE_OK) return StepError(handle, rc, limits, auth, progress);
  if (stmt == nullptr) return Status::InvalidArgument("empty SQL statement");
  struct Finalizer {
    sqlite3_stmt* s;
    ~Finalizer() { sqlite3_finalize(s); }
  } finalizer{stmt};
  Status alone = CheckNothingFollows(handle, tail, sql.c_str() + sql.size(), auth);
  if (!alone.ok()) return alone;
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
    if (rc != SQLITE_ROW) return StepError(handle, rc, limits, auth, progress);
    if (limits.max_rows >= 0 && rows >= limits.max_rows) {
      if (truncated) *truncated = true;
      break;
    }
    if (limits.max_row_bytes >= 0) {
      int64_t row_bytes = 0;
      for (int i = 0; i < n; ++i) {
        const int type = sqlite3_column_type(stmt, i);
        if (type == SQLITE_TEXT || type == SQLITE_BLOB) row_bytes += sqlite3_column_bytes(stmt, i);
      }
      if (row_bytes > limits.max_row_bytes) {
        return Status::ResourceExhausted("one row holds " + std::to_string(row_bytes) +
                                         " bytes, past the per-row limit of " + std::to_string(limits.max_row_bytes) +
                                         " bytes; select fewer or shorter columns");
      }
    }
    for (int i = 0; i < n; ++i) {
      Status value = ReadValue(stmt, i, limits, &bytes, &row[i]);
      if (!value.ok()) return value;
    }
    ++rows;
    if (!on_row(row)) break;
  }
  return Status::Ok();
}

}  // namespace xladb::store
