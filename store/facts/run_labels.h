// PutRunLabels: a run's labels set (added, or their value replaced), as the writer applies a run's labels
// (RunWriter::BeginRun, the run metadata file) and `xladb label` relabels a run (store/admin/run_lifecycle.h).
//
// Contract: runs on the caller's read-write connection, inside its transaction; throws SqlError on database
// errors. Not thread-safe; one connection, one thread.
#ifndef XLADB_STORE_FACTS_RUN_LABELS_H_
#define XLADB_STORE_FACTS_RUN_LABELS_H_

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "store/backend/sql_connection.h"

namespace xladb::store {

void PutRunLabels(SqlConnection& sql, int64_t run_id, const std::vector<std::pair<std::string, std::string>>& labels);

}  // namespace xladb::store

#endif  // XLADB_STORE_FACTS_RUN_LABELS_H_
