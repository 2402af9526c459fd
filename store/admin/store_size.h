// How much the store holds: runs, modules and bytes, for the daemon's metrics (xladb_runs_stored,
// xladb_modules_stored, xladb_database_size_bytes) and for what a prune gave back.
//
// Contract: read-only statements on the caller's connection (a read-only Database is fine), one thread at a
// time per connection. Counting the modules reads a whole index of the modules table, so callers measure
// now and then (the daemon: every few seconds at most), never per request. kIoError on a database failure;
// no exceptions escape (StoreBytes aside: it is for callers already inside a transaction that handles them).
#ifndef XLADB_STORE_ADMIN_STORE_SIZE_H_
#define XLADB_STORE_ADMIN_STORE_SIZE_H_

#include <cstdint>

#include "base/status.h"
#include "store/backend/database.h"

namespace xladb::store {

struct StoreSize {
  int64_t runs = 0;
  int64_t modules = 0;
  int64_t bytes = 0;  // SQLite: the file and its WAL on disk; PostgreSQL: the database (pg_database_size)
};

[[nodiscard]] StatusOr<StoreSize> MeasureStore(Database& db);

// The bytes the store's data takes, for what a prune gave back: SQLite's pages (page_count × page_size), or
// the PostgreSQL database. Throws the backend's SqlError.
int64_t StoreBytes(SqlConnection& sql);

}  // namespace xladb::store

#endif  // XLADB_STORE_ADMIN_STORE_SIZE_H_
