// RowBatch: rows of a table that a dump fills by the million (values, live ranges, the schedule), inserted
// kBatchRows at a time by one multi-row INSERT. SQLite's cost per statement (binding, stepping, setting up
// the program) is paid once per batch instead of once per row.
//
//   static const BatchedInsert kInsert{"INSERT INTO t(a, b) VALUES ",
//                                      " ON CONFLICT(a) DO UPDATE SET b = excluded.b", 2};
//   RowBatch b(&kInsert);
//   b.Int(1); b.Text("x"); rows += b.EndRow(cache);  // per row: exactly `columns` cells, then EndRow
//   rows += b.Flush(cache);                          // before anything reads the table, and at the file's end
//
// Contract: a BatchedInsert must have static storage (its texts are StatementCache keys), so the statements
// are prepared once per connection, not once per file. Texts are copied in, so a row may be added from a
// record that is gone before the batch is written. EndRow and Flush return the rows the database changed,
// and throw SqlError on database errors (the caller's transaction then rolls the file back). A
// batch not flushed is dropped with the object. Not thread-safe.
#ifndef XLADB_STORE_ROW_BATCH_H_
#define XLADB_STORE_ROW_BATCH_H_

#include "store/sql_connection.h"

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "store/statement_cache.h"

namespace xladb::store {

// The two statements of a batched INSERT: one row, and kBatchRows rows.
class BatchedInsert {
 public:
  static constexpr int kBatchRows = 64;

  // `head` is `INSERT INTO t(c1, …, cN) VALUES `, `tail` what follows the values (e.g. an ON CONFLICT
  // clause), `columns` is N.
  BatchedInsert(std::string_view head, std::string_view tail, int columns);

  const char* one_row() const { return one_row_.c_str(); }
  const char* full_batch() const { return full_batch_.c_str(); }
  int columns() const { return columns_; }

 private:
  std::string one_row_, full_batch_;
  int columns_;
};

class RowBatch {
 public:
  static constexpr int kBatchRows = BatchedInsert::kBatchRows;
  static constexpr size_t kKeptTextBytes = 4096;

  explicit RowBatch(const BatchedInsert* insert) : insert_(insert), columns_(insert->columns()) {}

  void Int(int64_t v) { cells_.push_back({v, Kind::kInt}); }
  void Null() { cells_.push_back({0, Kind::kNull}); }
  template <typename T>
  void Opt(const std::optional<T>& v) {
    if (v) Int(static_cast<int64_t>(*v)); else Null();
  }
  void Text(std::string_view v);
  // Call after the row's `columns` values; writes a full batch. Returns the rows the database changed.
  int64_t EndRow(StatementCache& statements) {
    return cells_.size() >= static_cast<size_t>(kBatchRows * columns_) ? Flush(statements) : 0;
  }
  // Writes the rows held; returns the rows the database changed.
  int64_t Flush(StatementCache& statements);

 private:
  enum class Kind : uint8_t { kInt, kText, kNull };
  struct Cell {
    int64_t value;  // the integer, or the text's index in texts_
    Kind kind;
  };

  void Clear();

  const BatchedInsert* insert_;
  int columns_;
  std::vector<Cell> cells_;
  std::vector<std::string> texts_;
  size_t texts_used_ = 0;
};

}  // namespace xladb::store

#endif  // XLADB_STORE_ROW_BATCH_H_
