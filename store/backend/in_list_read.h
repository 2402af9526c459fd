// InListRead: one SELECT over a list of integer keys (`… WHERE x IN ({ids}) …`), for readers that ask about
// many keys at once (the interned texts' hashes, a group's modules). The list's width is the next power of two
// from 8 (the keys padded with the last, which an IN list reads once), so a few prepared statements serve every
// list: PostgreSQL prepares each width once a connection (from its second use: store/postgres/postgres_backend.h),
// SQLite compiles it once.
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
#include <memory>
#include <span>
#include <string>
#include <unordered_map>
#include <utility>

#include "store/backend/sql_connection.h"

namespace xladb::store {

class InListRead {
 public:
  static constexpr size_t kMaxKeys = 4096;

  explicit InListRead(std::string sql) : sql_(std::move(sql)) {}

  // The width of the list that holds `n` keys: 8, 16, … (n >= 1).
  static size_t Width(size_t n) {
    size_t width = 8;
    while (width < n) width *= 2;
    return width;
  }

  SqlStatement& For(SqlConnection& sql, std::span<const int64_t> keys) {
    if (keys.empty() || keys.size() > kMaxKeys) {
      throw SqlError("InListRead: " + std::to_string(keys.size()) + " keys (1 to " + std::to_string(kMaxKeys) +
                     " a statement)");
    }
    const size_t width = Width(keys.size());
    std::unique_ptr<SqlStatement>& st = by_width_[width];
    if (!st) {
      std::string list = "?";
      for (size_t i = 1; i < width; ++i) list += ",?";
      std::string text = sql_;
      const size_t at = text.find("{ids}");
      if (at == std::string::npos) throw SqlError("InListRead: no {ids} in " + sql_);
      st = sql.Prepare(text.replace(at, 5, list));
    } else {
      st->Reset();
      st->ClearBindings();
    }
    for (size_t i = 0; i < width; ++i) st->Bind(static_cast<int>(i) + 1, keys[std::min(i, keys.size() - 1)]);
    return *st;
  }

 private:
  std::string sql_;
  std::unordered_map<size_t, std::unique_ptr<SqlStatement>> by_width_;
};

}  // namespace xladb::store

#endif  // XLADB_STORE_BACKEND_IN_LIST_READ_H_
