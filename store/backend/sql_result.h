// The values and limits of the read-only SQL endpoint (store/sql_endpoint.h), shared by its SQLite and
// PostgreSQL implementations (store/postgres/postgres_sql_query.h). Plain data; thread-safe.
#ifndef XLADB_STORE_BACKEND_SQL_RESULT_H_
#define XLADB_STORE_BACKEND_SQL_RESULT_H_

#include <cstdint>
#include <string>
#include <variant>

namespace xladb::store {

// A BLOB value: arbitrary bytes, kept apart from TEXT so callers can tell them apart.
struct SqlBlob {
  std::string bytes;
  bool operator==(const SqlBlob&) const = default;
};

// NULL, INTEGER, REAL, TEXT (bytes as stored), BLOB.
using SqlValue = std::variant<std::monostate, int64_t, double, std::string, SqlBlob>;

struct SqlColumn {
  std::string name;
  std::string declared_type;  // from the schema where known, else "" (expressions)
};

struct SqlLimits {
  int64_t max_rows = -1;         // rows passed to on_row
  int64_t max_bytes = -1;        // per response: value bytes passed to on_row, in total
  int64_t max_value_bytes = -1;  // per TEXT or BLOB value; SQLite's own limit (1e9 here) applies regardless
  int64_t max_row_bytes = -1;    // per row: its TEXT and BLOB bytes together, checked before any is copied
  int max_columns = -1;          // result columns (SQLITE_LIMIT_COLUMN during the call): SQLite builds a whole
                                 // row at once, so columns times max_value_bytes bounds its memory per row
  int64_t timeout_ms = -1;       // run time
};

}  // namespace xladb::store

#endif  // XLADB_STORE_BACKEND_SQL_RESULT_H_
