// The per-run summary ListRuns reads: runs.file_count, ingested_file_count, error_file_count and module_count
// (schema version 6). Counting a run's files and modules on every ListRuns call read every dump_files row of
// every run on the page; the writer now keeps the counts on the run's row instead.
//
//   * file_count: the run's dump_files rows; ingested_file_count and error_file_count those whose verdict is
//     FileVerdict::kIngested and kError (ingest/records/file_verdict.h names them).
//   * module_count: the run's modules with a buffer assignment (its rows of the module_memory view).
//
// Contract: runs on the caller's read-write connection inside its transaction (the writer's group, the
// schema migration's); throws SqlError on database errors, like the writer's own statements. Not
// thread-safe; one connection, one thread.
#ifndef XLADB_STORE_FACTS_RUN_SUMMARY_H_
#define XLADB_STORE_FACTS_RUN_SUMMARY_H_

#include "store/backend/sql_connection.h"
#include "store/backend/statement_cache.h"

#include <cstdint>

namespace xladb::store {

// Recounts one run's summary columns from its rows, by a statement `statements` keeps.
void UpdateRunSummary(StatementCache& statements, int64_t run_id);

// Every run of the file (schema migration to version 6).
void UpdateSummariesOfAllRuns(SqlConnection& sql);

}  // namespace xladb::store

#endif  // XLADB_STORE_FACTS_RUN_SUMMARY_H_
