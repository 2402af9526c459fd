// ValuesList: one statement over a list of rows of values (`UPDATE t SET … FROM (VALUES {rows}) AS v WHERE
// t.key = v.column1`), for writers that change many rows at once by their own figures (a group's modules'
// identities and summaries): one statement a list instead of one a row. The list's width is StatementsByWidth's
// (store/backend/statements_by_width.h); the rows past the caller's are left NULL, which a join on the key
// (`= v.column1`) never matches.
//
// Both engines name a VALUES list's columns column1, column2, …; `row` casts each placeholder
// (`CAST(? AS BIGINT)`) so PostgreSQL knows the column types that SQLite does not need.
//
// Contract: `sql` holds "{rows}" once; `row` is one parenthesized row of `columns` placeholders. For(…) returns
// the statement prepared (once a width, on the connection of its first call, which must be the same every
// call) with every parameter NULL; the caller binds row r's column c (both from 0) at Param(r, c) and runs it.
// Throws SqlError when the text does not prepare. Not thread-safe.
#ifndef XLADB_STORE_BACKEND_VALUES_LIST_H_
#define XLADB_STORE_BACKEND_VALUES_LIST_H_

#include <cstddef>
#include <string>
#include <utility>

#include "store/backend/sql_connection.h"
#include "store/backend/statements_by_width.h"

namespace xladb::store {

class ValuesList {
 public:
  static constexpr size_t kMaxRows = 1024;

  ValuesList(std::string sql, std::string row, int columns)
      : sql_(std::move(sql)), row_(std::move(row)), columns_(columns) {}

  // The statement for `rows` rows (1 to kMaxRows), every parameter NULL.
  SqlStatement& For(SqlConnection& sql, size_t rows) {
    if (rows == 0 || rows > kMaxRows) {
      throw SqlError("ValuesList: " + std::to_string(rows) + " rows (1 to " + std::to_string(kMaxRows) +
                     " a statement)");
    }
    return statements_.For(sql, rows, sql_, "{rows}", row_);
  }
  // The placeholder index of row `row`'s column `column`.
  int Param(size_t row, int column) const { return static_cast<int>(row) * columns_ + column + 1; }

 private:
  std::string sql_, row_;
  int columns_;
  StatementsByWidth statements_;
};

}  // namespace xladb::store

#endif  // XLADB_STORE_BACKEND_VALUES_LIST_H_
