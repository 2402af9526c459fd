#include "store/facts/run_summary.h"

#include <string>
#include <string_view>

#include "ingest/records/file_verdict.h"
#include "store/backend/row_binding.h"

namespace xladb::store {
namespace {

// Recounts the summary of the runs the statement's WHERE picks; the file counts read each run's rows through
// dump_files' (run_id, verdict) index, the module count through modules' run index. Its two parameters are
// the verdicts counted (FileVerdictName: the names are written in one place).
constexpr const char* kRecountSql =
    "UPDATE runs SET "
    "  file_count = (SELECT COUNT(*) FROM dump_files f WHERE f.run_id = runs.run_id), "
    "  ingested_file_count = (SELECT COUNT(*) FROM dump_files f WHERE f.run_id = runs.run_id AND f.verdict = ?), "
    "  error_file_count = (SELECT COUNT(*) FROM dump_files f WHERE f.run_id = runs.run_id AND f.verdict = ?), "
    "  module_count = (SELECT COUNT(*) FROM module_memory mm WHERE mm.run_id = runs.run_id)";

const std::string_view kIngested = ingest::FileVerdictName(ingest::FileVerdict::kIngested);
const std::string_view kError = ingest::FileVerdictName(ingest::FileVerdict::kError);

}  // namespace

void UpdateRunSummary(StatementCache& statements, int64_t run_id) {
  // Kept prepared by the writer's cache (its address is the key): planned once, not once a group, where the
  // module_memory view's plan costs more than the counts of a few thousand files (PostgreSQL).
  static const std::string kOneRun = std::string(kRecountSql) + " WHERE run_id = ?";
  SqlStatement& update = statements.Get(kOneRun.c_str());
  BindRow(update, kIngested, kError, run_id);
  update.Execute();
}

void UpdateSummariesOfAllRuns(SqlConnection& sql) {
  auto update = sql.Prepare(kRecountSql);
  BindRow(*update, kIngested, kError);
  update->Execute();
}

}  // namespace xladb::store
