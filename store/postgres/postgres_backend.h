// PostgresBackend: the store's backend interface (store/backend/sql_connection.h) over one libpq connection.
//
// Statements are kept as text with SQLite's `?` and `?N` placeholders renumbered `$N`, and run with
// PQexecParams on their first Step (prepared on the server from their second run on, so the writer's
// statements are parsed and planned once): reals go as float8, text as text, integers and NULL untyped (the
// server infers their type from where they stand), all in text format; results come back whole, in text, and
// the getters parse them (a boolean reads as 1 or 0).
//
// Bulk appends (store/backend/bulk_insert.h; postgres_bulk_arrays.cc) send a batch as one array a column to a
// statement prepared once a session (binary arrays for bigint, text and double precision columns, the server's
// bind then parsing no digits and no quotes; text-format literals for any other type or a cell of another kind),
// `INSERT INTO table(…) SELECT unnest($1::type[]), … <conflict clause> [RETURNING …]`
// (the types read from pg_attribute at its first use; the arrays, of one length, unnested side by side in the
// select list, which streams their rows, where `SELECT * FROM unnest(…)` first copies them into a tuple store:
// 3–5% faster on a 200 MiB buffer assignment), behind the statements waiting in the
// pipeline: a batch of thousands of rows is one round trip shared with them, parsed and planned once a session;
// AppendRowsLater leaves it unanswered there, so the writer builds its next batch while the server inserts this
// one. (Until 2026-11-27 a batch went by COPY into a temporary staging table and an INSERT … SELECT out of it,
// a simple query planned again each time: 0.3 ms of the server's a batch however small, and slower on big files
// too.)
// Rows whose conflict key repeats within a batch go to the next append (one INSERT may not update a row twice);
// a batch of new keys goes by the insert's twin without the conflict clause (BulkInsert::for_new_keys).
//
// ExecuteLater sends a statement in libpq's pipeline mode without waiting for its answer (at most
// kPipelineDepth wait at once); a statement run while answers wait (Step, Execute) joins them and is answered
// with them, and everything else on the connection first reads the answers waiting (Sync), so the server runs
// statements in the order they were given, and a deferred statement's error is thrown by the next call that
// waits. Exec of one statement while answers wait (a file's RELEASE after its rows) joins the
// pipeline and waits with it: one round trip, not two (SAVEPOINT, RELEASE and COMMIT only: a BEGIN there would
// take the statements before it into its transaction). ExecLater (a SAVEPOINT) only joins it; RunTogether
// sends statements whose rows are read (reads, an INSERT … RETURNING) into it and keeps their rows.
//
// Contract: owns its PostgresConnection. Errors throw SqlError with the server's message and SQLSTATE. One
// thread at a time.
#ifndef XLADB_STORE_POSTGRES_POSTGRES_BACKEND_H_
#define XLADB_STORE_POSTGRES_POSTGRES_BACKEND_H_

#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

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
  // After sending one statement: reads every answer once kPipelineDepth wait. Its rows go to `*result`
  // (which must stay valid until the next Sync) when given, else they are dropped.
  void Sent(pg_result** result = nullptr);
  // Reads every answer waiting and leaves pipeline mode; throws SqlError with the error SyncQuietly kept, if
  // any (it came first), else the first error among the answers.
  void Sync();
  // As Sync, for destructors: an error is kept for the next Sync instead of thrown.
  void SyncQuietly() noexcept;
  // Drops the error SyncQuietly kept (after a ROLLBACK that succeeded: it undid what failed).
  void Forget() { dropped_.reset(); }
  bool active() const { return active_; }

 private:
  // Throws the error SyncQuietly kept, if any, and forgets it.
  void ThrowKept();

  pg_conn* conn_;
  bool active_ = false;
  std::vector<pg_result**> waiting_;  // per statement sent, where its rows go (nullptr: dropped)
  std::optional<SqlError> dropped_;  // what SyncQuietly read and could not throw
};

