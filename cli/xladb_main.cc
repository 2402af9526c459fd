// xladb: the command-line tool, a thin client of xladbd (gRPC); every command also works offline on a
// database file (--db FILE), through the same code the daemon answers with.
//
//   xladb runs | modules RUN | trend MODULE | spills | top RUN MODULE | diff RUN_A RUN_B | retraces RUN | sql "…"
//   xladb jobs [--run R] [--state S] | wait RUN [--timeout 10m] | oom RUN [--module M]
//   xladb report RUN [--module M [--xla-id N]] [--baseline B] -o FILE.html  |  xladb report --home [--home-label K] -o F
//   xladb label RUN KEY=VALUE... [--remove KEY]...  |  xladb delete RUN  |  xladb prune --keep-detail-days N
//   xladb check RUN --baseline BASE [--config F] [--metric M]... [--format table|json|markdown|junit]
//   xladb changes [MODULE] [--label k=v]... [--since RUN | --last N] [--metric M]... [--first-above SIZE]
//   xladb ingest PATH... [--run NAME] [--label key=value]... [--time T] [--append] [--server-path | --db FILE]
//   common: [--addr 127.0.0.1:50051] [--db FILE] [--format table|csv|json] [--token-file F] [--tls-ca F]
//           [--timeout 30]
//
// Exit codes: 0 success, 1 failure (including files that could not be ingested, an unknown run or module, and
// a server that does not answer within --timeout), 2 usage error. `check`: 0 pass, 1 regression, 2 usage,
// 3 inconclusive, 4 the tool itself failed. `changes`: 0 answered (changes or none), 1 unknown module, 2 usage.
// `wait`: 0 the run's jobs succeeded, 1 one failed, 2 usage, 3 timed out, 4 the daemon cannot be asked.
#include <CLI/CLI.hpp>

#include <cstdint>
#include <cstdio>
#include <fstream>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "base/build_version.h"
#include "cli/changes_command.h"
#include "cli/copy_command.h"
#include "cli/ingest_command.h"
#include "cli/job_commands.h"
#include "cli/output.h"
#include "cli/query_client.h"
#include "cli/query_commands.h"
#include "cli/remote_commands.h"
#include "cli/run_commands.h"
#include "cli/sql_command.h"
#include "ingest/dump_ingester.h"
#include "ingest/source/run_name.h"
#include "ingest/text/visible_text.h"
#include "store/backend/database.h"
#include "store/schema/schema_migrations.h"
#include "store/facts/module_metrics.h"

