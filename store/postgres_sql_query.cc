#include "store/postgres_sql_query.h"

#include <chrono>
#include <cstdint>
#include <cstdlib>
#include <optional>
#include <string_view>

namespace xladb::store {
namespace {

// pg_type OIDs of the types read as numbers.
constexpr uint32_t kBoolOid = 16, kByteaOid = 17, kInt8Oid = 20, kInt2Oid = 21, kInt4Oid = 23, kOidOid = 26,
                   kFloat4Oid = 700, kFloat8Oid = 701;
constexpr int kFetchRows = 256;

// Functions refused by name (lower case): server files, other sessions and servers, settings, locks.
constexpr std::string_view kRefusedFunctions[] = {
    "pg_read_file", "pg_read_binary_file", "pg_ls_dir", "pg_stat_file", "pg_ls_logdir", "pg_ls_waldir",
    "pg_ls_tmpdir", "pg_ls_archive_statusdir", "lo_import", "lo_export", "lo_from_bytea", "lo_put", "lo_create",
    "lo_unlink", "dblink", "dblink_exec", "dblink_connect", "dblink_connect_u", "dblink_send_query",
    "pg_terminate_backend", "pg_cancel_backend", "pg_reload_conf", "pg_rotate_logfile", "pg_promote",
    "set_config", "pg_advisory_lock", "pg_advisory_xact_lock", "pg_advisory_lock_shared",
    "pg_advisory_xact_lock_shared", "pg_try_advisory_lock", "pg_try_advisory_xact_lock", "query_to_xml",
    "query_to_xml_and_xmlschema", "cursor_to_xml", "table_to_xml", "database_to_xml", "schema_to_xml"};

bool IsIdentifierChar(char c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_' || c == '$';
}

// The first refused function `sql` calls: an identifier (bare or "quoted", any case) followed by `(`, outside
// string literals and comments.
std::optional<std::string> RefusedFunction(std::string_view sql) {
  size_t i = 0;
  while (i < sql.size()) {
    const char c = sql[i];
    if (c == '\'') {  // string literal ('' escapes a quote)
      for (++i; i < sql.size(); ++i) {
        if (sql[i] == '\'' && (i + 1 >= sql.size() || sql[i + 1] != '\'')) break;
        if (sql[i] == '\'') ++i;
      }
      ++i;
      continue;
    }
    if (c == '-' && i + 1 < sql.size() && sql[i + 1] == '-') {
      while (i < sql.size() && sql[i] != '\n') ++i;
      continue;
    }
    if (c == '/' && i + 1 < sql.size() && sql[i + 1] == '*') {
      const size_t end = sql.find("*/", i + 2);
      i = end == std::string_view::npos ? sql.size() : end + 2;
      continue;
    }
    std::string name;
    if (c == '"') {
      const size_t end = sql.find('"', i + 1);
      if (end == std::string_view::npos) return std::nullopt;
      name = std::string(sql.substr(i + 1, end - i - 1));
      i = end + 1;
    } else if (IsIdentifierChar(c)) {
      const size_t start = i;
      while (i < sql.size() && IsIdentifierChar(sql[i])) ++i;
      name = std::string(sql.substr(start, i - start));
    } else {
      ++i;
      continue;
    }
    size_t j = i;
    while (j < sql.size() && (sql[j] == ' ' || sql[j] == '\t' || sql[j] == '\n' || sql[j] == '\r')) ++j;
    if (j >= sql.size() || sql[j] != '(') continue;
    for (char& ch : name) ch = static_cast<char>(ch >= 'A' && ch <= 'Z' ? ch - 'A' + 'a' : ch);
    for (std::string_view refused : kRefusedFunctions) {
      if (name == refused) return name;
    }
  }
  return std::nullopt;
}

// The statement's first keyword, upper case (after spaces, comments and opening parentheses).
std::string FirstKeyword(std::string_view sql) {
  size_t i = 0;
  while (i < sql.size()) {
    if (sql[i] == ' ' || sql[i] == '\t' || sql[i] == '\n' || sql[i] == '\r' || sql[i] == '(') {
      ++i;
    } else if (sql.substr(i, 2) == "--") {
      while (i < sql.size() && sql[i] != '\n') ++i;
    } else if (sql.substr(i, 2) == "/*") {
      const size_t end = sql.find("*/", i + 2);
      i = end == std::string_view::npos ? sql.size() : end + 2;
    } else {
      break;
    }
  }
  std::string word;
  while (i < sql.size() && IsIdentifierChar(sql[i])) {
    const char c = sql[i++];
    word.push_back(static_cast<char>(c >= 'a' && c <= 'z' ? c - 'a' + 'A' : c));
  }
  return word;
}

// What a failed statement means for the caller, by its SQLSTATE.
Status Classify(const PostgresConnection& pg, const Status& failure, const SqlLimits& limits,
                const std::string& sql) {
  const std::string& state = pg.last_sqlstate();
  const std::string& why = failure.message();
  if (state == "42601") {  // a syntax error: a statement that is not a query cannot be a cursor's body
    const std::string first = FirstKeyword(sql);
    if (first != "SELECT" && first != "VALUES" && first != "TABLE" && first != "WITH") {
      return Status::PermissionDenied("refused: only a query (SELECT, VALUES, TABLE, WITH … SELECT) is allowed, "
                                      "not " + (first.empty() ? std::string("this statement") : first));
    }
  }
  if (state == "57014") {
    return Status::ResourceExhausted("the query ran past its time limit of " + std::to_string(limits.timeout_ms) +
                                     " ms");
  }
  if (state == "25006" || state == "42501" || state.rfind("0LP", 0) == 0 || state.rfind("28", 0) == 0) {
    return Status::PermissionDenied("refused: only reading is allowed (" + why + ")");
  }
  if (why.find("DECLARE CURSOR") != std::string::npos || why.find("data-modifying") != std::string::npos) {
    return Status::PermissionDenied("refused: only a query (SELECT, VALUES, WITH … SELECT) is allowed (" + why + ")");
  }
  if (why.find("multiple commands") != std::string::npos) {
    return Status::InvalidArgument("only one statement is allowed (" + why + ")");
  }
  return Status::InvalidArgument(why);
}

// The statement without trailing spaces and semicolons (the cursor's body must end where the query does).
std::string Body(const std::string& sql) {
  size_t end = sql.size();
  while (end > 0 && (sql[end - 1] == ';' || sql[end - 1] == ' ' || sql[end - 1] == '\n' || sql[end - 1] == '\t' ||
                     sql[end - 1] == '\r')) {
    --end;
  }
  return sql.substr(0, end);
}

Status Run(PostgresConnection& pg, const std::string& sql, const SqlLimits& limits,
           const std::function<void(const std::vector<SqlColumn>&)>& on_columns,
           const std::function<bool(const std::vector<SqlValue>&)>& on_row, bool* truncated) {
  const auto started = std::chrono::steady_clock::now();
  if (limits.timeout_ms >= 0) {
    // statement_timeout 0 would mean none: the smallest real limit is 1 ms.
    const int64_t ms = limits.timeout_ms == 0 ? 1 : limits.timeout_ms;
    if (Status set = pg.Exec("SET LOCAL statement_timeout = " + std::to_string(ms)); !set.ok()) return set;
  }
  // The body may end in a comment: a newline closes it before nothing else follows.
  if (auto declared = pg.Query("DECLARE xladb_query NO SCROLL CURSOR FOR " + Body(sql) + "\n"); !declared.ok()) {
    return Classify(pg, declared.status(), limits, sql);
  }
  int64_t rows_sent = 0, bytes_sent = 0;
  bool named = false;
  std::vector<SqlValue> row;
  while (true) {
    auto batch = pg.Query("FETCH " + std::to_string(kFetchRows) + " FROM xladb_query");
    if (!batch.ok()) return Classify(pg, batch.status(), limits, sql);
    if (!named) {
      if (limits.max_columns >= 0 && static_cast<int64_t>(batch->columns.size()) > limits.max_columns) {
        return Status::InvalidArgument("the query has " + std::to_string(batch->columns.size()) +
                                       " columns, more than the limit of " + std::to_string(limits.max_columns));
      }
      std::vector<SqlColumn> columns;
      for (const std::string& name : batch->columns) columns.push_back({name, ""});
      on_columns(columns);
      named = true;
    }
    for (const auto& cells : batch->values) {
      if (limits.max_rows >= 0 && rows_sent >= limits.max_rows) {
        if (truncated) *truncated = true;
        return Status::Ok();
      }
      int64_t row_bytes = 0;
      row.assign(cells.size(), std::monostate{});
      for (size_t c = 0; c < cells.size(); ++c) {
        if (!cells[c]) continue;
        const std::string& text = *cells[c];
        row[c] = FromPostgresText(text, batch->column_types[c]);
        if (!std::holds_alternative<std::string>(row[c]) && !std::holds_alternative<SqlBlob>(row[c])) {
          bytes_sent += 8;
          continue;
        }
        if (limits.max_value_bytes >= 0 && static_cast<int64_t>(text.size()) > limits.max_value_bytes) {
          return Status::ResourceExhausted("a value of " + std::to_string(text.size()) +
                                           " bytes is over the per-value limit of " +
                                           std::to_string(limits.max_value_bytes) + " bytes");
        }
        row_bytes += static_cast<int64_t>(text.size());
        if (limits.max_row_bytes >= 0 && row_bytes > limits.max_row_bytes) {
          return Status::ResourceExhausted("a row is over the per-row limit of " +
                                           std::to_string(limits.max_row_bytes) + " bytes");
        }
        bytes_sent += static_cast<int64_t>(text.size());
        if (limits.max_bytes >= 0 && bytes_sent > limits.max_bytes) {
          return Status::ResourceExhausted("the response is over its limit of " + std::to_string(limits.max_bytes) +
                                           " bytes");
        }
      }
      if (limits.max_bytes >= 0 && bytes_sent > limits.max_bytes) {
        return Status::ResourceExhausted("the response is over its limit of " + std::to_string(limits.max_bytes) +
                                         " bytes");
      }
      if (!on_row(row)) return Status::Ok();
      ++rows_sent;
    }
    if (static_cast<int>(batch->values.size()) < kFetchRows) return Status::Ok();
    const auto elapsed =
        std::chrono::duration_cast<std::chrono::milliseconds>(std::chrono::steady_clock::now() - started).count();
    if (limits.timeout_ms >= 0 && elapsed > limits.timeout_ms) {
      return Status::ResourceExhausted("the query ran past its time limit of " + std::to_string(limits.timeout_ms) +
                                       " ms");
    }
  }
}

}  // namespace

Status RunReadOnlySqlOnPostgres(PostgresConnection& reader, const std::string& sql, const SqlLimits& limits,
                                const std::function<void(const std::vector<SqlColumn>&)>& on_columns,
                                const std::function<bool(const std::vector<SqlValue>&)>& on_row, bool* truncated) {
  if (truncated) *truncated = false;
  for (const auto& [value, name] : {std::pair{limits.max_rows, "max_rows"}, {limits.max_bytes, "max_bytes"},
                                    {limits.max_value_bytes, "max_value_bytes"},
                                    {limits.max_row_bytes, "max_row_bytes"},
                                    {static_cast<int64_t>(limits.max_columns), "max_columns"},
                                    {limits.timeout_ms, "timeout_ms"}}) {
    if (value < -1) return Status::InvalidArgument(std::string(name) + " must be -1 (none) or at least 0");
  }
  if (auto refused = RefusedFunction(sql)) {
    return Status::PermissionDenied("refused: the function " + *refused + " is not allowed in a read-only query");
  }
  if (Status begun = reader.Exec("BEGIN TRANSACTION ISOLATION LEVEL REPEATABLE READ READ ONLY"); !begun.ok()) {
    return begun;
  }
  Status result = Run(reader, sql, limits, on_columns, on_row, truncated);
  (void)reader.Exec("ROLLBACK");  // also undoes any setting the statement changed
  return result;
}

SqlValue FromPostgresText(const std::string& text, uint32_t type_oid) {
  switch (type_oid) {
    case kInt8Oid:
    case kInt4Oid:
    case kInt2Oid:
    case kOidOid: return static_cast<int64_t>(std::strtoll(text.c_str(), nullptr, 10));
    case kFloat8Oid:
    case kFloat4Oid: return std::strtod(text.c_str(), nullptr);
    case kBoolOid: return static_cast<int64_t>(text == "t" ? 1 : 0);
    case kByteaOid:
      if (text.rfind("\\x", 0) == 0) {
        SqlBlob blob;
        for (size_t k = 2; k + 1 < text.size(); k += 2) {
          blob.bytes.push_back(static_cast<char>(std::strtol(text.substr(k, 2).c_str(), nullptr, 16)));
        }
        return blob;
      }
      return text;
    default: return text;
  }
}

Status GrantReadOnlyAccess(PostgresConnection& owner, const std::string& role) {
  for (char c : role) {
    if (!IsIdentifierChar(c) || c == '$') {
      return Status::InvalidArgument("role name '" + role + "': letters, digits and _ only");
    }
  }
  if (role.empty()) return Status::InvalidArgument("no role name");
  return owner.Exec("DO $$ BEGIN EXECUTE format('GRANT USAGE ON SCHEMA %I TO " + role +
                    "', current_schema()); EXECUTE format('GRANT SELECT ON ALL TABLES IN SCHEMA %I TO " + role +
                    "', current_schema()); END $$");
}

}  // namespace xladb::store
