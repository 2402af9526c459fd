#include "store/run_summary.h"

#include <vector>

namespace xladb::store {
namespace {

// One statement for one run; the file counts read the run's rows through dump_files' (run_id, path) key, the
// module count through modules' run index.
constexpr const char* kUpdateRunSummarySql =
    "UPDATE runs SET "
    "  file_count = (SELECT COUNT(*) FROM dump_files f WHERE f.run_id = runs.run_id), "
    "  ingested_file_count = (SELECT COUNT(*) FROM dump_files f "
    "                         WHERE f.run_id = runs.run_id AND f.verdict = 'ingested'), "
    "  error_file_count = (SELECT COUNT(*) FROM dump_files f WHERE f.run_id = runs.run_id AND f.verdict = 'error'), "
    "  module_count = (SELECT COUNT(*) FROM module_memory mm WHERE mm.run_id = runs.run_id) "
    "WHERE run_id = ?";

}  // namespace

void UpdateRunSummary(SQLite::Database& sql, int64_t run_id) {
  SQLite::Statement update(sql, kUpdateRunSummarySql);
  update.bind(1, run_id);
  update.exec();
}

void UpdateSummariesOfAllRuns(SQLite::Database& sql) {
  std::vector<int64_t> run_ids;
  SQLite::Statement runs(sql, "SELECT run_id FROM runs");
  while (runs.executeStep()) run_ids.push_back(runs.getColumn(0).getInt64());
  SQLite::Statement update(sql, kUpdateRunSummarySql);
  for (int64_t run_id : run_ids) {
    update.reset();
    update.bind(1, run_id);
    update.exec();
  }
}

}  // namespace xladb::store
