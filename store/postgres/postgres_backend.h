// PostgresBackend: the store's backend interface (store/backend/sql_connection.h) over one libpq connection.
//
// Statements are kept as text with SQLite's `?` and `?N` placeholders renumbered `$N`, and run with
// PQexecParams on their first Step (prepared on the server from their second run on, so the writer's
// statements are parsed and planned once): reals go as float8, text as text, integers and NULL untyped (the
// server infers their type from where they stand), all in text format; results come back whole, in text, and the getters parse them (a boolean reads as 1 or 0).
//
// Bulk appends (store/backend/bulk_insert.h) send one simple query a batch: create the table's temporary staging table
// if this session lacks it, COPY the rows into it (text format), and move them with
// `WITH moved AS (DELETE FROM staging RETURNING …) INSERT INTO table … SELECT … FROM moved <conflict clause>`,
// so a batch of thousands of rows is one round trip and the staging table is empty again after it. Rows whose
// conflict key repeats within a batch go to the next COPY (one INSERT may not update a row twice).
//
// ExecuteLater sends a statement in libpq's pipeline mode without waiting for its answer (at most
// kPipelineDepth wait at once); everything else on the connection first reads the answers waiting (Sync), so
// the server runs statements in the order they were given, and a deferred statement's error is thrown by the
// next call that waits.
//
// Contract: owns its PostgresConnection. Errors throw SqlError with the server's message and SQLSTATE. One
// thread at a time.
#ifndef XLADB_STORE_POSTGRES_POSTGRES_BACKEND_H_
#define XLADB_STORE_POSTGRES_POSTGRES_BACKEND_H_

#include <memory>
#include <string>
#include <string_view>
#include <unordered_map>

#include "store/postgres/postgres_connection.h"
#include "store/backend/sql_connection.h"

namespace xladb::store {

class BulkInsert;

// The statements sent and not yet answered on one connection (libpq's pipeline mode while there are any).
class PostgresPipeline {
 public:
  static constexpr int kPipelineDepth = 64;

  explicit PostgresPipeline(pg_conn* conn) : conn_(conn) {}
  // Before sending a statement whose answer is not awaited: enters pipeline mode.
  void Enter();
  // After sending one statement: reads every answer once kPipelineDepth wait.
  void Sent();
  // Reads every answer waiting and leaves pipeline mode; throws SqlError with the first error among them.
  void Sync();
  // As Sync, for destructors: an error is dropped.
  void SyncQuietly() noexcept;
  bool active() const { return active_; }

 private:
  pg_conn* conn_;
  bool active_ = false;
  int waiting_ = 0;
};

class PostgresBackend final : public SqlConnection {
 public:
  explicit PostgresBackend(std::unique_ptr<PostgresConnection> pg)
      : pg_(std::move(pg)), pipeline_(std::make_unique<PostgresPipeline>(pg_->raw())) {}
  ~PostgresBackend() override;
  SqlDialect dialect() const override { return SqlDialect::kPostgresql; }
  std::unique_ptr<SqlStatement> Prepare(std::string_view sql) override;
  void Exec(std::string_view sql) override;
  void BeginWrite() override { Exec("BEGIN"); }
  int64_t AppendRows(const BulkRows& rows) override;
  size_t bulk_batch_rows() const override { return kBatchRows; }
  // The connection, with no answer waiting (for callers that use libpq directly).
  PostgresConnection& connection() {
    pipeline_->Sync();
    return *pg_;
  }

  static constexpr size_t kBatchRows = 4096;

 private:
  // Copies rows [begin, end) of `rows` and moves them into the table; returns the rows changed.
  int64_t AppendSegment(const BulkRows& rows, size_t begin, size_t end);

  std::unique_ptr<PostgresConnection> pg_;
  std::unique_ptr<PostgresPipeline> pipeline_;
  struct BulkStaging {
    std::string table, sql;  // the staging table and the query that fills and empties it
    size_t rows_since_truncate = 0;
  };
  static constexpr size_t kTruncateRows = size_t{1} << 17;
  std::unordered_map<const BulkInsert*, BulkStaging> bulk_;
};

// `sql` with SQLite's placeholders as PostgreSQL's: `?N` becomes `$N`, and a bare `?` one more than the
// largest number before it (SQLite's rule). Quoted strings, quoted names and comments are left alone.
// `*count` (when given) gets the largest number: the statement's parameters, each NULL until bound.
std::string NumberedPlaceholders(std::string_view sql, int* count = nullptr);

}  // namespace xladb::store

#endif  // XLADB_STORE_POSTGRES_POSTGRES_BACKEND_H_
