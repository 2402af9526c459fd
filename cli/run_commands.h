// The xladb commands that change stored runs: `label`, `delete` and `prune`. Through xladbd (the IngestService's
// LabelRun and DeleteRun, done by its one writer between ingest jobs), or offline on `--db FILE` with the
// same store code (store/admin/run_lifecycle.h). Exit codes: 0 done, 1 failure (an unknown run included), 2 usage.
// Not thread-safe; one command per process.
#ifndef XLADB_CLI_RUN_COMMANDS_H_
#define XLADB_CLI_RUN_COMMANDS_H_

#include <string>
#include <vector>

#include "cli/remote_commands.h"

namespace xladb::cli {

struct LabelArgs {
  std::string run;
  LabelList set;                     // KEY=VALUE
  std::vector<std::string> remove;   // --remove KEY
};
// `db_path` "" = through xladbd (o). Prints the run's labels afterwards.
int CmdLabel(const ClientOptions& o, const std::string& db_path, const LabelArgs& a);
// Prints what was removed.
int CmdDelete(const ClientOptions& o, const std::string& db_path, const std::string& run);

struct PruneArgs {
  int64_t keep_detail_days = -1;
  LabelList keep_labels;
};
// Prints the runs pruned, the rows removed and the space given back.
int CmdPrune(const ClientOptions& o, const std::string& db_path, const PruneArgs& a);

// KEY=VALUE flags as labels; false (said on stderr) for one that is not KEY=VALUE or that the store would refuse.
[[nodiscard]] bool ParseLabels(const std::vector<std::string>& raw, std::vector<std::pair<std::string, std::string>>* out);

}  // namespace xladb::cli

#endif  // XLADB_CLI_RUN_COMMANDS_H_
