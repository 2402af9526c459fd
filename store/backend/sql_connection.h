// SqlConnection and SqlStatement: the store's backend interface. The queries, the gate and the diff are
// written once against it; store/sqlite/sqlite_connection.h and store/postgres/postgres_backend.h implement it.
//
// SQL text is written once, in the portable subset both engines accept (docs/architecture.md, "Two
// backends"): `?` and `?N` placeholders (PostgreSQL's implementation numbers them `$N`), ON CONFLICT,
// RETURNING, COALESCE, CASE instead of SQLite's two-argument MAX/MIN, `IS NOT DISTINCT FROM` instead of
// `IS ?`, glob(pattern, text) for GLOB (PostgreSQL's schema defines it), and no integer arithmetic on
// booleans. Where a statement must differ, the caller asks dialect().
//
// Contract
//   * Prepare() compiles a statement (SQLite) or keeps its text until the first Step (PostgreSQL). Bind
//     indexes start at 1; a bound value stays bound across Reset().
//   * Step() runs the statement on its first call and moves to the next row on the others: true while there
//     is a row. Column getters read the current row; Int() of a NULL is 0, Text() of a NULL is "".
//   * Errors (syntax, constraint, lost connection) throw SqlError inside store/; every public store function
//     turns them into a Status (store/query/statement_text.h, CatchSqlErrors), so none crosses the module boundary.
//   * AppendRows() writes rows in bulk (store/backend/bulk_insert.h): the tables a dump fills by the thousand;
//     AppendRowsReturning() also answers what they returned (the ids of interned texts).
//   * A statement must not outlive its connection. One connection, one thread at a time.
#ifndef XLADB_STORE_BACKEND_SQL_CONNECTION_H_
#define XLADB_STORE_BACKEND_SQL_CONNECTION_H_

#include <concepts>
#include <cstdint>
#include <memory>
#include <span>
#include <stdexcept>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "store/backend/sql_dialect.h"

namespace xladb::store {

struct BulkRows;

// A failed statement: the engine's message, and PostgreSQL's SQLSTATE where there is one.
class SqlError : public std::runtime_error {
 public:
  explicit SqlError(const std::string& message, std::string sqlstate = "")
      : std::runtime_error(message), sqlstate_(std::move(sqlstate)) {}
  const std::string& sqlstate() const { return sqlstate_; }

 private:
  std::string sqlstate_;
};

class SqlStatement {
 public:
  virtual ~SqlStatement() = default;

  template <std::integral T>
  void Bind(int index, T value) { BindInt(index, static_cast<int64_t>(value)); }
  void Bind(int index, double value) { BindReal(index, value); }
  void Bind(int index, std::string_view value) { BindText(index, value); }
  void Bind(int index, const std::string& value) { BindText(index, value); }
  void Bind(int index, const char* value) { BindText(index, value); }
  virtual void BindNull(int index) = 0;
  // Binds text without copying it where the engine allows: `value` must stay unchanged until the statement
  // has run (the writer binds a record's fields this way, millions of times a file).
  virtual void BindTextRef(int index, std::string_view value) { BindText(index, value); }

  // Binds a list of integers as one value, PostgreSQL's bigint[] (for `column = ANY(?)`: one statement text for
  // any number of ids, and with the array a constant when the server plans, a hashed lookup instead of a
  // scan of the list each row). SQLite has no array type: it throws SqlError (callers ask dialect() first).
  virtual void BindIntArray(int index, std::span<const int64_t> values) {
    (void)index;
    (void)values;
    throw SqlError("BindIntArray: arrays are PostgreSQL's (this engine has none)");
  }

  [[nodiscard]] virtual bool Step() = 0;
  // Runs a statement to its end (its rows, if any, are not wanted) and resets it; returns the rows it
  // inserted, updated or deleted.
  virtual int64_t Execute() = 0;
  // Runs a statement whose rows and count are not wanted. SQLite runs it now (as Execute); PostgreSQL may
  // only send it (libpq's pipeline mode), and its error, if any, is then thrown by the next call on the same
  // connection that waits for the server: a statement that reads, Execute, Exec, AppendRows, or an
  // ExecuteLater that must wait (a statement's second run, when it is prepared; a full pipeline). So a writer
  // reaches such a call (its file's RELEASE, its COMMIT) before it counts the write as done. A ROLLBACK
  // discards an unread error with what it rolls back; a statement destroyed with errors unread drops them.
  // Outside a transaction, PostgreSQL runs the statements answered together (up to the call that waits, which
  // joins them when it runs a statement) as one implicit transaction: one that fails undoes them all.
  virtual void ExecuteLater() { Execute(); }
  // Back to before the first Step; the bindings stay.
  virtual void Reset() = 0;
  // Every placeholder back to NULL.
  virtual void ClearBindings() = 0;

