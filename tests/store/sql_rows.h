// A query's rows as one comparable string, on any backend's connection (tests' expected values are written so).
#ifndef XLADB_TESTS_STORE_SQL_ROWS_H_
#define XLADB_TESTS_STORE_SQL_ROWS_H_

#include <string>

#include "store/backend/sql_connection.h"

namespace xladb::testing {

// Every row of `query`, columns joined by '|', rows ended by '\n', NULL as "NULL".
inline std::string Rows(store::SqlConnection& sql, const std::string& query) {
  auto q = sql.Prepare(query);
  std::string out;
  while (q->Step()) {
    for (int c = 0; c < q->ColumnCount(); ++c) out += (c ? "|" : "") + (q->IsNull(c) ? "NULL" : q->Text(c));
    out += "\n";
  }
  return out;
}

}  // namespace xladb::testing

#endif  // XLADB_TESTS_STORE_SQL_ROWS_H_
