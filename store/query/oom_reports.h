// OOM reports of a run: the `BufferAssignment OOM Debugging.` text XLA prints when a program does not fit
// (docs/formats.md §9), as stored in oom_stats and oom_buffers, one report per file.
//
// Contract: read-only statements on `db` (one thread at a time per connection). kNotFound for an unknown run;
// kIoError when the store fails. A run without reports gives an empty list.
#ifndef XLADB_STORE_QUERY_OOM_REPORTS_H_
#define XLADB_STORE_QUERY_OOM_REPORTS_H_

#include <cstdint>
#include <set>
#include <string>
#include <tuple>
#include <vector>

#include "base/status.h"
#include "store/backend/database.h"

namespace xladb::store {

struct OomStatInfo {
  std::string label;
  int64_t bytes = 0;       // approximate (from the human string); exact for ingest::kOomFailedAllocationLabel
                           // and ingest::kOomLimitLabel (ingest/records/records.h), read from the log text around it
  std::string bytes_text;
  double percent = -1;     // fragmentation lines only
};

struct OomBufferInfo {
  int64_t buffer_number = 0;
  int64_t size_bytes = 0;  // approximate
  std::string size_text;
  std::string shape;
  bool is_entry_parameter = false;
  std::string xla_label, op_name, source_file;
  int64_t source_line = -1;
};

struct OomReportInfo {
  std::string path;                 // the file, relative to the run root
  std::string module, stage, folder;
  int64_t xla_module_id = -1;
  int64_t failed_allocation_bytes = -1;  // the stats above, or -1 where the text does not say
  int64_t limit_bytes = -1;
  int64_t total_allocation_bytes = -1;
  std::vector<OomStatInfo> stats;   // by label
  std::vector<OomBufferInfo> buffers;  // by buffer number (largest first)
};

// The reports of `run_name`, by module name, xla_module_id and path; `module` not empty: of that module only.
[[nodiscard]] StatusOr<std::vector<OomReportInfo>> ListOomReports(Database& db, const std::string& run_name,
                                                                  const std::string& module = "");

// (name, stage, xla_module_id or -1, folder) of every module of the run an OOM report is filed under.
using ModuleKey = std::tuple<std::string, std::string, int64_t, std::string>;
[[nodiscard]] StatusOr<std::set<ModuleKey>> ModulesWithOomReports(Database& db, const std::string& run_name);

}  // namespace xladb::store

#endif  // XLADB_STORE_QUERY_OOM_REPORTS_H_
