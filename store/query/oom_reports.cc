#include "store/query/oom_reports.h"

#include <map>
#include <utility>

#include "ingest/records/records.h"
#include "store/backend/row_binding.h"
#include "store/query/result_columns.h"
#include "store/query/statement_text.h"

namespace xladb::store {
namespace {

// The module a report's file name gave (m; LEFT JOINed to its file, f: none for a report of no module).
const ResultColumns<OomReportInfo> kReportModuleColumns = {
    {"m.name", &OomReportInfo::module},
    {"m.stage", &OomReportInfo::stage},
    {"m.folder", &OomReportInfo::folder},
    {"m.xla_module_id", &OomReportInfo::xla_module_id},
};
const ResultColumns<OomReportInfo> kReportColumns =
    ResultColumns<OomReportInfo>{{"f.path", &OomReportInfo::path}}.Then(kReportModuleColumns);
struct ReportFile {
  int64_t file_id = 0;
};
const ResultColumns<ReportFile> kReportFileColumns = {{"f.file_id", &ReportFile::file_id}};

const ResultColumns<OomStatInfo> kStatColumns = {
    {"label", &OomStatInfo::label},
    {"bytes_approx", &OomStatInfo::bytes},
    {"bytes_text", &OomStatInfo::bytes_text},
    {"percent", &OomStatInfo::percent},
};

const ResultColumns<OomBufferInfo> kBufferColumns = {
    {"buffer_number", &OomBufferInfo::buffer_number},
    {"size_bytes_approx", &OomBufferInfo::size_bytes},
    {"size_text", &OomBufferInfo::size_text},
    {"shape", &OomBufferInfo::shape},
    {"is_entry_parameter", &OomBufferInfo::is_entry_parameter},
    {"xla_label", &OomBufferInfo::xla_label},
    {"op_name", &OomBufferInfo::op_name},
    {"source_file", &OomBufferInfo::source_file},
    {"source_line", &OomBufferInfo::source_line},
};

}  // namespace

StatusOr<std::vector<OomReportInfo>> ListOomReports(Database& db, const std::string& run_name,
                                                    const std::string& module) {
  return CatchSqlErrors("OOM reports of run '" + run_name + "'", [&]() -> StatusOr<std::vector<OomReportInfo>> {
    StatusOr<int64_t> run_id = FindRunId(db.connection(), run_name);
    if (!run_id.ok()) return run_id.status();
    // A report is a file of kind oom_report; its module is the one its file name gave.
    auto files = db.connection().Prepare(
        "SELECT " + kReportColumns.SelectList() + ", " + kReportFileColumns.SelectList() +
        " FROM dump_files f LEFT JOIN modules m ON m.module_id = f.module_id "
        "WHERE f.run_id = ? AND f.kind = 'oom_report' AND (? = '' OR m.name = ?) "
        "ORDER BY COALESCE(m.name, ''), COALESCE(m.xla_module_id, -1), f.path");
    BindRow(*files, *run_id, module, module);
    std::vector<OomReportInfo> reports;
    std::vector<int64_t> file_ids;
    while (files->Step()) {
      OomReportInfo r;
      ReportFile file;
      kReportFileColumns.ReadInto(*files, &file, kReportColumns.ReadInto(*files, &r));
      reports.push_back(std::move(r));
      file_ids.push_back(file.file_id);
    }
    files.reset();
    auto stats = db.connection().Prepare("SELECT " + kStatColumns.SelectList() +
                                         " FROM oom_stats WHERE file_id = ? ORDER BY label");
    auto buffers = db.connection().Prepare("SELECT " + kBufferColumns.SelectList() +
                                           " FROM oom_buffers WHERE file_id = ? ORDER BY buffer_number");
    for (size_t i = 0; i < reports.size(); ++i) {
      OomReportInfo& r = reports[i];
      stats->Reset();
      stats->Bind(1, file_ids[i]);
      while (stats->Step()) {
        OomStatInfo s = kStatColumns.Read(*stats);
        if (s.label == ingest::kOomFailedAllocationLabel) r.failed_allocation_bytes = s.bytes;
        if (s.label == ingest::kOomLimitLabel) r.limit_bytes = s.bytes;
        if (s.label == "total allocation") r.total_allocation_bytes = s.bytes;
        r.stats.push_back(std::move(s));
      }
      buffers->Reset();
      buffers->Bind(1, file_ids[i]);
      while (buffers->Step()) r.buffers.push_back(kBufferColumns.Read(*buffers));
    }
    return reports;
  });
}

StatusOr<std::set<ModuleKey>> ModulesWithOomReports(Database& db, const std::string& run_name) {
  return CatchSqlErrors("modules with OOM reports", [&]() -> StatusOr<std::set<ModuleKey>> {
    StatusOr<int64_t> run_id = FindRunId(db.connection(), run_name);
    if (!run_id.ok()) return run_id.status();
    auto q = db.connection().Prepare("SELECT DISTINCT " + kReportModuleColumns.SelectList() +
                                     " FROM dump_files f JOIN modules m ON m.module_id = f.module_id "
                                     "WHERE f.run_id = ? AND f.kind = 'oom_report'");
    q->Bind(1, *run_id);
    std::set<ModuleKey> keys;
    while (q->Step()) {
      const OomReportInfo r = kReportModuleColumns.Read(*q);
      keys.emplace(r.module, r.stage, r.xla_module_id, r.folder);
    }
    return keys;
  });
}

}  // namespace xladb::store