class PostgresBackend final : public SqlConnection {
 public:
  explicit PostgresBackend(std::unique_ptr<PostgresConnection> pg)
      : pg_(std::move(pg)), pipeline_(std::make_unique<PostgresPipeline>(pg_->raw())) {}
  ~PostgresBackend() override;
  SqlDialect dialect() const override { return SqlDialect::kPostgresql; }
  std::unique_ptr<SqlStatement> Prepare(std::string_view sql) override;
  void Exec(std::string_view sql) override;
  void ExecLater(std::string_view sql) override;
  void RunTogether(std::span<SqlStatement* const> statements) override;
  // READ COMMITTED whatever the server's default: the writer's waits on other writers' rows and on the
  // interned rows' lock (store/facts/interned_removals.h) rely on each statement seeing what committed before
  // it started.
  void BeginWrite() override { Exec("BEGIN ISOLATION LEVEL READ COMMITTED"); }
  bool WritesAlone() const override { return false; }
  int64_t AppendRows(const BulkRows& rows) override { return Append(rows, true, nullptr); }
  void AppendRowsLater(const BulkRows& rows) override { Append(rows, false, nullptr); }
  int64_t AppendRowsReturning(const BulkRows& rows, std::vector<int64_t>& returned) override {
    return Append(rows, true, &returned);
  }
  size_t bulk_batch_rows() const override { return kBatchRows; }
  // The connection, with no answer waiting (for callers that use libpq directly).
  PostgresConnection& connection() {
    pipeline_->Sync();
    return *pg_;
  }

  static constexpr size_t kBatchRows = 4096;
  // An append's arrays end after the row that takes them past this many bytes (the rest go in the next).
  static constexpr size_t kMaxArrayBytes = size_t{16} << 20;

 private:
  // Writes `rows`, one segment per run of rows without a conflict key twice; with `wait`, reads the
  // answers and returns the rows changed (and appends what they returned to `*returned`, when given), else
  // leaves them in the pipeline and returns 0.
  int64_t Append(const BulkRows& rows, bool wait, std::vector<int64_t>* returned);
  int64_t AppendSegment(const BulkRows& rows, size_t begin, size_t end, bool wait, std::vector<int64_t>* returned);
  // Sends the prepared statement `statement` with one array parameter a column (`formats`: 1 binary, 0 text).
  int64_t SendArrays(const std::string& statement, const std::vector<const char*>& values,
                     const std::vector<int>& lengths, const std::vector<int>& formats, bool wait,
                     std::vector<int64_t>* returned);
  // A BulkInsert's statement prepared on the server: its name, and each column's type (its arrays' elements).
  struct ArrayInsert {
    std::string name;
    std::vector<unsigned int> element_types;  // pg_type oids
  };
  // Prepares `insert`'s statement on the server.
  ArrayInsert PrepareArrayInsert(const BulkInsert& insert);

  std::unique_ptr<PostgresConnection> pg_;
  std::unique_ptr<PostgresPipeline> pipeline_;
  std::unordered_map<const BulkInsert*, ArrayInsert> bulk_;  // the prepared statement of each BulkInsert used
  // SAVEPOINT and RELEASE texts ExecLater sent: a statement each, prepared from its second run, so a writer's
  // savepoint a file is not parsed each time (3,944 parses for the real run folder of docs/PERFORMANCE.md).
  // Declared last: destroyed while the connection still is.
  std::unordered_map<std::string, std::unique_ptr<SqlStatement>> savepoint_statements_;
};

// `sql` with SQLite's placeholders as PostgreSQL's: `?N` becomes `$N`, and a bare `?` one more than the
// largest number before it (SQLite's rule). Quoted strings, quoted names and comments are left alone.
// `*count` (when given) gets the largest number: the statement's parameters, each NULL until bound.
std::string NumberedPlaceholders(std::string_view sql, int* count = nullptr);

}  // namespace xladb::store

#endif  // XLADB_STORE_POSTGRES_POSTGRES_BACKEND_H_
