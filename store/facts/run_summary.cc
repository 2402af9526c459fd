#include "store/facts/run_summary.h"

#include <string>

namespace xladb::store {
namespace {

// Recounts the summary of the runs the statement's WHERE picks; the file counts read each run's rows through
// dump_files' (run_id, verdict) index, the module count through modules' run index.
constexpr const char* kRecountSql =
    "UPDATE runs SET "
    "  file_count = (SELECT COUNT(*) FROM dump_files f WHERE f.run_id = runs.run_id), "
    "  ingested_file_count = (SELECT COUNT(*) FROM dump_files f "
    "                         WHERE f.run_id = runs.run_id AND f.verdict = 'ingested'), "
    "  error_file_count = (SELECT COUNT(*) FROM dump_files f WHERE f.run_id = runs.run_id AND f.verdict = 'error'), "
    "  module_count = (SELECT COUNT(*) FROM module_memory mm WHERE mm.run_id = runs.run_id)";

}  // namespace

void UpdateRunSummary(SqlConnection& sql, int64_t run_id) {
  auto update = sql.Prepare(std::string(kRecountSql) + " WHERE run_id = ?");
  update->Bind(1, run_id);
  update->Execute();
}

void UpdateSummariesOfAllRuns(SqlConnection& sql) { sql.Exec(kRecountSql); }

}  // namespace xladb::store
