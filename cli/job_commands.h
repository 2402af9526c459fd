// The xladb commands about ingest jobs and OOM reports: `jobs`, `wait` and `oom`, and the answer `top` gives
// for a module that only has an OOM report. Each asks the QueryService through a QueryClient (xladbd, or a store served in process with --db:
// the same answer) and prints a result set (cli/output.h) on stdout, notes on stderr.
//
// Exit codes: 0 success, 1 failure (unknown run, server errors), 2 usage. `wait` has its own (WaitArgs).
// Not thread-safe; one command per process.
#ifndef XLADB_CLI_JOB_COMMANDS_H_
#define XLADB_CLI_JOB_COMMANDS_H_

#include <cstdint>
#include <optional>
#include <string>

#include "cli/output.h"
#include "cli/query_client.h"
#include "xladb/v1/xladb.pb.h"

namespace xladb::cli {

// `xladb jobs [--run R] [--state S]`: the ingest jobs, newest first. `state` is as the queue stores it
// (QUEUED, RUNNING, SUCCEEDED, FAILED); any other is a usage error.
[[nodiscard]] int CmdJobs(QueryClient& b, OutputFormat format, const std::string& run, const std::string& state,
                          int64_t limit);

// `xladb wait RUN [--timeout 10m]`: polls ListJobs until the run's jobs are done, that is it has at least one
// job and none is QUEUED or RUNNING. The newest job decides: SUCCEEDED exits 0, FAILED exits 1 (its message on
// stderr). A run with no job yet is waited for (a watched run is queued only after its quiet period). Exit 3
// when `timeout` passes first, 2 for a bad timeout, 4 when the daemon (or the file) cannot be asked.
inline constexpr int kExitWaitTimedOut = 3;
inline constexpr int kExitWaitCannotAsk = 4;
struct WaitArgs {
  std::string run;
  std::string timeout = "10m";  // N, Ns, Nm or Nh
  int64_t poll_ms = 500;
};
[[nodiscard]] int CmdWait(QueryClient& b, const WaitArgs& a);
// "90", "90s", "10m", "2h" as milliseconds; nullopt for anything else (negative, empty, other units).
[[nodiscard]] std::optional<int64_t> ParseWaitTimeout(const std::string& text);

// `xladb oom RUN [--module M]`: one row per buffer of each OOM report (largest first), with the report's failed
// allocation, limit and total allocation on every row; a report without buffers gets one row.
[[nodiscard]] int CmdOom(QueryClient& b, OutputFormat format, const std::string& run, const std::string& module);

// `top` for the module `top` answered with no buffer assignment: when an OOM report is filed under that module
// (same name, stage, xla id and folder), prints its buffers by size and returns 0 (or 1 when the call fails);
// returns -1 when there is none, and `top` prints its own answer.
[[nodiscard]] int TopFromOomReport(QueryClient& b, OutputFormat format, const std::string& run,
                                   const v1::TopBuffersResponse& top);

}  // namespace xladb::cli

#endif  // XLADB_CLI_JOB_COMMANDS_H_
