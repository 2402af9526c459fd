// BulkBatch: rows of a table that a dump fills by the thousand (values, live ranges, the schedule,
// instructions, report rows, TPU counters) or a few a file (allocations, computations, the peak list),
// gathered and written together by the connection's bulk append (store/backend/bulk_insert.h): a multi-row
// INSERT on SQLite, one array a column on PostgreSQL.
//
//   static const BulkInsert kInsert{"t", "a, b", "ON CONFLICT(a) DO UPDATE SET b = excluded.b", 1};
//   BulkBatch b(&kInsert);
//   b.Int(1); b.Text("x"); rows += b.EndRow(sql);  // per row: exactly `columns` cells, then EndRow
//   rows += b.Flush(sql);                          // before anything reads the table, and at the file's end
//
// A batch whose every row was ended with Keys::kNew goes by the insert without its conflict clause
// (BulkInsert::for_new_keys): the caller vouches that no row with such a key is stored, was written before, or
// is held in the batch (else the database refuses the batch as a duplicate key, which rolls the file back; a
// held batch's, its group).
//
// Contract: texts are copied in, so a row may be added from a record that is gone before the batch is
// written. EndRow writes once the connection's bulk_batch_rows() are held; EndRow and Flush return the rows
// the database changed, and throw SqlError on database errors (the caller's transaction then rolls the file
// back). A BulkInsert whose every row changes one (BulkInsert::every_row_changes) is written with
// AppendRowsLater and its rows counted as sent (the same number): on PostgreSQL its error is then thrown by
// the next call that waits (at the latest the file's RELEASE). A batch not flushed is dropped with the
// object. Given a HeldBulkRows (HoldIn), a batch hands its rows to it instead of writing them (counted as
// sent, as above), unless PostgreSQL might refuse one of its texts (not UTF-8, or over kMaxHeldTextBytes in a
// column an index holds): that batch is written at once, so its error fails the file
// (store/backend/held_bulk_rows.h). Not thread-safe.
#ifndef XLADB_STORE_BACKEND_BULK_BATCH_H_
#define XLADB_STORE_BACKEND_BULK_BATCH_H_

#include <cstddef>
#include <cstdint>
#include <initializer_list>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "store/backend/bulk_insert.h"
#include "store/backend/held_bulk_rows.h"
#include "store/backend/sql_connection.h"

namespace xladb::store {

class BulkBatch {
 public:
  static constexpr size_t kKeptTextBytes = 4096;
  // A held batch's texts are valid UTF-8, and this long at most in a column an index holds (HoldIn's
  // `indexed_texts`): PostgreSQL refuses an index entry past 2,704 bytes that does not compress (an entry
  // holds one such text besides integers and short constants), and a shared statement must not fail for one
  // file's text.
  static constexpr size_t kMaxHeldTextBytes = 2000;

  explicit BulkBatch(const BulkInsert* insert) : insert_(insert), columns_(insert->columns()) {}

  void Int(int64_t v) { cells_.push_back({v, BulkCell::Kind::kInt}); }
  void Real(double v) { cells_.push_back(BulkCell::Real(v)); }
  void Null() { cells_.push_back({0, BulkCell::Kind::kNull}); }
  template <typename T>
  void Opt(const std::optional<T>& v) {
    if (v) Int(static_cast<int64_t>(*v)); else Null();
  }
  void Text(std::string_view v);
  void OptText(const std::optional<std::string>& v) {
    if (v) Text(*v); else Null();
  }
  // What the caller knows of a row's key.
  enum class Keys {
    kMayExist,  // the insert's conflict clause decides what a row with a stored key does
    kNew,       // no row with this key is stored, written before, or held in the batch
  };

  // Call after the row's `columns` values; writes the batch once it is full. Returns the rows the database
  // changed.
  int64_t EndRow(SqlConnection& sql, Keys keys = Keys::kMayExist) {
    if (keys == Keys::kNew) ++rows_new_;
    return cells_.size() >= sql.bulk_batch_rows() * static_cast<size_t>(columns_) ? Flush(sql) : 0;
  }
  // Writes the rows held (or hands them to the HeldBulkRows); returns the rows the database changed.
  int64_t Flush(SqlConnection& sql);
  // Where rows go instead of being written (nullptr: written); must outlive the batch. Only for a batch
  // whose every write goes by an insert whose every row changes one (no conflict clause, DO UPDATE, or rows
  // always vouched new): a batch that held some rows and wrote others would write rows of its table before
  // rows held earlier. Flush throws SqlError for a batch that breaks this. `indexed_texts`: the insert's text
  // columns an index of the table holds (kMaxHeldTextBytes); throws SqlError for a name not among its columns.
  void HoldIn(HeldBulkRows* held, std::initializer_list<std::string_view> indexed_texts = {});

 private:
  void Clear();
  // Whether every text of the batch may be held (PostgreSQL: UTF-8 up to a NUL, kMaxHeldTextBytes at most in
  // an indexed column).
  bool TextsHoldable(const SqlConnection& sql) const;

  const BulkInsert* insert_;
  HeldBulkRows* held_ = nullptr;
  std::vector<bool> indexed_text_;  // by column: HoldIn's indexed_texts
  int columns_;
  std::vector<BulkCell> cells_;
  std::vector<std::string> texts_;
  size_t texts_used_ = 0;
  size_t rows_new_ = 0;  // rows ended with Keys::kNew since the last write (a row never ended is not vouched for)
};

}  // namespace xladb::store

#endif  // XLADB_STORE_BACKEND_BULK_BATCH_H_
