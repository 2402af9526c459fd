// StatementsByWidth: the prepared statements of one SQL text over lists of any length (InListRead's keys,
// ValuesList's rows), one a list width: the next power of two from 8, so a few statements serve every list.
// PostgreSQL prepares each width once a connection (from its second use: store/postgres/postgres_backend.h),
// SQLite compiles it once.
//
// Contract: For(…) expands `text`'s `marker` (once in it) into `item` repeated `width` times, comma-separated,
// prepares it on the connection of the first call of that width (which must be the same every call), and hands
// it out reset and unbound. Throws SqlError when the marker is missing or the text does not prepare. Not
// thread-safe.
#ifndef XLADB_STORE_BACKEND_STATEMENTS_BY_WIDTH_H_
#define XLADB_STORE_BACKEND_STATEMENTS_BY_WIDTH_H_

#include <cstddef>
#include <memory>
#include <string>
#include <string_view>
#include <unordered_map>

#include "store/backend/sql_connection.h"

namespace xladb::store {

class StatementsByWidth {
 public:
  // The width of the list that holds `n` items: 8, 16, … (n >= 1).
  static size_t Width(size_t n) {
    size_t width = 8;
    while (width < n) width *= 2;
    return width;
  }

  // The statement of Width(n) items, reset and unbound.
  SqlStatement& For(SqlConnection& sql, size_t n, const std::string& text, std::string_view marker,
                    std::string_view item) {
    const size_t width = Width(n);
    std::unique_ptr<SqlStatement>& st = by_width_[width];
    if (st) {
      st->Reset();
      st->ClearBindings();
      return *st;
    }
    const size_t at = text.find(marker);
    if (at == std::string::npos) throw SqlError("no " + std::string(marker) + " in " + text);
    std::string list(item);
    for (size_t i = 1; i < width; ++i) list.append(",").append(item);
    st = sql.Prepare(std::string(text).replace(at, marker.size(), list));
    return *st;
  }

 private:
  std::unordered_map<size_t, std::unique_ptr<SqlStatement>> by_width_;
};

}  // namespace xladb::store

#endif  // XLADB_STORE_BACKEND_STATEMENTS_BY_WIDTH_H_
