#include "store/postgres/postgres_connection.h"

#include <charconv>
#include <cstdlib>
#include <utility>

#include "store/backend/bulk_insert.h"
#include "store/postgres/libpq_functions.h"

namespace xladb::store {
namespace {

// The server's message without libpq's trailing newline.
std::string Message(const char* text) {
  std::string m = text ? text : "";
  while (!m.empty() && (m.back() == '\n' || m.back() == ' ')) m.pop_back();
  return m;
}

// Owns a PGresult.
struct Result {
  explicit Result(PGresult* r) : get(r) {}
  ~Result() { pq::PQclear(get); }
  Result(const Result&) = delete;
  Result& operator=(const Result&) = delete;
  PGresult* get;
};

}  // namespace

std::string WithoutPassword(const std::string& target) {
  if (!IsPostgresUri(target)) return target;
  const size_t scheme = target.find("://") + 3;
  const size_t at = target.find('@', scheme);
  const size_t colon = target.find(':', scheme);
  if (at == std::string::npos || colon == std::string::npos || colon > at) return target;
  return target.substr(0, colon + 1) + "***" + target.substr(at);
}

StatusOr<std::unique_ptr<PostgresConnection>> PostgresConnection::Connect(const std::string& uri) {
  if (Status loaded = LoadLibpq(); !loaded.ok()) return loaded;
  PGconn* conn = pq::PQconnectdb(uri.c_str());
  if (conn == nullptr) return Status::IoError("connecting to PostgreSQL: out of memory");
  if (pq::PQstatus(conn) != CONNECTION_OK) {
    Status failed = Status::IoError("connecting to PostgreSQL: " + Message(pq::PQerrorMessage(conn)));
    pq::PQfinish(conn);
    return failed;
  }
  // "already exists, skipping" and the like are not for the user: warnings and errors only.
  pq::PQclear(pq::PQexec(conn, "SET client_min_messages = warning"));
  return std::unique_ptr<PostgresConnection>(new PostgresConnection(conn));
}

PostgresConnection::~PostgresConnection() { pq::PQfinish(conn_); }

PostgresError ErrorOf(PGconn* conn, const PGresult* result) {
  const char* state = result ? pq::PQresultErrorField(result, PG_DIAG_SQLSTATE) : nullptr;
  return {Message(result ? pq::PQresultErrorMessage(result) : pq::PQerrorMessage(conn)), state ? state : ""};
}

Status PostgresConnection::Failure(const void* result, const char* what) {
  PostgresError error = ErrorOf(conn_, static_cast<const PGresult*>(result));
  last_sqlstate_ = std::move(error.sqlstate);
  return Status::IoError(std::string(what) + ": " + error.message);
}

Status PostgresConnection::Exec(const std::string& sql) {
  Result r(pq::PQexec(conn_, sql.c_str()));
  const ExecStatusType status = pq::PQresultStatus(r.get);
  if (status == PGRES_COMMAND_OK || status == PGRES_TUPLES_OK || status == PGRES_EMPTY_QUERY) {
    last_sqlstate_.clear();
    return Status::Ok();
  }
  return Failure(r.get, "PostgreSQL");
}

StatusOr<PostgresConnection::Rows> PostgresConnection::Query(const std::string& sql,
                                                             const std::vector<std::string>& params) {
  std::vector<const char*> values;
  values.reserve(params.size());
  for (const std::string& p : params) values.push_back(p.c_str());
  Result r(pq::PQexecParams(conn_, sql.c_str(), static_cast<int>(values.size()), nullptr, values.data(), nullptr,
                            nullptr, /*resultFormat=*/0));
  if (pq::PQresultStatus(r.get) != PGRES_TUPLES_OK && pq::PQresultStatus(r.get) != PGRES_COMMAND_OK) {
    return Failure(r.get, "PostgreSQL");
  }
  last_sqlstate_.clear();
  Rows rows;
  const int columns = pq::PQnfields(r.get);
  for (int c = 0; c < columns; ++c) {
    rows.columns.emplace_back(pq::PQfname(r.get, c));
    rows.column_types.push_back(pq::PQftype(r.get, c));
  }
  const int n = pq::PQntuples(r.get);
  rows.values.reserve(static_cast<size_t>(n));
  for (int i = 0; i < n; ++i) {
    std::vector<std::optional<std::string>>& row = rows.values.emplace_back();
    for (int c = 0; c < columns; ++c) {
      if (pq::PQgetisnull(r.get, i, c)) {
        row.emplace_back(std::nullopt);
      } else {
        row.emplace_back(std::string(pq::PQgetvalue(r.get, i, c), static_cast<size_t>(pq::PQgetlength(r.get, i, c))));
      }
    }
  }
  return rows;
}

StatusOr<PostgresConnection::Rows> PostgresConnection::Describe(const std::string& sql) {
  Result prepared(pq::PQprepare(conn_, "", sql.c_str(), 0, nullptr));
  if (pq::PQresultStatus(prepared.get) != PGRES_COMMAND_OK) return Failure(prepared.get, "PostgreSQL");
  Result described(pq::PQdescribePrepared(conn_, ""));
  if (pq::PQresultStatus(described.get) != PGRES_COMMAND_OK) return Failure(described.get, "PostgreSQL");
  last_sqlstate_.clear();
  Rows rows;
  for (int c = 0; c < pq::PQnfields(described.get); ++c) {
    rows.columns.emplace_back(pq::PQfname(described.get, c));
    rows.column_types.push_back(pq::PQftype(described.get, c));
  }
  return rows;
}

Status PostgresConnection::QueryRowByRow(const std::string& sql,
                                         const std::function<bool(const RowCells&)>& on_row) {
  if (pq::PQsendQueryParams(conn_, sql.c_str(), 0, nullptr, nullptr, nullptr, nullptr, /*resultFormat=*/0) != 1) {
    return Failure(nullptr, "PostgreSQL");
  }
  Status status = Status::Ok();
  bool wanted = true;
  if (pq::PQsetSingleRowMode(conn_) != 1) status = Status::Internal("PostgreSQL: single-row mode refused");
  RowCells cells;
  // Every result up to the null one must be read before the connection takes another command.
  while (PGresult* raw = pq::PQgetResult(conn_)) {
    Result r(raw);
    const ExecStatusType kind = pq::PQresultStatus(r.get);
    if (kind == PGRES_SINGLE_TUPLE) {
      if (!wanted || !status.ok()) continue;
      cells.assign(static_cast<size_t>(pq::PQnfields(r.get)), std::nullopt);
      for (int c = 0; c < pq::PQnfields(r.get); ++c) {
        if (!pq::PQgetisnull(r.get, 0, c)) {
          cells[c] = std::string_view(pq::PQgetvalue(r.get, 0, c), pq::PQgetlength(r.get, 0, c));
        }
      }
      wanted = on_row(cells);
    } else if (kind != PGRES_TUPLES_OK && kind != PGRES_COMMAND_OK && status.ok()) {
      status = Failure(r.get, "PostgreSQL");
    }
  }
  if (status.ok()) last_sqlstate_.clear();
  return status;
}

Status PostgresConnection::BeginCopy(const std::string& table, const std::vector<std::string>& columns) {
  std::string sql = "COPY " + table + " (";
  for (size_t i = 0; i < columns.size(); ++i) sql += (i ? ", " : "") + columns[i];
  sql += ") FROM STDIN";
  Result r(pq::PQexec(conn_, sql.c_str()));
  if (pq::PQresultStatus(r.get) != PGRES_COPY_IN) return Failure(r.get, "PostgreSQL");
  return Status::Ok();
}

Status PostgresConnection::PutCopyData(std::string_view data) {
  if (pq::PQputCopyData(conn_, data.data(), static_cast<int>(data.size())) != 1) {
    return Status::IoError("PostgreSQL COPY: " + Message(pq::PQerrorMessage(conn_)));
  }
  return Status::Ok();
}

StatusOr<int64_t> PostgresConnection::EndCopy() {
  Status status = Status::Ok();
  if (pq::PQputCopyEnd(conn_, nullptr) != 1) {
    status = Status::IoError("PostgreSQL COPY: " + Message(pq::PQerrorMessage(conn_)));
  }
  int64_t rows = 0;
  // The COPY's result, then nothing (PQgetResult returns null once the command is done).
  while (PGresult* raw = pq::PQgetResult(conn_)) {
    Result r(raw);
    if (pq::PQresultStatus(r.get) != PGRES_COMMAND_OK) {
      if (status.ok()) status = Failure(r.get, "PostgreSQL COPY");
    } else {
      rows += std::strtoll(pq::PQcmdTuples(r.get), nullptr, 10);
    }
  }
  if (!status.ok()) return status;
  return rows;
}

void CopyRows::Separate() {
  if (!row_start_) data_.push_back('\t');
  row_start_ = false;
}

void CopyRows::Int(int64_t value) {
  Separate();
  char buf[24];
  auto [end, ec] = std::to_chars(buf, buf + sizeof buf, value);
  data_.append(buf, end);
}

void CopyRows::Text(std::string_view text) {
  Separate();
  text = StoredText(text);
  size_t run = 0;
  for (size_t i = 0; i < text.size(); ++i) {
    const char c = text[i];
    const char* escaped = c == '\\' ? "\\\\" : c == '\t' ? "\\t" : c == '\n' ? "\\n" : c == '\r' ? "\\r" : nullptr;
    if (escaped == nullptr) continue;
    data_.append(text.data() + run, i - run).append(escaped);
    run = i + 1;
  }
  data_.append(text.data() + run, text.size() - run);
}

void CopyRows::Null() {
  Separate();
  data_.append("\\N");
}

void CopyRows::EndRow() {
  data_.push_back('\n');
  row_start_ = true;
}

}  // namespace xladb::store
