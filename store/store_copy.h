// Copying a store into PostgreSQL (`xladb copy SRC DST`): how a team moves its SQLite file up to the shared
// server. The destination gets the schema (store/schema_dialect.h), then every run of the source, each run in
// one PostgreSQL transaction with every row that belongs to it, keeping the source's ids. A copy that stops
// part-way (a crash, a lost connection) leaves whole runs only, and running it again copies the runs still
// missing: it is resumable at run granularity.
//
// What goes where (store/row_tables.h lists the tables):
//   * texts shared by all runs (shapes, source_files, names, long_texts) first, the rows past the
//     destination's largest id (ids only grow), in their own transaction;
//   * per run: runs, run_labels, dump_files, modules; the rows of its files (kFileRowTables); the rows of
//     its modules (kModuleRowTables, kModuleDerivedTables);
//   * not ingest_jobs: a daemon's own queue.
// Rows travel with COPY … FROM STDIN. Afterwards the identity sequences continue past the copied ids, and
// every table's row count is compared on both sides; a difference is an error that names the table.
//
// Contract: the source is read in one read transaction (a consistent snapshot; a daemon may keep writing).
// The destination must be empty or hold an earlier copy of this same source: a run id that names another run
// there is refused before anything of that run is written. Errors are Status values; no exception escapes.
// Not thread-safe; each side's connection is used by this call only.
#ifndef XLADB_STORE_STORE_COPY_H_
#define XLADB_STORE_STORE_COPY_H_

#include <cstdint>
#include <string>
#include <vector>

#include "ingest/status.h"
#include "store/database.h"
#include "store/postgres_connection.h"

namespace xladb::store {

struct CopyReport {
  int64_t runs_copied = 0;
  int64_t runs_already_there = 0;
  struct Table {
    std::string name;
    int64_t rows_copied = 0;    // by this call
    int64_t source_rows = 0;    // afterwards, on each side (they are equal, or the copy failed)
    int64_t destination_rows = 0;
  };
  std::vector<Table> tables;    // every copied table, in copy order
};

[[nodiscard]] StatusOr<CopyReport> CopyToPostgres(Database& source, PostgresConnection& destination);

}  // namespace xladb::store

#endif  // XLADB_STORE_STORE_COPY_H_
