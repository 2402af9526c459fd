// `xladb changes [MODULE]`: the change points of a run history (ListChanges, store/compare/change_points.h), from
// xladbd or offline (--db): table, csv, json or markdown on stdout (or --output FILE), notes on stderr.
//
// Exit codes: 0 when it answers, with changes or none (an empty history is an answer, its note on stderr);
// 1 for a module no run has, or a failure; 2 for usage (bad options, an unknown --since run).
// Not thread-safe; one command per process.
#ifndef XLADB_CLI_CHANGES_COMMAND_H_
#define XLADB_CLI_CHANGES_COMMAND_H_

#include <cstdint>
#include <string>
#include <vector>

#include "cli/query_client.h"
#include "cli/remote_commands.h"

namespace xladb::cli {

struct ChangesArgs {
  std::string module;                // "" = every module
  LabelList labels;
  std::string since_run;
  int64_t last_n = 0;                // 0 = every run
  std::vector<std::string> metrics;  // empty: the gate's
  std::string min_bytes;             // a size with units ("" = any)
  double min_percent = 0;
  std::string attribute = "5";       // a count, "all" or "none"
  int64_t max_attribution = 10;      // buffer changes per explained change point
  std::string first_above;           // a size with units ("" = not asked)
  int64_t limit = 100;               // the largest (or, with a module, the oldest) N; 0 = every change point
  std::string format = "table";      // table, csv, json or markdown
  std::string output;                // "" = stdout
};

[[nodiscard]] int CmdChanges(QueryClient& b, const ChangesArgs& a);

}  // namespace xladb::cli

#endif  // XLADB_CLI_CHANGES_COMMAND_H_