  virtual int ColumnCount() const = 0;
  virtual bool IsNull(int column) const = 0;
  virtual int64_t Int(int column) const = 0;
  virtual double Real(int column) const = 0;
  virtual std::string Text(int column) const = 0;

  int64_t IntOr(int column, int64_t if_null) const { return IsNull(column) ? if_null : Int(column); }
  double RealOr(int column, double if_null) const { return IsNull(column) ? if_null : Real(column); }

 protected:
  virtual void BindInt(int index, int64_t value) = 0;
  virtual void BindReal(int index, double value) = 0;
  virtual void BindText(int index, std::string_view value) = 0;
};

// Resets a statement when the scope ends, however it ends. A cached statement left on a row (its reader threw
// half-way: a bug, std::bad_alloc) keeps its connection's read snapshot open on SQLite: every later statement
// of that connection reads the store as it was then, and a writer's next BEGIN IMMEDIATE fails.
class ResetWhenDone {
 public:
  explicit ResetWhenDone(SqlStatement& statement) : statement_(statement) {}
  ~ResetWhenDone() { statement_.Reset(); }
  ResetWhenDone(const ResetWhenDone&) = delete;
  ResetWhenDone& operator=(const ResetWhenDone&) = delete;

 private:
  SqlStatement& statement_;
};

class SqlConnection {
 public:
  virtual ~SqlConnection() = default;
  virtual SqlDialect dialect() const = 0;
  [[nodiscard]] virtual std::unique_ptr<SqlStatement> Prepare(std::string_view sql) = 0;
  // Runs one or more statements without results.
  virtual void Exec(std::string_view sql) = 0;
  // Runs one statement (no `;` between two) whose success is not awaited, as SqlStatement::ExecuteLater: SQLite
  // runs it now; PostgreSQL may only send it, and its error is then thrown by the next call that waits.
  virtual void ExecLater(std::string_view sql) { Exec(sql); }
  // Starts a transaction that will write: SQLite takes the write lock now (BEGIN IMMEDIATE), so a writer
  // never fails half-way on a lock; PostgreSQL takes row locks as it goes (BEGIN).
  virtual void BeginWrite() = 0;
  // Whether no other connection can insert into the store until this connection's open transaction ends, so
  // that the largest id it reads in a table stays the largest until it inserts: SQLite inside a transaction
  // (one writer at a time; a transaction whose snapshot another writer made stale fails at its first write
  // instead of writing); never on PostgreSQL, whose writers share the store row by row.
  virtual bool WritesAlone() const = 0;
  // Writes `rows` as their BulkInsert says (store/backend/bulk_insert.h); returns the rows the database changed
  // (inserted or updated).
  virtual int64_t AppendRows(const BulkRows& rows) = 0;
  // AppendRows for rows whose BulkInsert::every_row_changes (their count is rows.rows()), without waiting
  // where the engine allows, as ExecuteLater: PostgreSQL sends them into its pipeline, and their error is
  // thrown by the next call that waits; the caller meanwhile builds the next batch.
  virtual void AppendRowsLater(const BulkRows& rows) { AppendRows(rows); }
  // AppendRows for rows whose BulkInsert has a RETURNING list (returning() is not ""): appends to `returned`
  // the returned columns (integers, returned_columns() a row, in the list's order) of each row the database
  // inserted or updated, and returns how many rows that was. Rows come back in no promised order, so the
  // list names a key of its own (an interned text's hash beside its new id). Waits for the answer.
  virtual int64_t AppendRowsReturning(const BulkRows& rows, std::vector<int64_t>& returned) = 0;
  // Runs `statements` (each bound, none stepped yet, all from this connection's Prepare) together where the
  // engine gains from it: PostgreSQL sends them behind whatever waits in one pipeline and waits once, so N
  // reads cost one round trip; SQLite runs each at its first Step as usual. Their rows are then read with
  // Step. The caller reads them before it writes anything they read (on SQLite they run when stepped), in
  // the order given if one writes (an INSERT … RETURNING), and none may depend on another's effect.
  // Throws SqlError with the first error among them (or among the statements that waited before them, or one
  // a destructor read and kept: PostgresPipeline); some may then hold rows, so the caller resets each before
  // its next use. The statements must be distinct.
  virtual void RunTogether(std::span<SqlStatement* const> statements) { (void)statements; }
  // How many rows a caller gathers before AppendRows: a thousand on SQLite, where a statement's fixed cost is
  // paid once for them, thousands on PostgreSQL, where each append is a round trip to the server.
  virtual size_t bulk_batch_rows() const = 0;
};

// A read transaction for a query that runs many statements (the gate, a diff), on SQLite: every statement
// until it ends reads the same snapshot of the store, and SQLite takes that snapshot once instead of at every
// statement (a 500-module gate runs about 3,000). BEGIN (deferred: nothing is locked for writing), ROLLBACK
// when destroyed (nothing was written). The connection must not be in a transaction already.
// On PostgreSQL it does nothing: each statement stays in autocommit there, because a statement whose
// prepared name the session lost (the SQL endpoint's DISCARD ALL on a shared connection) is prepared again
// and retried (store/postgres/postgres_backend.cc), which an open transaction would not survive.
// Not thread-safe: one connection, one thread.
class ReadTransaction {
 public:
  explicit ReadTransaction(SqlConnection& connection)
      : connection_(connection.dialect() == SqlDialect::kSqlite ? &connection : nullptr) {
    if (connection_ != nullptr) connection_->Exec("BEGIN");
  }
  ~ReadTransaction() {
    if (connection_ == nullptr) return;
    try {
      connection_->Exec("ROLLBACK");
    } catch (...) {
    }
  }
  ReadTransaction(const ReadTransaction&) = delete;
  ReadTransaction& operator=(const ReadTransaction&) = delete;

