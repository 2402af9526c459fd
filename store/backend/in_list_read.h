// InListRead: one SELECT over a list of integer keys (`… WHERE x IN ({ids}) …`), for readers that ask about
// many keys at once (the interned texts' hashes, a group's modules). On SQLite the list's width is
// StatementsByWidth's (store/backend/statements_by_width.h), the keys padded with the last, which an IN list
// reads once. On PostgreSQL `IN ({ids})` becomes `= ANY(?)` with the keys bound as one bigint[]
// (SqlStatement::BindIntArray): one statement for every count, where each width was a statement of its own
// whose parameters the server converted and planned at every bind (the real folder's ingest into PostgreSQL
// spent 146 ms binding these lists, 1,706 of them, and 266 ms running them).
//
// Contract: `sql` holds "IN ({ids})" once, where the keys go; Prepare'd on the connection the first call
// names, which must be the same connection every call (statements are kept per object). For(…) returns the
// statement reset and bound, with every key of `keys` (1 to kMaxKeys of them); the caller steps it, and
// resets it when not read to the end. Throws SqlError when the text does not prepare or lacks "IN ({ids})".
// Not thread-safe.
#ifndef XLADB_STORE_BACKEND_IN_LIST_READ_H_
#define XLADB_STORE_BACKEND_IN_LIST_READ_H_

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <string_view>
#include <utility>

#include "store/backend/sql_connection.h"
#include "store/backend/sql_dialect.h"
#include "store/backend/statements_by_width.h"

namespace xladb::store {

class InListRead {
 public:
  static constexpr size_t kMaxKeys = 4096;

  explicit InListRead(std::string sql) : sql_(std::move(sql)) {}

  SqlStatement& For(SqlConnection& sql, std::span<const int64_t> keys) {
    if (keys.empty() || keys.size() > kMaxKeys) {
      throw SqlError("InListRead: " + std::to_string(keys.size()) + " keys (1 to " + std::to_string(kMaxKeys) +
                     " a statement)");
    }
    if (sql.dialect() == SqlDialect::kPostgresql) {
      if (!as_array_) as_array_ = sql.Prepare(ArrayText());
      as_array_->Reset();
      as_array_->ClearBindings();
      as_array_->BindIntArray(1, keys);
      return *as_array_;
    }
    SqlStatement& st = statements_.For(sql, keys.size(), sql_, "{ids}", "?");
    const size_t width = StatementsByWidth::Width(keys.size());
    for (size_t i = 0; i < width; ++i) st.Bind(static_cast<int>(i) + 1, keys[std::min(i, keys.size() - 1)]);
    return st;
  }

 private:
  // The text with `IN ({ids})` as `= ANY(?)`.
  std::string ArrayText() const {
    static constexpr std::string_view kList = "IN ({ids})";
    const size_t at = sql_.find(kList);
    if (at == std::string::npos) throw SqlError("InListRead: the text has no \"IN ({ids})\": " + sql_);
    return sql_.substr(0, at) + "= ANY(?)" + sql_.substr(at + kList.size());
  }

  std::string sql_;
  StatementsByWidth statements_;             // SQLite's, one a width
  std::unique_ptr<SqlStatement> as_array_;  // PostgreSQL's
};

}  // namespace xladb::store

#endif  // XLADB_STORE_BACKEND_IN_LIST_READ_H_
