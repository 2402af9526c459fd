#include "store/query/oom_reports.h"

#include <map>
#include <utility>

#include "ingest/records/records.h"
#include "store/query/statement_text.h"

namespace xladb::store {

StatusOr<std::vector<OomReportInfo>> ListOomReports(Database& db, const std::string& run_name,
                                                    const std::string& module) {
  return CatchSqlErrors("OOM reports of run '" + run_name + "'", [&]() -> StatusOr<std::vector<OomReportInfo>> {
    StatusOr<int64_t> run_id = FindRunId(db.connection(), run_name);
    if (!run_id.ok()) return run_id.status();
    // A report is a file of kind oom_report; its module is the one its file name gave.
    auto files = db.connection().Prepare(
        "SELECT f.file_id, f.path, COALESCE(m.name, ''), COALESCE(m.stage, ''), COALESCE(m.folder, ''), "
        "       COALESCE(m.xla_module_id, -1) "
        "FROM dump_files f LEFT JOIN modules m ON m.module_id = f.module_id "
        "WHERE f.run_id = ? AND f.kind = 'oom_report' AND (? = '' OR m.name = ?) "
        "ORDER BY 3, 6, f.path");
    files->Bind(1, *run_id);
    files->Bind(2, module);
    files->Bind(3, module);
    std::vector<OomReportInfo> reports;
    std::vector<int64_t> file_ids;
    while (files->Step()) {
      file_ids.push_back(files->Int(0));
      OomReportInfo r;
      r.path = files->Text(1);
      r.module = files->Text(2);
      r.stage = files->Text(3);
      r.folder = files->Text(4);
      r.xla_module_id = files->Int(5);
      reports.push_back(std::move(r));
    }
    files.reset();
    auto stats = db.connection().Prepare(
        "SELECT label, bytes_approx, bytes_text, percent FROM oom_stats WHERE file_id = ? ORDER BY label");
    auto buffers = db.connection().Prepare(
        "SELECT buffer_number, size_bytes_approx, size_text, COALESCE(shape, ''), is_entry_parameter, "
        "       COALESCE(xla_label, ''), COALESCE(op_name, ''), COALESCE(source_file, ''), source_line "
        "FROM oom_buffers WHERE file_id = ? ORDER BY buffer_number");
    for (size_t i = 0; i < reports.size(); ++i) {
      OomReportInfo& r = reports[i];
      stats->Reset();
      stats->Bind(1, file_ids[i]);
      while (stats->Step()) {
        OomStatInfo s{stats->Text(0), stats->Int(1), stats->Text(2), stats->RealOr(3, -1)};
        if (s.label == ingest::kOomFailedAllocationLabel) r.failed_allocation_bytes = s.bytes;
        if (s.label == ingest::kOomLimitLabel) r.limit_bytes = s.bytes;
        if (s.label == "total allocation") r.total_allocation_bytes = s.bytes;
        r.stats.push_back(std::move(s));
      }
      buffers->Reset();
      buffers->Bind(1, file_ids[i]);
      while (buffers->Step()) {
        OomBufferInfo b;
        b.buffer_number = buffers->Int(0);
        b.size_bytes = buffers->Int(1);
        b.size_text = buffers->Text(2);
        b.shape = buffers->Text(3);
        b.is_entry_parameter = buffers->Int(4) != 0;
        b.xla_label = buffers->Text(5);
        b.op_name = buffers->Text(6);
        b.source_file = buffers->Text(7);
        b.source_line = buffers->IntOr(8, -1);
        r.buffers.push_back(std::move(b));
      }
    }
    return reports;
  });
}

StatusOr<std::set<ModuleKey>> ModulesWithOomReports(Database& db, const std::string& run_name) {
  return CatchSqlErrors("modules with OOM reports", [&]() -> StatusOr<std::set<ModuleKey>> {
    StatusOr<int64_t> run_id = FindRunId(db.connection(), run_name);
    if (!run_id.ok()) return run_id.status();
    auto q = db.connection().Prepare(
        "SELECT DISTINCT m.name, m.stage, COALESCE(m.xla_module_id, -1), m.folder "
        "FROM dump_files f JOIN modules m ON m.module_id = f.module_id "
        "WHERE f.run_id = ? AND f.kind = 'oom_report'");
    q->Bind(1, *run_id);
    std::set<ModuleKey> keys;
    while (q->Step()) keys.emplace(q->Text(0), q->Text(1), q->Int(2), q->Text(3));
    return keys;
  });
}

}  // namespace xladb::store
