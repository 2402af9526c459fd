#include "store/postgres_connection.h"

#include <libpq-fe.h>

#include <utility>

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
  ~Result() { PQclear(get); }
  Result(const Result&) = delete;
  Result& operator=(const Result&) = delete;
  PGresult* get;
};

}  // namespace

StatusOr<std::unique_ptr<PostgresConnection>> PostgresConnection::Connect(const std::string& uri) {
  PGconn* conn = PQconnectdb(uri.c_str());
  if (conn == nullptr) return Status::IoError("connecting to PostgreSQL: out of memory");
  if (PQstatus(conn) != CONNECTION_OK) {
    Status failed = Status::IoError("connecting to PostgreSQL: " + Message(PQerrorMessage(conn)));
    PQfinish(conn);
    return failed;
  }
  return std::unique_ptr<PostgresConnection>(new PostgresConnection(conn));
}

PostgresConnection::~PostgresConnection() { PQfinish(conn_); }

Status PostgresConnection::Exec(const std::string& sql) {
  Result r(PQexec(conn_, sql.c_str()));
  const ExecStatusType status = PQresultStatus(r.get);
  if (status == PGRES_COMMAND_OK || status == PGRES_TUPLES_OK || status == PGRES_EMPTY_QUERY) return Status::Ok();
  return Status::IoError("PostgreSQL: " + Message(PQresultErrorMessage(r.get)));
}

StatusOr<PostgresConnection::Rows> PostgresConnection::Query(const std::string& sql,
                                                             const std::vector<std::string>& params) {
  std::vector<const char*> values;
  values.reserve(params.size());
  for (const std::string& p : params) values.push_back(p.c_str());
  Result r(PQexecParams(conn_, sql.c_str(), static_cast<int>(values.size()), nullptr, values.data(), nullptr,
                        nullptr, /*resultFormat=*/0));
  if (PQresultStatus(r.get) != PGRES_TUPLES_OK && PQresultStatus(r.get) != PGRES_COMMAND_OK) {
    return Status::IoError("PostgreSQL: " + Message(PQresultErrorMessage(r.get)));
  }
  Rows rows;
  const int columns = PQnfields(r.get);
  for (int c = 0; c < columns; ++c) rows.columns.emplace_back(PQfname(r.get, c));
  const int n = PQntuples(r.get);
  rows.values.reserve(static_cast<size_t>(n));
  for (int i = 0; i < n; ++i) {
    std::vector<std::optional<std::string>>& row = rows.values.emplace_back();
    for (int c = 0; c < columns; ++c) {
      if (PQgetisnull(r.get, i, c)) {
        row.emplace_back(std::nullopt);
      } else {
        row.emplace_back(std::string(PQgetvalue(r.get, i, c), static_cast<size_t>(PQgetlength(r.get, i, c))));
      }
    }
  }
  return rows;
}

}  // namespace xladb::store
