// CopyEndpoint: what `xladb copy` (store/copy/store_copy.h) needs of one side of a copy, once for SQLite and once
// for PostgreSQL, so that the copy itself is written once for both directions.
//
// Values travel as SqlValue (store/sql_endpoint.h): NULL, integers, doubles (bit for bit: PostgreSQL gets 17
// significant digits), text. Statements name their parameters with Placeholder(n) ("?", or "$n" counting
// from 1).
//
// Contract: every method returns a Status, never throws. Begin/Commit/Rollback bracket a transaction; a
// source reads inside one for a consistent snapshot. Between BeginTable and EndTable only AddRow may be
// called. An endpoint uses the connection it was given, one call at a time; the connection must outlive it.
#ifndef XLADB_STORE_COPY_COPY_ENDPOINT_H_
#define XLADB_STORE_COPY_COPY_ENDPOINT_H_

#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "base/status.h"
#include "store/backend/database.h"
#include "store/postgres/postgres_connection.h"
#include "store/backend/sql_result.h"

namespace xladb::store {

class CopyEndpoint {
 public:
  using Row = std::vector<SqlValue>;
  virtual ~CopyEndpoint() = default;

  virtual std::string Placeholder(int n) const = 0;
  // A source: begins its read snapshot. A destination: creates what is missing of the schema.
  [[nodiscard]] virtual Status Open(bool as_source) = 0;
  [[nodiscard]] virtual Status Begin() = 0;
  [[nodiscard]] virtual Status Commit() = 0;
  virtual void Rollback() = 0;
  // A small result: every row of `sql`, its placeholders bound to `params` in order.
  [[nodiscard]] virtual StatusOr<std::vector<Row>> Query(const std::string& sql, const Row& params) = 0;
  // Every row of `sql` (one placeholder, bound to `key`), streamed to `on_row`, which may stop the read by
  // returning an error.
  [[nodiscard]] virtual Status ReadRows(const std::string& sql, int64_t key,
                                        const std::function<Status(const Row&)>& on_row) = 0;
  // Appends rows to `table`, values in `columns` order; EndTable returns how many were stored.
  [[nodiscard]] virtual Status BeginTable(const std::string& table, const std::vector<std::string>& columns) = 0;
  [[nodiscard]] virtual Status AddRow(const Row& row) = 0;
  [[nodiscard]] virtual StatusOr<int64_t> EndTable() = 0;
  // A destination, after the last run: what its ids need (PostgreSQL: identity sequences past the copied ids).
  [[nodiscard]] virtual Status Finish() = 0;
  // A destination, after Finish: what its planner and readers need of the `tables` this copy filled
  // (PostgreSQL: VACUUM (ANALYZE)). The copy is whole without it; an error here says what was left undone.
  [[nodiscard]] virtual Status Tidy(const std::vector<std::string>& tables) = 0;
};

std::unique_ptr<CopyEndpoint> SqliteCopyEndpoint(Database* db);
std::unique_ptr<CopyEndpoint> PostgresCopyEndpoint(PostgresConnection* pg);

}  // namespace xladb::store

#endif  // XLADB_STORE_COPY_COPY_ENDPOINT_H_
