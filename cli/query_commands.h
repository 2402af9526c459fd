// The xladb query commands: runs, modules, trend, spills, top, diff, check and retraces. Each builds its
// request, asks the QueryService through a QueryClient (xladbd, or a store served in process with --db) and prints the answer: a result set
// (cli/output.h) on stdout, notes on stderr. A failed call prints the error on stderr with nothing on stdout.
//
// Exit codes: 0 success, 1 failure (unknown run or module, server errors), 2 usage. `check` has its own:
// 0 pass, 1 regression, 2 usage (bad options, unknown run), 3 inconclusive, 4 the tool itself failed.
// Not thread-safe; one command per process.
#ifndef XLADB_CLI_QUERY_COMMANDS_H_
#define XLADB_CLI_QUERY_COMMANDS_H_

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "cli/output.h"
#include "cli/query_client.h"
#include "cli/remote_commands.h"

namespace xladb::cli {

// The labels a request filters runs by.
void AddLabels(const LabelList& labels, google::protobuf::RepeatedPtrField<v1::Label>* out);
// --metric values, each a store/facts/module_metrics.h name; false (said on stderr) at the first that is not.
[[nodiscard]] bool AddMetricFlags(const std::vector<std::string>& metrics,
                                  google::protobuf::RepeatedPtrField<std::string>* out);

struct RunsArgs {
  LabelList labels;
  std::string since, until;   // times as accepted by ParseTimeToUs; "" = unbounded
  std::string name_pattern;
  int64_t limit = 100;
};
int CmdRuns(QueryClient& b, OutputFormat format, const RunsArgs& a);

struct ModulesArgs {
  std::string run, pattern;
  std::string sort = "total";   // a metric (short or full name), largest first; "name" = by name, stage, xla id
  int64_t limit = 0;            // 0 = all
  std::string stage;            // "" = any
  bool all = false;             // also the modules without memory figures (HLO text only)
  std::vector<std::string> budgets;       // METRIC=SIZE: a `budget` column with each module's headroom
  std::optional<double> warn_percent;     // budgets: warn from this share (default 90)
};
int CmdModules(QueryClient& b, OutputFormat format, const ModulesArgs& a);

struct TrendArgs {
  std::string module;
  std::string metric;           // peak, total, temp (short names) or any store/facts/module_metrics.h name; "" = the
                                // server's default (live_peak_padded_bytes, or what the module has)
  int64_t last_n = 0;
  LabelList labels;
  std::string stage;
  std::optional<std::string> folder;
  std::optional<int64_t> xla_module_id;  // with `run`: that compile of the run, followed by its identity
  std::string run;                       // set: follow one compile of this run (--xla-id, else the largest)
  std::string fingerprint;
  std::string since, until;
};
int CmdTrend(QueryClient& b, OutputFormat format, const TrendArgs& a);
int CmdSpills(QueryClient& b, OutputFormat format, const std::string& kernel, const std::string& run, int64_t limit);
struct TopArgs {
  std::string run, module, stage;
  int64_t n = 20;
  std::optional<std::string> folder;     // the module in that folder of the run (host0, host1, …)
  std::optional<int64_t> xla_module_id;  // the compile module_<ID> (else the largest by total_bytes, said so)
  std::string at = "xla";                // xla: XLA's printed peak list; padded: live at the padded live peak
};
int CmdTop(QueryClient& b, OutputFormat format, const TopArgs& a);

struct DiffArgs {
  std::string run_a, run_b, module;
  bool include_unchanged = false;
  bool buffers = true;
  int64_t max_buffers = 10;
};
int CmdDiff(QueryClient& b, OutputFormat format, const DiffArgs& a);

int CmdRetraces(QueryClient& b, OutputFormat format, const std::string& run, int64_t min_compiles);

inline constexpr int kExitInconclusive = 3;
inline constexpr int kExitToolFailed = 4;

struct CheckArgs {
  std::string run, baseline;
  std::string config;                     // TOML file (docs/gate-config.md); "" = none
  std::vector<std::string> metrics;       // override the config's
  std::optional<int64_t> max_growth_bytes;
  std::optional<double> max_growth_percent;
  std::vector<std::string> ignore;        // added to the config's
  bool fail_on_retrace_growth = false;
  std::string format = "table";           // table, json, markdown or junit
  std::string output;                     // write the report here instead of stdout ("" = stdout)
  int64_t max_attribution = 20;
  std::string report_url;                 // markdown: link to the HTML report of this check ("" = none)
  std::string on_added, on_removed, on_reshaped;  // policies ("" = the config's, else report)
  std::string by_name = "changed";        // "changed" or "all": the roll-up rows shown
  std::vector<std::string> budgets;       // METRIC=SIZE for every module, before the config's
  std::optional<double> warn_percent;     // overrides the config's
};
int CmdCheck(QueryClient& b, const CheckArgs& a);

struct ReportArgs {
  std::string run;
  std::string module, stage, folder, baseline;
  bool has_folder = false;
  int64_t xla_module_id = -1;             // -1 = the largest by total_bytes (said on stderr)
  std::string output;                     // the HTML file to write (required)
  // The diff page's budgets, as `check` takes them: --budget flags first, then the config's [[budget]].
  std::vector<std::string> budgets;
  std::string config;
  std::optional<double> warn_percent;
  bool home = false;                      // the front page (no run): runs grouped by home_label
  std::string home_label;
};
// Writes the page to a temporary file beside `output`, then renames it into place; prints the path.
int CmdReport(QueryClient& b, const ReportArgs& a);

}  // namespace xladb::cli

#endif  // XLADB_CLI_QUERY_COMMANDS_H_