namespace xladb::cli {
namespace {

// The flags every command takes, before or after its name.
struct CommonFlags {
  ClientOptions client;
  std::string format = "table", token_file, db_path;
};

// A command of the table: its subcommand, whose flags are bound to the command's own state, and what runs it
// once the command line is parsed and the common flags are checked.
struct Command {
  CLI::App* app;
  std::function<int(const CommonFlags&)> run;
};

// --format markdown and junit are for check (and markdown for changes) only.
bool TableFormatOnly(const CommonFlags& c) {
  if (c.format != "markdown" && c.format != "junit") return true;
  std::fprintf(stderr, "xladb: --format %s is for check (and markdown for changes) only\n", c.format.c_str());
  return false;
}

// Runs `answer` with the QueryService: xladbd's, or the store's served in process (--db). A store that cannot
// be opened is said, and `open_failure` returned.
int WithQueryClient(const CommonFlags& c, int open_failure, const std::function<int(QueryClient&)>& answer) {
  if (c.db_path.empty()) return answer(*QueryClient::Remote(c.client));
  auto offline = QueryClient::Offline(c.db_path, c.client);
  if (!offline.ok()) {
    std::fprintf(stderr, "xladb: %s\n", offline.status().message().c_str());
    return open_failure;
  }
  return answer(*offline.value());
}

// A query command that prints a result set (--format table, csv or json).
Command QueryCommand(CLI::App* app, std::function<int(QueryClient&, OutputFormat)> answer) {
  return {app, [answer = std::move(answer)](const CommonFlags& c) {
            if (!TableFormatOnly(c)) return kExitUsage;
            return WithQueryClient(c, kExitFailure, [&](QueryClient& b) { return answer(b, c.client.format); });
          }};
}

Command IngestCommand(CLI::App& app) {
  struct State {
    IngestArgs args;
    std::vector<std::string> labels;
    std::string time;
  };
  auto s = std::make_shared<State>();
  auto* ingest = app.add_subcommand("ingest", "Ingest dump folders, files or archives (uploads them to xladbd)");
  ingest->add_option("PATH", s->args.paths, "Dump folder, file, .gz/.zst, or .tar[.gz|.zst]/.zip artifact")
      ->required();
  ingest->add_option("--run", s->args.run_name, "Run name (default: the folder or archive name)");
  ingest->add_option("--label", s->labels, "Run label key=value (repeatable)");
  ingest->add_option("--time", s->time, "When the run happened: Unix seconds or YYYY-MM-DD[THH:MM:SSZ]");
  ingest->add_flag("--server-path", s->args.server_path, "Let the server read PATH from its own disk (IngestPath)");
  ingest->add_flag("--append", s->args.append,
                   "Add to an existing run that came from another folder, archive or upload");
  return {ingest, [s](const CommonFlags& c) {
            if (!ParseLabels(s->labels, &s->args.labels)) return kExitUsage;
            if (!s->time.empty()) {
              auto t = ingest::ParseTimeToUs(s->time);
              if (!t.ok()) {
                std::fprintf(stderr, "xladb: --time: %s\n", t.status().message().c_str());
                return kExitUsage;
              }
              s->args.time_us = *t;
            }
            if (!c.db_path.empty()) return CmdOfflineIngest(c.db_path, s->args);
            return CmdRemoteIngest(c.client, s->args);
          }};
}

// A command's arguments and its --label flags, parsed into the arguments when it runs.
template <typename Args>
struct ArgsWithLabels {
  Args args;
  std::vector<std::string> labels;
};

Command RunsCommand(CLI::App& app) {
  auto s = std::make_shared<ArgsWithLabels<RunsArgs>>();
  RunsArgs& runs_args = s->args;
  std::vector<std::string>& run_labels = s->labels;
  auto* runs = app.add_subcommand("runs", "List runs, newest first");
  runs->add_option("--label", run_labels, "Only runs with this label key=value (repeatable)");
  runs->add_option("--since", runs_args.since, "Only runs at or after this time");
  runs->add_option("--until", runs_args.until, "Only runs before this time");
  runs->add_option("--name", runs_args.name_pattern, "Only runs whose name matches this GLOB");
  runs->add_option("--limit", runs_args.limit, "At most this many runs")->check(CLI::PositiveNumber);

  return QueryCommand(runs, [s](QueryClient& b, OutputFormat out) {
    if (!ParseLabels(s->labels, &s->args.labels)) return kExitUsage;
    return CmdRuns(b, out, s->args);
  });
}

Command ModulesCommand(CLI::App& app) {
  auto modules_state = std::make_shared<ModulesArgs>();
  ModulesArgs& modules_args = *modules_state;
  auto* modules = app.add_subcommand("modules", "List the modules of a run with their memory, largest first");
  modules->add_option("RUN", modules_args.run, "Run name")->required();
  modules->add_option("--name", modules_args.pattern, "Only modules whose name matches this GLOB");
  modules->add_option("--sort", modules_args.sort,
                      "Largest first by this metric (peak, total, temp or a metric's name; default total), or name");
  modules->add_option("--limit", modules_args.limit, "At most this many modules (0 = all)")
      ->check(CLI::NonNegativeNumber);
  modules->add_option("--stage", modules_args.stage, "Only this dump stage");
  modules->add_flag("--all", modules_args.all,
                    "Also the modules without a buffer assignment or memory report (HLO text only)");
  modules->add_option("--budget", modules_args.budgets,
                      "METRIC=SIZE: a budget column with each module's headroom (repeatable; the first applies)");
  modules->add_option("--warn-percent", modules_args.warn_percent, "Budgets: warn at this share (default 90)")
      ->check(CLI::NonNegativeNumber);

  return QueryCommand(modules, [modules_state](QueryClient& b, OutputFormat out) {
    return CmdModules(b, out, *modules_state);
  });
}

Command TrendCommand(CLI::App& app) {
  struct State {
    TrendArgs args;
    std::vector<std::string> labels;
    std::string folder;
    int64_t xla_id = -1;
  };
  auto s = std::make_shared<State>();
  TrendArgs& trend_args = s->args;
  std::vector<std::string>& trend_labels = s->labels;
  auto* trend = app.add_subcommand(
      "trend", "Padded live peak (or XLA's printed peak, total, temp) memory of a module across runs");
  trend->add_option("MODULE", trend_args.module, "Module name or GLOB pattern")->required();
  trend->add_option("--metric", trend_args.metric,
                    "Default live_peak_padded_bytes (without live ranges: peak, then total); peak (XLA's printed "
                    "peak), total, temp or a metric's name")
      ->check(CLI::IsMember(xladb::store::ModuleMetricArguments()));
  trend->add_option("--last", trend_args.last_n, "Only the newest N runs (0 = all)")->check(CLI::NonNegativeNumber);
  trend->add_option("--label", trend_labels, "Only runs with this label key=value (repeatable)");
  trend->add_option("--stage", trend_args.stage, "Only this dump stage");
  auto* trend_folder_opt = trend->add_option("--folder", s->folder, "Only modules in this folder of their run");
  auto* trend_xla_opt =
      trend->add_option("--xla-id", s->xla_id, "With --run: follow that run's compile module_<ID> across runs")
          ->check(CLI::NonNegativeNumber);
  trend->add_option("--run", trend_args.run,
                    "Follow one compile of this run by its identity (--xla-id, else the largest by total_bytes)");
  trend->add_option("--fingerprint", trend_args.fingerprint, "Only instances of this program fingerprint");
  trend->add_option("--since", trend_args.since, "Only runs at or after this time");
  trend->add_option("--until", trend_args.until, "Only runs before this time");

  return QueryCommand(trend, [s, trend_folder_opt, trend_xla_opt](QueryClient& b, OutputFormat out) {
    if (!ParseLabels(s->labels, &s->args.labels)) return kExitUsage;
    if (trend_folder_opt->count() > 0) s->args.folder = s->folder;
    if (trend_xla_opt->count() > 0) s->args.xla_module_id = s->xla_id;
    return CmdTrend(b, out, s->args);
  });
}

Command SpillsCommand(CLI::App& app) {
  struct State {
    std::string kernel_pattern, run;
    int64_t limit = 20;
  };
  auto s = std::make_shared<State>();
  auto* spills = app.add_subcommand("spills", "TPU kernels ranked by VMEM spill rate");
  spills->add_option("--kernel", s->kernel_pattern, "Only kernels matching this GLOB");
  spills->add_option("--run", s->run, "Only this run");
  spills->add_option("--limit", s->limit, "At most this many rows (0 = all)")->check(CLI::NonNegativeNumber);
  return QueryCommand(spills, [s](QueryClient& b, OutputFormat out) {
    return CmdSpills(b, out, s->kernel_pattern, s->run, s->limit);
  });
}

Command TopCommand(CLI::App& app) {
  struct State {
    TopArgs args;
    int64_t xla_id = -1;
    std::string folder;
  };
  auto s = std::make_shared<State>();
  TopArgs& top_args = s->args;
  auto* top = app.add_subcommand("top", "The buffers live at a module's peak, largest first");
  top->add_option("RUN", top_args.run, "Run name")->required();
  top->add_option("MODULE", top_args.module, "Module name")->required();
  top->add_option("-n", top_args.n, "How many buffers")->check(CLI::PositiveNumber);
  top->add_option("--stage", top_args.stage, "Pick the module of this stage");
  auto* top_xla_opt = top->add_option("--xla-id", s->xla_id, "Pick the compile module_<ID> of the run")
                          ->check(CLI::NonNegativeNumber);
  top->add_option("--at", top_args.at,
                  "xla: XLA's printed peak list (default); padded: the buffers live at the padded live peak")
      ->check(CLI::IsMember({"xla", "padded"}));
  auto* top_folder_opt = top->add_option("--folder", s->folder,
                                         "Pick the module in this folder of the run (host0, …; '' = the root)");

  return QueryCommand(top, [s, top_folder_opt, top_xla_opt](QueryClient& b, OutputFormat out) {
    if (top_folder_opt->count() > 0) s->args.folder = s->folder;
    if (top_xla_opt->count() > 0) s->args.xla_module_id = s->xla_id;
    return CmdTop(b, out, s->args);
  });
}

Command DiffCommand(CLI::App& app) {
  struct State {
    DiffArgs args;
    bool no_buffers = false;
  };
  auto s = std::make_shared<State>();
  DiffArgs& diff_args = s->args;
  bool& no_buffers = s->no_buffers;
  auto* diff = app.add_subcommand("diff", "What changed between two runs");
  diff->add_option("RUN_A", diff_args.run_a, "The earlier run")->required();
  diff->add_option("RUN_B", diff_args.run_b, "The later run")->required();
  diff->add_option("--module", diff_args.module, "Only modules matching this name or GLOB");
  diff->add_flag("--all", diff_args.include_unchanged, "List unchanged modules too");
  diff->add_flag("--no-buffers", no_buffers, "Module level only");
  diff->add_option("--buffers", diff_args.max_buffers, "Buffer changes shown per module")
      ->check(CLI::NonNegativeNumber);

  return QueryCommand(diff, [s](QueryClient& b, OutputFormat out) {
    s->args.buffers = !s->no_buffers;
    return CmdDiff(b, out, s->args);
  });
}

Command RetracesCommand(CLI::App& app) {
  struct State {
    std::string run;
    int64_t min_compiles = 2;
  };
  auto s = std::make_shared<State>();
  auto* retraces = app.add_subcommand("retraces", "Jit names compiled more than once in a run");
  retraces->add_option("RUN", s->run, "Run name")->required();
  retraces->add_option("--min", s->min_compiles, "Only names compiled at least this often")->check(CLI::Range(2, 1000000));
  return QueryCommand(retraces, [s](QueryClient& b, OutputFormat out) {
    return CmdRetraces(b, out, s->run, s->min_compiles);
  });
}

Command JobsCommand(CLI::App& app) {
  struct State {
    std::string run, state;
    int64_t limit = 1000;
  };
  auto s = std::make_shared<State>();
  auto* jobs =
      app.add_subcommand("jobs", "The daemon's ingest jobs, newest first (QUEUED, RUNNING, SUCCEEDED, FAILED)");
  jobs->add_option("--run", s->run, "Only jobs of this run");
  jobs->add_option("--state", s->state, "Only jobs in this state: QUEUED, RUNNING, SUCCEEDED or FAILED");
  jobs->add_option("--limit", s->limit, "The newest N jobs")->check(CLI::Range(1, 100000));
  return QueryCommand(jobs, [s](QueryClient& b, OutputFormat out) {
    return CmdJobs(b, out, s->run, s->state, s->limit);
  });
}

Command WaitCommand(CLI::App& app) {
  auto wait_args = std::make_shared<WaitArgs>();
  auto* wait = app.add_subcommand(
      "wait", "Wait for a run's ingest jobs; exit 0 succeeded, 1 failed, 2 usage, 3 timed out, 4 cannot ask");
  wait->add_option("RUN", wait_args->run, "Run name (a run not queued yet is waited for)")->required();
  wait->add_option("--timeout", wait_args->timeout, "How long to wait: N seconds, or Ns, Nm, Nh (default 10m)");
  return {wait, [wait_args](const CommonFlags& c) {
            if (!TableFormatOnly(c)) return kExitUsage;
            return WithQueryClient(c, kExitToolFailed, [&](QueryClient& b) { return CmdWait(b, *wait_args); });
          }};
}

Command OomCommand(CLI::App& app) {
  struct State {
    std::string run, module;
  };
  auto s = std::make_shared<State>();
  auto* oom = app.add_subcommand("oom", "The OOM reports of a run: failed allocation, limit, buffers by size");
  oom->add_option("RUN", s->run, "Run name")->required();
  oom->add_option("--module", s->module, "Only reports of this module name");
  return QueryCommand(oom, [s](QueryClient& b, OutputFormat out) { return CmdOom(b, out, s->run, s->module); });
}

Command CheckCommand(CLI::App& app) {
  struct State {
    CheckArgs args;
    std::optional<int64_t> max_growth_bytes;
    std::optional<double> max_growth_percent;
    std::string html;
  };
  auto s = std::make_shared<State>();
  CheckArgs& check_args = s->args;
  std::optional<int64_t>& max_growth_bytes = s->max_growth_bytes;
  std::optional<double>& max_growth_percent = s->max_growth_percent;
  auto* check = app.add_subcommand(
      "check", "The memory gate: RUN against a baseline; exit 0 pass, 1 regression, 2 usage, 3 inconclusive, 4 failure");
  check->add_option("RUN", check_args.run, "The run to check")->required();
  check->add_option("--baseline", check_args.baseline,
                    "A run name, label:KEY=VALUE (newest such run at or before RUN) or commit:SHA (optional with "
                    "budgets: the verdict then comes from the budgets alone)");
  check->add_option("--budget", check_args.budgets,
                    "METRIC=SIZE: every module's METRIC at most SIZE (15.5GiB, 512MB, bytes); over it fails the gate "
                    "(repeatable; before the config's [[budget]])");
  check->add_option("--warn-percent", check_args.warn_percent, "Budgets: warn at this share of the budget (default 90)")
      ->check(CLI::NonNegativeNumber);
  check->add_option("--config", check_args.config, "TOML file: thresholds, ignored modules, accepted regressions");
  check->add_option("--metric", check_args.metrics,
                    "Metric to compare (repeatable; default total_bytes and live_peak_padded_bytes)");
  check->add_option("--max-growth-bytes", max_growth_bytes, "Growth tolerated, bytes (default 0)")
      ->check(CLI::NonNegativeNumber);
  check->add_option("--max-growth-percent", max_growth_percent, "Growth tolerated, percent (default 0)")
      ->check(CLI::NonNegativeNumber);
  check->add_option("--ignore", check_args.ignore, "Leave modules matching this GLOB out (repeatable)");
  check->add_flag("--fail-on-retrace-growth", check_args.fail_on_retrace_growth,
                  "Fail when a jit name is compiled more often than in the baseline");
  check->add_option("--on-added", check_args.on_added, "A module only in RUN: report (default), fail or inconclusive")
      ->check(CLI::IsMember({"report", "fail", "inconclusive"}));
  check->add_option("--on-removed", check_args.on_removed,
                    "A module only in the baseline: report (default), fail or inconclusive")
      ->check(CLI::IsMember({"report", "fail", "inconclusive"}));
  check->add_option("--on-reshaped", check_args.on_reshaped,
                    "A reshaped pair (same jit name, other signature): report (default), judge, fail or inconclusive")
      ->check(CLI::IsMember({"report", "judge", "fail", "inconclusive"}));
  check->add_option("--by-name", check_args.by_name, "The roll-up by jit name: changed (default) or all")
      ->check(CLI::IsMember({"changed", "all"}));
  check->add_option("--output", check_args.output, "Write the report to this file (e.g. $GITHUB_STEP_SUMMARY)");
  check->add_option("--attribution", check_args.max_attribution, "Buffer changes listed per regressed module")
      ->check(CLI::Range(1, 100000));
  check->add_option("--html", s->html, "Also write the gate's HTML page (xladb report RUN --baseline …) here");
  check->add_option("--report-url", check_args.report_url, "Markdown: link to the HTML page at this URL");

  return {check, [s](const CommonFlags& c) {
            s->args.format = c.format;
            s->args.max_growth_bytes = s->max_growth_bytes;
            s->args.max_growth_percent = s->max_growth_percent;
            return WithQueryClient(c, kExitToolFailed, [&](QueryClient& b) {
              const int verdict = CmdCheck(b, s->args);
              if (s->html.empty() || verdict == kExitUsage || verdict == kExitToolFailed) return verdict;
              ReportArgs page;  // the gate's page, as `xladb report RUN --baseline …` writes it
              page.run = s->args.run;
              page.baseline = s->args.baseline;
              page.budgets = s->args.budgets;
              page.config = s->args.config;
              page.warn_percent = s->args.warn_percent;
              page.output = s->html;
              return CmdReport(b, page) == kExitOk ? verdict : kExitToolFailed;
            });
          }};
}

Command ChangesCommand(CLI::App& app) {
  auto s = std::make_shared<ArgsWithLabels<ChangesArgs>>();
  ChangesArgs& changes_args = s->args;
  std::vector<std::string>& changes_labels = s->labels;
  auto* changes = app.add_subcommand(
      "changes", "Change points of the run history: where each module's memory changed, since when, and why");
  changes->add_option("MODULE", changes_args.module, "Only this module (name or GLOB pattern); default: every module");
  // One value per flag, so that `changes --label k=v MODULE` does not read MODULE as a label.
  changes->add_option("--label", changes_labels, "Only runs with this label key=value (repeatable)")
      ->allow_extra_args(false);
  auto* changes_since = changes->add_option("--since", changes_args.since_run, "Only changes at runs after this run");
  changes->add_option("--last", changes_args.last_n, "Only changes at the newest N runs")
      ->check(CLI::Range(int64_t{1}, int64_t{INT32_MAX}))
      ->excludes(changes_since);
  changes->add_option("--metric", changes_args.metrics,
                      "Compare this metric (repeatable; default total_bytes and live_peak_padded_bytes)")
      ->allow_extra_args(false);
  changes->add_option("--min-bytes", changes_args.min_bytes, "Only changes of at least this size (e.g. 1MiB)");
  changes->add_option("--min-percent", changes_args.min_percent, "Only changes of at least this percent")
      ->check(CLI::NonNegativeNumber);
  changes->add_option("--attribute", changes_args.attribute,
                      "Explain the N largest changes with buffers and source lines, all, or none (default 5)");
  changes->add_option("--attribution", changes_args.max_attribution, "Buffer changes listed per explained change")
      ->check(CLI::Range(1, 100000));
  changes->add_option("--first-above", changes_args.first_above,
                      "Also say since when each jit name's metric has exceeded this size (e.g. 12GiB)");
  changes->add_option("--limit", changes_args.limit, "At most this many change points (default 100; 0 = all)")
      ->check(CLI::Range(int64_t{0}, int64_t{INT32_MAX}));
  changes->add_option("--output", changes_args.output, "Write the answer to this file (e.g. $GITHUB_STEP_SUMMARY)");

  return {changes, [s](const CommonFlags& c) {
            if (c.format == "junit" && !TableFormatOnly(c)) return kExitUsage;
            s->args.format = c.format;
            if (!ParseLabels(s->labels, &s->args.labels)) return kExitUsage;
            return WithQueryClient(c, kExitFailure, [&](QueryClient& b) { return CmdChanges(b, s->args); });
          }};
}

Command ReportCommand(CLI::App& app) {
  auto report_state = std::make_shared<ReportArgs>();
  ReportArgs& report_args = *report_state;
  auto* report = app.add_subcommand(
      "report", "Write a self-contained HTML page: a run, one module (--module), RUN against --baseline, or --home");
  report->add_option("RUN", report_args.run, "Run name (not with --home)");
  report->add_flag("--home", report_args.home,
                   "The front page: the latest run per --home-label value, recent changes, the largest modules");
  report->add_option("--home-label", report_args.home_label, "The front page groups runs by this label, e.g. branch");
  report->add_option("--module", report_args.module, "The module page of this module (exact name)");
  report->add_option("--xla-id", report_args.xla_module_id, "Picks the module_<ID> among modules of one name")
      ->check(CLI::NonNegativeNumber);
  report->add_option("--stage", report_args.stage, "Picks the stage among modules of one name");
  auto* report_folder_opt =
      report->add_option("--folder", report_args.folder, "Picks the folder among modules of one name");
  report->add_option("--baseline", report_args.baseline,
                     "The gate's page: RUN against a run name, label:KEY=VALUE or commit:SHA");
  report->add_option("--budget", report_args.budgets,
                     "The gate's page: METRIC=SIZE budgets, as check takes them (repeatable; no baseline needed)");
  report->add_option("-o,--output", report_args.output, "The HTML file to write")->required();

  return QueryCommand(report, [report_state, report_folder_opt](QueryClient& b, OutputFormat) {
    report_state->has_folder = report_folder_opt->count() > 0;
    return CmdReport(b, *report_state);
  });
}

Command SqlCommand(CLI::App& app) {
  struct State {
    std::string sql;
    int64_t max_rows = 0;
  };
  auto s = std::make_shared<State>();
  auto* sqlcmd =
      app.add_subcommand("sql", "Run a read-only SQL query (on xladbd, on --db FILE, or on --db postgresql://…)");
  sqlcmd->add_option("QUERY", s->sql, "One SQL statement")->required();
  sqlcmd->add_option("--max-rows", s->max_rows, "Stop after this many rows (0 = the server's limit)")
      ->check(CLI::NonNegativeNumber);
  return QueryCommand(sqlcmd, [s](QueryClient& b, OutputFormat) { return CmdSql(b, s->sql, s->max_rows); });
}

Command LabelCommand(CLI::App& app) {
  auto s = std::make_shared<ArgsWithLabels<LabelArgs>>();
  auto* label = app.add_subcommand("label", "Set (KEY=VALUE) or remove (--remove KEY) labels of a stored run");
  label->add_option("RUN", s->args.run, "Run name")->required();
  label->add_option("LABELS", s->labels, "KEY=VALUE to set (repeatable)");
  label->add_option("--remove", s->args.remove, "Label key to remove (repeatable)");
  return {label, [s](const CommonFlags& c) {
            if (!TableFormatOnly(c)) return kExitUsage;
            if (!ParseLabels(s->labels, &s->args.set)) return kExitUsage;
            return CmdLabel(c.client, c.db_path, s->args);
          }};
}

Command DeleteCommand(CLI::App& app) {
  auto run = std::make_shared<std::string>();
  auto* del = app.add_subcommand("delete", "Delete a stored run: every row of it, nothing of another run");
  del->add_option("RUN", *run, "Run name")->required();
  return {del, [run](const CommonFlags& c) {
            if (!TableFormatOnly(c)) return kExitUsage;
            return CmdDelete(c.client, c.db_path, *run);
          }};
}

Command PruneCommand(CLI::App& app) {
  auto s = std::make_shared<ArgsWithLabels<PruneArgs>>();
  auto* prune = app.add_subcommand(
      "prune", "Drop value-, live-range- and instruction-level rows of old runs (summaries, peaks, gate metrics stay)");
  prune->add_option("--keep-detail-days", s->args.keep_detail_days, "Runs older than this many days lose detail")
      ->required()
      ->check(CLI::NonNegativeNumber);
  prune->add_option("--keep-label", s->labels, "Runs with this KEY=VALUE label keep their detail (repeatable)");
  return {prune, [s](const CommonFlags& c) {
            if (!TableFormatOnly(c)) return kExitUsage;
            if (!ParseLabels(s->labels, &s->args.keep_labels)) return kExitUsage;
            return CmdPrune(c.client, c.db_path, s->args);
          }};
}

Command CopyCommand(CLI::App& app) {
  struct State {
    std::string source, destination, reader;
  };
  auto s = std::make_shared<State>();
  auto* copy = app.add_subcommand(
      "copy", "Copy a SQLite store into PostgreSQL or back, run by run (resumable; verified by row counts)");
  copy->add_option("SRC", s->source, "The SQLite file, or postgresql://user@host:port/db")->required();
  copy->add_option("DST", s->destination, "postgresql://user@host:port/db, or the SQLite file")->required();
  copy->add_option("--grant-reader", s->reader, "Then let this role read the copy (SELECT only), e.g. for `xladb sql`");
  return {copy, [s](const CommonFlags& c) {
            if (!TableFormatOnly(c)) return kExitUsage;
            return CmdCopy(s->source, s->destination, s->reader, c.client.format);
          }};
}

// Every command, in the order `xladb --help` lists them.
constexpr Command (*kCommands[])(CLI::App&) = {
    &IngestCommand, &RunsCommand,  &ModulesCommand, &TrendCommand,   &SpillsCommand, &TopCommand,
    &DiffCommand,   &RetracesCommand, &JobsCommand, &WaitCommand,    &OomCommand,    &CheckCommand,
    &ChangesCommand, &ReportCommand, &LabelCommand, &DeleteCommand,  &PruneCommand,  &CopyCommand,
    &SqlCommand};

void AddCommonFlags(CLI::App& app, CommonFlags& c) {
  app.add_option("--addr", c.client.addr, "xladbd address (host:port)")->envname("XLADB_ADDR");
  app.add_option("--format", c.format, "table, csv or json (check: table, json, markdown or junit)")
      ->check(CLI::IsMember({"table", "csv", "json", "markdown", "junit"}));
  app.add_option("--db", c.db_path,
                 "Work on this store directly, without a server: a SQLite file, or a PostgreSQL store "
                 "(postgresql://user@host/db)")
      ->envname("XLADB_DB");
  app.add_option("--token-file", c.token_file, "File with the bearer token the server requires")
      ->envname("XLADB_TOKEN_FILE");
  app.add_option("--tls-ca", c.client.tls_ca, "Use TLS, trusting this CA certificate (PEM)");
  app.add_option("--timeout", c.client.timeout_s,
                 "Seconds to wait for xladbd's answer (uploads: the longest silence, not the total time)")
      ->check(CLI::Range(int64_t{1}, int64_t{86400}))
      ->envname("XLADB_TIMEOUT");
}

// The common flags, done: the output format, the token read from its file, a --db that can be a store. 0 when
// the command may run, else kExitUsage.
int CheckCommonFlags(CommonFlags& c) {
  c.client.format = ParseOutputFormat(c.format).value_or(OutputFormat::kTable);
  if (!c.token_file.empty()) {
    std::ifstream in(c.token_file);
    if (!in || !std::getline(in, c.client.token) || c.client.token.empty()) {
      std::fprintf(stderr, "xladb: cannot read a token from %s\n", c.token_file.c_str());
      return kExitUsage;
    }
    while (!c.client.token.empty() && (c.client.token.back() == '\r' || c.client.token.back() == ' ')) {
      c.client.token.pop_back();
    }
  }
  // A --db that cannot be a database (a FIFO would hang every command) is a usage error before anything runs.
  if (!c.db_path.empty()) {
    if (Status file = store::CheckDatabaseFile(c.db_path); !file.ok()) {
      std::fprintf(stderr, "xladb: --db: %s\n", file.message().c_str());
      return kExitUsage;
    }
  }
  return kExitOk;
}

}  // namespace
}  // namespace xladb::cli

int main(int argc, char** argv) {
  using namespace xladb::cli;
  CLI::App app{"xladb: XLA memory dumps across runs (a client of xladbd; --db FILE works offline)"};
  app.set_version_flag("--version", xladb::VersionLine("xladb", xladb::store::kSchemaVersion));
  app.require_subcommand(1);
  app.option_defaults()->always_capture_default();
  app.fallthrough();  // common options may follow the subcommand: `xladb runs --format csv`
  CommonFlags common;
  AddCommonFlags(app, common);
  std::vector<Command> commands;
  for (auto make : kCommands) commands.push_back(make(app));
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    int rc = app.exit(e);
    return rc == 0 ? kExitOk : kExitUsage;
  }
  if (int refused = CheckCommonFlags(common); refused != kExitOk) return refused;
  for (const Command& command : commands) {
    if (command.app->parsed()) return command.run(common);
  }
  return kExitUsage;
}
