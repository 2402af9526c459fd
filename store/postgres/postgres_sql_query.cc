#include "store/postgres/postgres_sql_query.h"

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <cstdlib>
#include <optional>
#include <string_view>

namespace xladb::store {
namespace {

// pg_type OIDs of the types read as numbers.
constexpr uint32_t kBoolOid = 16, kByteaOid = 17, kInt8Oid = 20, kInt2Oid = 21, kInt4Oid = 23, kTextOid = 25,
                   kOidOid = 26, kFloat4Oid = 700, kFloat8Oid = 701, kBpcharOid = 1042,
                   kVarcharOid = 1043;
constexpr int kFetchRows = 256;

// Functions refused by name (lower case): exact names, and name prefixes that cover a family.
constexpr std::string_view kRefusedFunctions[] = {
    "pg_stat_file", "pg_terminate_backend", "pg_cancel_backend", "pg_reload_conf", "pg_rotate_logfile",
    "pg_promote", "set_config", "query_to_xml", "query_to_xml_and_xmlschema", "query_to_xmlschema",
    "cursor_to_xml", "cursor_to_xmlschema", "table_to_xml", "database_to_xml", "schema_to_xml",
    // Each call assigns a transaction id, which the rollback does not give back (ids wrap around at 2^31),
    // or queues a notification; txid_current_if_assigned and pg_current_xact_id_if_assigned assign none.
    "txid_current", "pg_current_xact_id", "pg_notify"};
constexpr std::string_view kRefusedPrefixes[] = {"pg_read_", "pg_ls_", "lo_", "dblink", "pg_advisory",
                                                 "pg_try_advisory"};

bool IsIdentifierChar(char c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_' || c == '$' ||
         static_cast<unsigned char>(c) >= 0x80;
}

bool Refused(const std::string& name) {
  for (std::string_view refused : kRefusedFunctions) {
    if (name == refused) return true;
  }
  for (std::string_view prefix : kRefusedPrefixes) {
    if (name.rfind(prefix, 0) == 0) return true;
  }
  return false;
}

// The index just past the spaces and comments at `i`.
size_t SkipSpaceAndComments(std::string_view sql, size_t i) {
  while (i < sql.size()) {
    const char c = sql[i];
    if (c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\f') {
      ++i;
    } else if (sql.substr(i, 2) == "--") {
      while (i < sql.size() && sql[i] != '\n') ++i;
    } else if (sql.substr(i, 2) == "/*") {  // PostgreSQL's block comments nest
      int depth = 0;
      do {
        if (sql.substr(i, 2) == "/*") {
          ++depth;
          i += 2;
        } else if (sql.substr(i, 2) == "*/") {
          --depth;
          i += 2;
        } else {
          ++i;
        }
      } while (i < sql.size() && depth > 0);
    } else {
      break;
    }
  }
  return i;
}

// The index just past the string literal that starts at `i` ('…', E'…', $tag$…$tag$), or `i` when none does.
size_t PastStringLiteral(std::string_view sql, size_t i) {
  const char c = sql[i];
  const bool escape_string = (c == 'E' || c == 'e') && i + 1 < sql.size() && sql[i + 1] == '\'' &&
                             (i == 0 || !IsIdentifierChar(sql[i - 1]));
  if (c == '\'' || escape_string) {  // '…' ('' is a quote); E'…' (\' is one too)
    i += escape_string ? 2 : 1;
    while (i < sql.size()) {
      if (escape_string && sql[i] == '\\') {
        i += 2;
      } else if (sql[i] == '\'' && i + 1 < sql.size() && sql[i + 1] == '\'') {
        i += 2;
      } else if (sql[i] == '\'') {
        break;
      } else {
        ++i;
      }
    }
    return std::min(i + 1, sql.size());
  }
  if (c == '$' && (i == 0 || !IsIdentifierChar(sql[i - 1]))) {  // $tag$ … $tag$
    size_t end = i + 1;
    while (end < sql.size() && sql[end] != '$' && IsIdentifierChar(sql[end])) ++end;
    if (end < sql.size() && sql[end] == '$') {
      const std::string_view tag = sql.substr(i, end - i + 1);
      const size_t close = sql.find(tag, end + 1);
      return close == std::string_view::npos ? sql.size() : close + tag.size();
    }
  }
  return i;
}

// Why `sql` is refused before it is sent: the first refused function it calls (an identifier, bare or
// "quoted", any case, followed by `(` after any spaces and comments), or a U&"…" identifier; nullopt when
// nothing is.
std::optional<std::string> RefusedBeforeSending(std::string_view sql) {
  size_t i = 0;
  while (i < sql.size()) {
    const size_t next = SkipSpaceAndComments(sql, i);
    if (next != i) {
      i = next;
      continue;
    }
    if (const size_t past = PastStringLiteral(sql, i); past != i) {
      i = past;
      continue;
    }
    const char c = sql[i];
    if ((c == 'U' || c == 'u') && sql.substr(i + 1, 2) == "&\"") {
      return std::string("a U&\"…\" identifier");
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
    const size_t j = SkipSpaceAndComments(sql, i);
    if (j >= sql.size() || sql[j] != '(') continue;
    for (char& ch : name) ch = static_cast<char>(ch >= 'A' && ch <= 'Z' ? ch - 'A' + 'a' : ch);
    if (Refused(name)) return "the function " + name;
  }
  return std::nullopt;
}

// The statement's first keyword, upper case (after spaces, comments and opening parentheses).
std::string FirstKeyword(std::string_view sql) {
  size_t i = SkipSpaceAndComments(sql, 0);
  while (i < sql.size() && sql[i] == '(') i = SkipSpaceAndComments(sql, i + 1);
  std::string word;
  while (i < sql.size() && IsIdentifierChar(sql[i])) {
    const char c = sql[i++];
    word.push_back(static_cast<char>(c >= 'a' && c <= 'z' ? c - 'a' + 'A' : c));
  }
  return word;
}

// Why `sql` is refused unsent when it does not start as a query does: a cursor's body (and the wrapper's
// subquery) can only be one, and some statements act when merely prepared (CALL looks its procedure up).
std::optional<Status> NotAQuery(std::string_view sql) {
  const std::string first = FirstKeyword(sql);
  if (first == "SELECT" || first == "VALUES" || first == "TABLE" || first == "WITH") return std::nullopt;
  return Status::PermissionDenied("refused: only a query (SELECT, VALUES, TABLE, WITH … SELECT) is allowed, not " +
                                  (first.empty() ? std::string("this statement") : first));
}

// What a failed statement means for the caller, by its SQLSTATE.
Status Classify(const PostgresConnection& pg, const Status& failure, const SqlLimits& limits) {
  const std::string& state = pg.last_sqlstate();
  const std::string& why = failure.message();
  // The check CheckedQuery wraps around the statement refused a row: its failed cast quotes "xladb: …".
  if (const size_t mark = why.find("\"xladb: "); mark != std::string::npos) {
    const size_t start = mark + 8;
    return Status::ResourceExhausted(why.substr(start, why.find('"', start) - start));
  }
  if (state == "57014") {
    return Status::ResourceExhausted("the query ran past its time limit of " + std::to_string(limits.timeout_ms) +
                                     " ms");
  }
  if (state == "25006" || state == "42501" || state.rfind("0LP", 0) == 0 || state.rfind("28", 0) == 0) {
    return Status::PermissionDenied("refused: only reading is allowed (" + why + ")");
  }
  if (why.find("DECLARE CURSOR") != std::string::npos || why.find("data-modifying") != std::string::npos) {
    return Status::PermissionDenied("refused: only a query (SELECT, VALUES, WITH … SELECT) is allowed (" + why +
                                    ")");
  }
  if (why.find("multiple commands") != std::string::npos) {
    return Status::InvalidArgument("only one statement is allowed (" + why + ")");
  }
  return Status::InvalidArgument(why);
}

// The statement without the spaces, comments and semicolons after its last token: the body of the wrapper
// (store/postgres/postgres_sql_query.h), inside which a `;` would be a syntax error.
std::string StatementBody(const std::string& sql) {
  size_t i = 0, end = 0;
  while (i < sql.size()) {
    i = SkipSpaceAndComments(sql, i);
    if (i >= sql.size()) break;
    if (sql[i] == ';') {
      ++i;
      continue;
    }
    const size_t past = sql[i] == '"' ? std::min(sql.find('"', i + 1), sql.size() - 1) + 1  // "identifier"
                                      : PastStringLiteral(sql, i);
    i = past != i ? past : i + 1;
    end = i;
  }
  return sql.substr(0, end);
}

// The length of column `column`'s text form as the client counts it (FromPostgresText): text as sent, bytea
// as \x and two hex digits a byte; nullopt for the types read as numbers, which the caps do not count. For
// text and bytea the length comes from the value's header, without reading or copying the value.
std::optional<std::string> TextLengthSql(const std::string& column, uint32_t type_oid) {
  switch (type_oid) {
    case kBoolOid:
    case kInt8Oid:
    case kInt2Oid:
    case kInt4Oid:
    case kOidOid:
    case kFloat4Oid:
    case kFloat8Oid: return std::nullopt;
    case kTextOid:
    case kBpcharOid:  // char(n) as sent, padded: its cast to text would drop the padding
    case kVarcharOid: return "coalesce(octet_length(" + column + ")::int8, 0)";
    case kByteaOid: return "coalesce(2 + 2 * octet_length(" + column + ")::int8, 0)";
    default: return "coalesce(octet_length((" + column + ")::text)::int8, 0)";
  }
}

// `body` wrapped so that PostgreSQL itself refuses a row over the value or row cap before sending it: the
// statement's columns, then a check column that fails a cast (raising an error whose text is "xladb: …" and
// names the cap) when a value or the row is too long. The whole target list is computed before a row is
// sent, and libpq receives a row whole before the client can look at it, so only the server can stop a
// 400 MB value from crossing the wire. The cast's text depends on the row, so the planner cannot fold it
// into an error at planning time. `body` parsed on its own as one statement (Describe), so its parentheses
// balance and it cannot close the wrapper's.
std::string CheckedQuery(const std::string& body, const std::vector<uint32_t>& types, const SqlLimits& limits) {
  std::string columns, aliases, longest, sum;
  for (size_t c = 0; c < types.size(); ++c) {
    const std::string name = "xladb_c" + std::to_string(c + 1);
    columns += "q." + name + ", ";
    aliases += (c ? ", " : "") + name;
    if (auto length = TextLengthSql("q." + name, types[c])) {
      longest += (longest.empty() ? "" : ", ") + *length;
      sum += (sum.empty() ? "" : " + ") + *length;
    }
  }
  std::string check;
  if (!longest.empty() && limits.max_value_bytes >= 0) {
    const std::string cap = std::to_string(limits.max_value_bytes);
    check += " WHEN greatest(" + longest + ") > " + cap + " THEN ('xladb: a value of ' || greatest(" + longest +
             ") || ' bytes is over the per-value limit of " + cap + " bytes')::int";
  }
  if (!sum.empty() && limits.max_row_bytes >= 0) {
    const std::string cap = std::to_string(limits.max_row_bytes);
    check += " WHEN " + sum + " > " + cap + " THEN ('xladb: a row of ' || " + sum +
             " || ' bytes is over the per-row limit of " + cap + " bytes')::int";
  }
  // OFFSET 0 fences the statement off from the planner: without it PostgreSQL flattens the subquery and
  // computes each column once for the output and again inside every length the check takes.
  return "SELECT " + columns + (check.empty() ? "NULL::int" : "CASE" + check + " END") +
         " FROM (SELECT * FROM (" + body + ") xladb_statement OFFSET 0) q" +
         (types.empty() ? "" : "(" + aliases + ")");
}

Status Run(PostgresConnection& pg, const std::string& sql, const SqlLimits& limits,
           const std::function<void(const std::vector<SqlColumn>&)>& on_columns,
           const std::function<bool(const std::vector<SqlValue>&)>& on_row, bool* truncated) {
  const auto started = std::chrono::steady_clock::now();
  // Before each statement: a statement_timeout of what is left of the call's time (0 would mean none, so at
  // least 1 ms), set again each time so that nothing the query changed carries over.
  auto arm_timeout = [&]() -> Status {
    if (limits.timeout_ms < 0) return Status::Ok();
    const int64_t elapsed =
        std::chrono::duration_cast<std::chrono::milliseconds>(std::chrono::steady_clock::now() - started).count();
    if (elapsed > limits.timeout_ms) {
      return Status::ResourceExhausted("the query ran past its time limit of " + std::to_string(limits.timeout_ms) +
                                       " ms");
    }
    const int64_t left = std::max<int64_t>(1, limits.timeout_ms - elapsed);
    return pg.Exec("SET LOCAL statement_timeout = " + std::to_string(left));
  };
  if (Status armed = arm_timeout(); !armed.ok()) return armed;
  const std::string body = StatementBody(sql);
  auto described = pg.Describe(body);
  if (!described.ok()) return Classify(pg, described.status(), limits);
  const size_t column_count = described->columns.size();
  if (limits.max_columns >= 0 && static_cast<int64_t>(column_count) > limits.max_columns) {
    return Status::InvalidArgument("the query has " + std::to_string(column_count) +
                                   " columns, more than the limit of " + std::to_string(limits.max_columns));
  }
  if (auto declared = pg.Query("DECLARE xladb_query NO SCROLL CURSOR FOR " +
                               CheckedQuery(body, described->column_types, limits));
      !declared.ok()) {
    return Classify(pg, declared.status(), limits);
  }
  std::vector<SqlColumn> columns;
  for (const std::string& name : described->columns) columns.push_back({name, ""});
  on_columns(columns);
  int64_t rows_sent = 0, bytes_sent = 0;
  std::vector<SqlValue> row;
  // What one row from the server means: sent on, or the reason the query stops (a cap; Ok when it is done).
  auto take_row = [&](const PostgresConnection::RowCells& cells) -> std::optional<Status> {
    if (limits.max_rows >= 0 && rows_sent >= limits.max_rows) {
      if (truncated) *truncated = true;
      return Status::Ok();
    }
    // The server checked the value and row caps already; these checks are a second wall.
    int64_t row_bytes = 0;
    row.assign(column_count, std::monostate{});
    for (size_t c = 0; c < column_count && c < cells.size(); ++c) {
      if (!cells[c]) continue;
      const std::string text(*cells[c]);
      row[c] = FromPostgresText(text, described->column_types[c]);
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
        return Status::ResourceExhausted("a row of " + std::to_string(row_bytes) +
                                         " bytes is over the per-row limit of " +
                                         std::to_string(limits.max_row_bytes) + " bytes");
      }
      bytes_sent += static_cast<int64_t>(text.size());
    }
    if (limits.max_bytes >= 0 && bytes_sent > limits.max_bytes) {
      return Status::ResourceExhausted("the response is over its limit of " + std::to_string(limits.max_bytes) +
                                       " bytes");
    }
    if (!on_row(row)) return Status::Ok();
    ++rows_sent;
    return std::nullopt;
  };
  while (true) {
    if (Status armed = arm_timeout(); !armed.ok()) return armed;
    // Row by row (libpq's single-row mode): the client holds one row at a time, never a whole batch.
    int fetched = 0;
    std::optional<Status> stopped;
    Status batch = pg.QueryRowByRow("FETCH " + std::to_string(kFetchRows) + " FROM xladb_query",
                                    [&](const PostgresConnection::RowCells& cells) {
                                      ++fetched;
                                      stopped = take_row(cells);
                                      return !stopped.has_value();
                                    });
    if (!batch.ok()) return Classify(pg, batch, limits);
    if (stopped) return *stopped;
    if (fetched < kFetchRows) return Status::Ok();
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
  if (auto refused = RefusedBeforeSending(sql)) {
    return Status::PermissionDenied("refused: " + *refused + " is not allowed in a read-only query");
  }
  if (auto refused = NotAQuery(sql)) return *refused;
  if (Status begun = reader.Exec("BEGIN TRANSACTION ISOLATION LEVEL REPEATABLE READ READ ONLY"); !begun.ok()) {
    return begun;
  }
  // However Run ends: a callback that throws (std::bad_alloc building the answer) too, mid-batch (the
  // results still owed are dropped first). The session was left idle in its transaction, snapshot, locks and
  // cursor held, until the next query on the connection failed on that cursor.
  struct EndSession {
    PostgresConnection& reader;
    ~EndSession() {
      (void)reader.Exec("ROLLBACK");     // undoes what the transaction did, settings included
      (void)reader.Exec("DISCARD ALL");  // and the session's state: locks, prepared statements, temp tables
    }
  } end_session{reader};
  return Run(reader, sql, limits, on_columns, on_row, truncated);
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
  // A plain lower-case name, so it needs no quoting and means what it says; PUBLIC would be every role.
  for (char c : role) {
    if (!((c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '_')) {
      return Status::InvalidArgument("role name '" + role + "': lower-case letters, digits and _ only");
    }
  }
  if (role.empty() || role == "public") return Status::InvalidArgument("role name '" + role + "': not a role");
  return owner.Exec("DO $$ BEGIN EXECUTE format('GRANT USAGE ON SCHEMA %I TO " + role +
                    "', current_schema()); EXECUTE format('GRANT SELECT ON ALL TABLES IN SCHEMA %I TO " + role +
                    "', current_schema()); END $$");
}

Status PrepareSqlReader(const std::string& owner_uri, const std::string& reader_uri) {
  auto reader = PostgresConnection::Connect(reader_uri);
  if (!reader.ok()) return Status::IoError("connecting as the SQL reader: " + reader.status().message());
  auto who = reader.value()->Query("SELECT current_user");
  if (!who.ok()) return who.status();
  const std::string role = who->values.at(0).at(0).value_or("");
  auto owner = PostgresConnection::Connect(owner_uri);
  if (!owner.ok()) return owner.status();
  auto where = owner.value()->Query("SELECT current_user, current_database(), current_schema()");
  if (!where.ok()) return where.status();
  const auto& store = where->values.at(0);
  if (role == store[0]) {
    return Status::FailedPrecondition("the SQL reader logs in as the store's owner (" + role +
                                      "): give a role that may only read, e.g. xladb_reader");
  }
  Status granted = GrantReadOnlyAccess(*owner.value(), role);
  if (!granted.ok()) return granted;
  // Its search_path names the store's schema only once it may use it.
  auto sees = reader.value()->Query("SELECT current_database(), current_schema()");
  if (!sees.ok()) return sees.status();
  const auto& me = sees->values.at(0);
  if (me[0] != store[1] || me[1] != store[2]) {
    return Status::FailedPrecondition("the SQL reader sees database " + me[0].value_or("?") + ", schema " +
                                      me[1].value_or("(none)") + "; the store is in database " +
                                      store[1].value_or("?") + ", schema " + store[2].value_or("?") +
                                      " (set the same search_path in both URIs)");
  }
  // Asked as the reader, of every table of the store's schema.
  auto can_write = reader.value()->Query(
      "SELECT (SELECT rolsuper OR rolcreaterole FROM pg_roles WHERE rolname = current_user) OR "
      "has_schema_privilege(current_schema(), 'CREATE') OR EXISTS (SELECT 1 FROM pg_class c JOIN pg_namespace n "
      "ON n.oid = c.relnamespace WHERE n.nspname = current_schema() AND ("
      "(c.relkind IN ('r', 'p', 'v', 'm', 'f') AND (has_table_privilege(c.oid, 'INSERT, UPDATE, DELETE, TRUNCATE') "
      "OR has_any_column_privilege(c.oid, 'INSERT, UPDATE'))) OR "
      "(c.relkind = 'S' AND has_sequence_privilege(c.oid, 'UPDATE'))))");
  if (!can_write.ok()) return can_write.status();
  if (can_write->values.at(0).at(0) != "f") {
    return Status::FailedPrecondition("the SQL reader's role " + role +
                                      " may change the store (a superuser or CREATEROLE, CREATE on its schema, or "
                                      "a write privilege on a table, view, column or sequence): give a role that "
                                      "may only read");
  }
  return Status::Ok();
}

}  // namespace xladb::store
