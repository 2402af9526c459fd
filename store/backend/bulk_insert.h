// Bulk appends: the backend interface's way to write the tables a dump fills by the thousand (values, live
// ranges, the schedule, instructions, report rows, TPU counters). A caller gathers rows
// (store/backend/bulk_batch.h) and hands them to SqlConnection::AppendRows, which writes them as if each row
// had been inserted in order by
//
//   INSERT INTO <table>(<columns>) VALUES (…) <conflict clause>
//
// SQLite runs that statement for up to kBatchRows rows at a time (its cost per statement is paid once per batch);
// PostgreSQL sends the batch as one array a column to a prepared INSERT … SELECT unnest(…), … <conflict
// clause> (store/postgres/postgres_backend.cc; a batch of texts past 16 MiB in two or more), one round trip per
// batch at most instead of one per row.
//
// A row whose key the writer knows to be new (no stored row, no row written or held before with that key) may
// go by the insert's twin without the conflict clause (BulkInsert::for_new_keys, chosen per batch by
// BulkBatch): PostgreSQL then inserts without first probing the key's index for a conflict.
//
// A BulkInsert may name integer columns to return (`RETURNING <returning>`): SqlConnection::AppendRowsReturning
// then hands back those columns of each row the database inserted or updated (an interned text's new id).
//
// Contract: a BulkInsert has static storage (backends key their prepared statements by its
// address). Its first `key_columns` columns are the conflict key: a batch may hold a key more than once
// (later rows then update earlier ones, as separate INSERTs would), and the PostgreSQL backend splits such a
// batch, since one INSERT may not update a row twice.
#ifndef XLADB_STORE_BACKEND_BULK_INSERT_H_
#define XLADB_STORE_BACKEND_BULK_INSERT_H_

#include <bit>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace xladb::store {

// What a backend keeps of a text: up to its first NUL. PostgreSQL's text holds none (COPY and bound
// parameters end there); the interned texts are cut the same way on SQLite, so both backends store one text.
inline std::string_view StoredText(std::string_view text) { return text.substr(0, text.find('\0')); }

// Whether `text` is valid UTF-8 (no overlong form, surrogate or code point past U+10FFFF): what PostgreSQL
// takes as text in a UTF-8 database (what a backend keeps of a text, StoredText, has no NUL).
bool IsValidUtf8(std::string_view text);

class BulkInsert {
 public:
  // `columns`: "c1, c2, …, cN"; `conflict`: what follows the VALUES (an ON CONFLICT clause, or "");
  // `returning`: "" or integer columns of the table, "r1, …, rM", for AppendRowsReturning.
  BulkInsert(std::string_view table, std::string_view columns, std::string_view conflict, int key_columns,
             std::string_view returning = "");

  const std::string& table() const { return table_; }
  const std::string& column_list() const { return column_list_; }
  const std::string& conflict() const { return conflict_; }
  // The names in column_list(), in its order.
  const std::vector<std::string>& column_names() const { return column_names_; }
  int columns() const { return static_cast<int>(column_names_.size()); }
  int key_columns() const { return key_columns_; }
  // "" or the RETURNING list, and how many columns it names.
  const std::string& returning() const { return returning_; }
  int returned_columns() const { return returned_columns_; }
  // Every row appended inserts or updates one row: no conflict clause, or DO UPDATE without a WHERE. Such
  // rows may go by SqlConnection::AppendRowsLater, which counts them without asking the database.
  bool every_row_changes() const { return every_row_changes_; }
  // The same insert without its conflict clause (and no key to split batches at), for batches whose every
  // key is new; null when this insert has no conflict clause or returns columns. Owned by this BulkInsert.
  const BulkInsert* for_new_keys() const { return for_new_keys_.get(); }

 private:
  std::string table_, column_list_, conflict_, returning_;
  std::vector<std::string> column_names_;
  int key_columns_;
  int returned_columns_;
  bool every_row_changes_;
  std::unique_ptr<const BulkInsert> for_new_keys_;
};

// Throws SqlError unless `insert` names RETURNING columns (SqlConnection::AppendRowsReturning's precondition:
// without them it would answer nothing, silently).
void RequireReturning(const BulkInsert& insert);

// One cell of a bulk row: an integer, a double (its bits in `value`: real()), a text (`value` indexes
// BulkRows::texts) or NULL.
struct BulkCell {
  enum class Kind : uint8_t { kInt, kReal, kText, kNull };
  int64_t value;
  Kind kind;

  static BulkCell Real(double v) { return {std::bit_cast<int64_t>(v), Kind::kReal}; }
  double real() const { return std::bit_cast<double>(value); }
};

// Rows for SqlConnection::AppendRows: insert.columns() cells a row, in the order of insert.column_list().
struct BulkRows {
  const BulkInsert& insert;
  std::span<const BulkCell> cells;
  std::span<const std::string> texts;

  size_t rows() const { return cells.size() / static_cast<size_t>(insert.columns()); }
};

}  // namespace xladb::store

#endif  // XLADB_STORE_BACKEND_BULK_INSERT_H_
