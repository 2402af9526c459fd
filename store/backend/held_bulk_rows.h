// HeldBulkRows: the bulk rows of a group's small files, held until the group ends and then written a
// statement a table, where each file's batches were a statement a table a file (store/backend/bulk_batch.h).
// On PostgreSQL a statement costs the server about as much as a hundred rows (docs/PERFORMANCE.md), and the
// real run folder's files hold a few rows a table each.
//
// A BulkBatch given a HeldBulkRows (BulkBatch::HoldIn) hands it its rows instead of writing them: its insert's
// every row changes one (BulkInsert::every_row_changes: counted as sent, as BulkBatch counts rows it writes
// without waiting), and a batch with a text PostgreSQL might refuse (not UTF-8, or longer than an index entry
// may be in a column an index holds: BulkBatch::kMaxHeldTextBytes) is written at once instead, so that its
// error fails its own file, not the group. Rows are written in the order they were held, each table's in one
// statement for each run of rows that came by one insert (a batch's conflict-free twin, BulkInsert::
// for_new_keys, or the insert itself), so the result is what writing each batch at once would have left. The
// one exception is a batch written at once past rows of its table held earlier with the same key: impossible
// where the key holds the file's id (memory-report totals and rows, counters); the schedule, live ranges and
// peak list go at once only with a text PostgreSQL refuses, which fails their file; for the computations it
// takes two files of a module in one group, the later with a computation name over 2,000 bytes that
// PostgreSQL takes (it compresses), and the earlier file's row then wins. A table with a batch written at once
// sends its held rows by the insert with its conflict clause (WrittenAtOnce), so a key that batch took first
// cannot make the group's statement fail.
//
// The writer (store/write/run_writer.cc) owns one, holds only the rows of files small enough to keep, and
// keeps these rules: held rows are written before anything reads or removes rows of their tables (the
// group's derived facts, a replaced file's removal, the second pass), before a file whose batches are not
// held writes to their tables (a big file), and before the group's COMMIT; never inside a file's savepoint,
// so a file rolled back takes only its own rows (TruncateTo its Mark); a group rolled back drops them all.
//
// Holding needs a database that keeps UTF-8 as it is (server and client encoding UTF8 on PostgreSQL); the
// writer holds nothing elsewhere.
//
// Contract: texts are copied in. Write() sends the statements and waits for their answers: a failure is
// thrown (SqlError) there, for the caller to fail the group with. Not thread-safe.
#ifndef XLADB_STORE_BACKEND_HELD_BULK_ROWS_H_
#define XLADB_STORE_BACKEND_HELD_BULK_ROWS_H_

#include <cstddef>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "store/backend/bulk_insert.h"
#include "store/backend/sql_connection.h"

namespace xladb::store {

class HeldBulkRows {
 public:
  // Where the held rows stood (each table's), for TruncateTo.
  struct Mark {
    struct TableSizes {
      size_t cells, texts, runs;
    };
    std::vector<TableSizes> tables;
  };

  // Holds `cells` (rows of `insert`, BulkRows' layout) and the texts they index; `keyed` is the insert with
  // its conflict clause (`insert` itself, or the insert whose for_new_keys() `insert` is).
  void Hold(const BulkInsert& insert, const BulkInsert& keyed, std::span<const BulkCell> cells,
            std::span<const std::string> texts);
  // A batch of `table` was written at once (not held): its held rows go by their keyed insert.
  void WrittenAtOnce(std::string_view table);
  Mark mark() const;
  // Drops the rows held since `mark` (a file rolled back).
  void TruncateTo(const Mark& mark);
  // Writes every row held, then holds none.
  void Write(SqlConnection& sql);
  void Clear() { tables_.clear(); rows_ = 0; }
  bool empty() const { return rows_ == 0; }
  size_t rows() const { return rows_; }

 private:
  // A run of rows that came by one insert, from cell `begin` on.
  struct Run {
    const BulkInsert* insert;
    const BulkInsert* keyed;
    size_t begin;
  };
  struct Table {
    std::string name;
    std::vector<BulkCell> cells;
    std::vector<std::string> texts;
    std::vector<Run> runs;
    bool written_at_once = false;
  };
  Table& TableOf(const BulkInsert& insert);
  // Where run `r` of `t` ends (a cell index): the next run's beginning, or the table's end.
  static size_t RunEnd(const Table& t, size_t r);

  std::vector<Table> tables_;  // in the order they were first held
  size_t rows_ = 0;
};

}  // namespace xladb::store

#endif  // XLADB_STORE_BACKEND_HELD_BULK_ROWS_H_
