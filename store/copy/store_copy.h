// Copying a store between backends (`xladb copy SRC DST`): how a team moves its SQLite file up to the shared
// PostgreSQL server, and back down. The destination gets the schema (store/schema/schema_dialect.h), then every run
// of the source, each run in one destination transaction with every row that belongs to it, keeping the
// source's ids. The copy is written once for both directions over store/copy/copy_endpoint.h. A copy that stops
// part-way (a crash, a lost connection) leaves whole runs only, and running it again copies the runs still
// missing: it is resumable at run granularity. A run the destination refuses (PostgreSQL takes only valid
// UTF-8 text) is rolled back and passed over: the others are copied, and the error names it.
//
// What goes where (store/facts/store_tables.h lists the tables):
//   * texts shared by all runs (shapes, source_files, names, long_texts) first, the rows past the
//     destination's largest id, in their own transaction (a refused text there stops the whole copy);
//   * per run: runs, run_labels, dump_files, modules; the rows of its files (kFileRowTables); the rows of
//     its modules (kModuleRowTables, kModuleDerivedTables);
//   * not ingest_jobs: a daemon's own queue.
// Into PostgreSQL rows travel with COPY … FROM STDIN, and afterwards the identity sequences continue past the
// copied ids, and the tables this call filled are vacuumed and analyzed (the planner's statistics describe the
// copy at once; a failure there is CopyReport::tidy_warning, the copy whole); out of it,
// through a cursor. Every table's row count is then compared on both sides; a
// difference is an error that names the table.
//
// Contract: the source is read in one read-only transaction (a consistent snapshot; a writer may go on).
// The destination must be empty or hold an earlier copy of this same source, which has only grown since
// (kFailedPrecondition otherwise, before anything is written): a run id that names another run there, a copied
// run the source has deleted or pruned since, or a shared text it has removed since (SQLite may hand its id
// out again) each refuse the copy and say to copy into an empty database. Errors are Status values; no exception escapes.
// Not thread-safe; each side's connection is used by this call only.
#ifndef XLADB_STORE_COPY_STORE_COPY_H_
#define XLADB_STORE_COPY_STORE_COPY_H_

#include <cstdint>
#include <string>
#include <vector>

#include "base/status.h"
#include "store/backend/database.h"
#include "store/postgres/postgres_connection.h"

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
  // Empty, or what the copy, whole, left undone on the destination and why: the PostgreSQL tables it filled
  // not vacuumed and analyzed (a statement_timeout or lock_timeout, say). Queries answer without it, planned on
  // older statistics until autovacuum comes by.
  std::string tidy_warning;
};

[[nodiscard]] StatusOr<CopyReport> CopyToPostgres(Database& source, PostgresConnection& destination);
// The way back: a store in PostgreSQL (the connection's current schema) into a SQLite file.
[[nodiscard]] StatusOr<CopyReport> CopyToSqlite(PostgresConnection& source, Database& destination);

}  // namespace xladb::store

#endif  // XLADB_STORE_COPY_STORE_COPY_H_
