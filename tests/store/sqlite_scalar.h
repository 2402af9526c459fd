// One number read from a store's SQLite file in a test, the file opened read-only for the read (so the test
// sees what another connection committed).
#ifndef XLADB_TESTS_STORE_SQLITE_SCALAR_H_
#define XLADB_TESTS_STORE_SQLITE_SCALAR_H_

#include <SQLiteCpp/SQLiteCpp.h>

#include <cstdint>
#include <string>

namespace xladb::testing {

// The first column of the first row of `sql`; -1 when there is no row or the value is NULL.
inline int64_t Scalar(const std::string& db_path, const std::string& sql) {
  SQLite::Database db(db_path, SQLite::OPEN_READONLY);
  SQLite::Statement q(db, sql);
  if (!q.executeStep() || q.getColumn(0).isNull()) return -1;
  return q.getColumn(0).getInt64();
}

}  // namespace xladb::testing

#endif  // XLADB_TESTS_STORE_SQLITE_SCALAR_H_
