// InListRead: one SELECT over a list of integer keys (`… WHERE x IN ({ids}) …`), for readers that ask about
// many keys at once (the interned texts' hashes, a group's modules). The list's width is StatementsByWidth's
// (store/backend/statements_by_width.h), the keys padded with the last, which an IN list reads once.
//
// Contract: `sql` holds "{ids}" once, where the placeholders go; Prepare'd on the connection the first call of
// a width names, which must be the same connection every call (statements are kept per object). For(…)
// returns the statement reset and bound, with every key of `keys` (1 to kMaxKeys of them); the caller steps
// it, and resets it when not read to the end. Throws SqlError when the text does not prepare. Not
// thread-safe.
#ifndef XLADB_STORE_BACKEND_IN_LIST_READ_H_
#define XLADB_STORE_BACKEND_IN_LIST_READ_H_

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <span>
#include <string>
#include <utility>

#include "store/backend/sql_connection.h"
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
    SqlStatement& st = statements_.For(sql, keys.size(), sql_, "{ids}", "?");
    const size_t width = StatementsByWidth::Width(keys.size());
    for (size_t i = 0; i < width; ++i) st.Bind(static_cast<int>(i) + 1, keys[std::min(i, keys.size() - 1)]);
    return st;
  }

 private:
  std::string sql_;
  StatementsByWidth statements_;
};

}  // namespace xladb::store

#endif  // XLADB_STORE_BACKEND_IN_LIST_READ_H_
