// The runs row a RunWriter (store/write/run_writer.h) adds files to: the run a RunSpec names, found when it may
// take more files, or created. Runs do not merge by accident: the same source again (a re-ingest, a watched
// folder that grew) adds to its run; another source path, or an upload of other content, needs
// RunSpec::append.
//
// Contract: run on the writer's connection inside its transaction; errors throw SqlError, a refusal is a
// Status. Not thread-safe: the writer's thread.
#ifndef XLADB_STORE_WRITE_RUN_ROWS_H_
#define XLADB_STORE_WRITE_RUN_ROWS_H_

#include <cstdint>
#include <optional>

#include "base/status.h"
#include "ingest/records/ingest_target.h"
#include "store/backend/sql_connection.h"

namespace xladb::store {

// The run `spec` names, when it exists and may take more files; 0 when there is none. kFailedPrecondition for
// a pruned run or a refused merge.
StatusOr<int64_t> FindRunToAddTo(SqlConnection& sql, const ingest::RunSpec& spec);

// A new run's row, timed by --time or, until the run is finished, by the ingest; nullopt when another writer
// created the name first.
std::optional<int64_t> CreateRun(SqlConnection& sql, const ingest::RunSpec& spec);

}  // namespace xladb::store

#endif  // XLADB_STORE_WRITE_RUN_ROWS_H_