 private:
  SqlConnection* connection_;  // nullptr on PostgreSQL
};

// A write transaction (SqlConnection::BeginWrite) that is rolled back unless Commit() is reached.
class WriteTransaction {
 public:
  explicit WriteTransaction(SqlConnection& connection) : connection_(connection) { connection_.BeginWrite(); }
  ~WriteTransaction() {
    if (committed_) return;
    try {
      connection_.Exec("ROLLBACK");
    } catch (...) {
    }
  }
  WriteTransaction(const WriteTransaction&) = delete;
  WriteTransaction& operator=(const WriteTransaction&) = delete;
  void Commit() {
    connection_.Exec("COMMIT");
    committed_ = true;
  }

 private:
  SqlConnection& connection_;
  bool committed_ = false;
};

// A named savepoint inside the open transaction: SAVEPOINT at construction, and rolled back (ROLLBACK TO, then
// RELEASE) at destruction unless Release() or RollBack() ended it first, so work that throws half-way leaves
// none of its statements behind while the transaction around it goes on.
// Contract
//   * Release() and RollBack() throw SqlError like any statement; a Release() that throws leaves the
//     savepoint open, so its destruction still rolls it back. The constructor's SAVEPOINT is sent with
//     ExecLater: on PostgreSQL its error, if any, is thrown by the next statement that waits (at the latest
//     Release()), and nothing the savepoint was to guard is counted as done before that. The destructor
//     never throws (a rollback that fails there is the transaction's to report, at its COMMIT or ROLLBACK).
//   * Movable, not copyable: a savepoint may outlive the call that opened it (a file's rows, BeginFile to
//     CommitFile). A moved-from savepoint is ended. `name` is SQL text, never a caller's value.
class Savepoint {
 public:
  Savepoint(SqlConnection& connection, std::string name) : connection_(&connection), name_(std::move(name)) {
    connection_->ExecLater("SAVEPOINT " + name_);
  }
  ~Savepoint() {
    if (connection_ == nullptr) return;
    try {
      RollBack();
    } catch (...) {
    }
  }
  Savepoint(Savepoint&& other) noexcept
      : connection_(std::exchange(other.connection_, nullptr)), name_(std::move(other.name_)) {}
  Savepoint& operator=(Savepoint&&) = delete;
  Savepoint(const Savepoint&) = delete;
  Savepoint& operator=(const Savepoint&) = delete;

  // Keeps the work done since the savepoint.
  void Release() {
    connection_->Exec("RELEASE " + name_);
    connection_ = nullptr;
  }
  // Drops the work done since the savepoint, and the savepoint.
  void RollBack() {
    SqlConnection* connection = std::exchange(connection_, nullptr);
    connection->Exec("ROLLBACK TO " + name_ + "; RELEASE " + name_);
  }

 private:
  SqlConnection* connection_;  // nullptr once ended
  std::string name_;
};

}  // namespace xladb::store

#endif  // XLADB_STORE_BACKEND_SQL_CONNECTION_H_
