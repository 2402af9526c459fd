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
#include <unistd.h>

#include <CLI/CLI.hpp>

#include <cstdint>
#include <cstdio>
#include <fstream>
#include <string>
#include <vector>

#include "cli/changes_command.h"
#include "cli/copy_command.h"
#include "cli/job_commands.h"
#include "cli/output.h"
#include "cli/query_commands.h"
#include "cli/remote_commands.h"
#include "cli/run_commands.h"
#include "ingest/dump_ingester.h"
#include "ingest/source/run_name.h"
#include "ingest/text/visible_text.h"
#include "proto/wire_text.h"
#include "store/backend/database.h"
#include "store/facts/module_metrics.h"
#include "store/postgres/postgres_connection.h"
#include "store/postgres/postgres_sql_query.h"
#include "store/write/run_writer.h"
#include "store/sql_endpoint.h"

namespace xladb::cli {
namespace {

bool ParseLabels(const std::vector<std::string>& raw, std::vector<std::pair<std::string, std::string>>* out) {
  for (const auto& kv : raw) {
    size_t eq = kv.find('=');
    if (eq == std::string::npos || eq == 0) {
      std::fprintf(stderr, "xladb: label '%s' is not key=value\n", ingest::EscapeControlCharacters(kv).c_str());
      return false;
    }
    // The server and the store refuse such a label too; refusing it here is a usage error, before any call.
    if (Status valid = ingest::ValidateRunLabel(kv.substr(0, eq), kv.substr(eq + 1)); !valid.ok()) {
      std::fprintf(stderr, "xladb: %s\n", valid.message().c_str());
      return false;
    }
    out->emplace_back(kv.substr(0, eq), kv.substr(eq + 1));
  }
  return true;
}

std::map<std::string, int64_t> WithRereads(const ingest::IngestSummary& s) {
  auto verdicts = s.files_by_verdict;
  if (s.files_reread > 0) verdicts["reread"] = s.files_reread;
  return verdicts;
}

std::string FormatVerdicts(const std::map<std::string, int64_t>& by_verdict) {
  std::string s;
  for (const char* v : {"ingested", "unchanged", "not_ingested", "error"}) {
    auto it = by_verdict.find(v);
    int64_t n = it == by_verdict.end() ? 0 : it->second;
    if (!s.empty()) s += ", ";
    s += std::to_string(n) + " " + v;
  }
  // Files of a module one of whose files was replaced, read again to rebuild it (store/write/run_writer.h).
  if (auto it = by_verdict.find("reread"); it != by_verdict.end() && it->second > 0) {
    s += ", " + std::to_string(it->second) + " read again";
  }
  return s;
}

int RunIngest(const std::vector<std::string>& paths, const std::string& db_path, const std::string& run_name,
              const std::vector<std::string>& raw_labels, const std::string& time, bool append) {
  ingest::IngestOptions options;
  options.run_name = run_name;
  options.append = append;
  if (!ParseLabels(raw_labels, &options.labels)) return kExitUsage;
  if (!time.empty()) {
    auto t = ingest::ParseTimeToUs(time);
    if (!t.ok()) {
      std::fprintf(stderr, "xladb: --time: %s\n", t.status().message().c_str());
      return kExitUsage;
    }
    options.time_us = *t;
  }
  if (!run_name.empty() && paths.size() > 1) {
    std::fprintf(stderr, "xladb: --run names one run; give one PATH with it (or none and let folders name runs)\n");
    return kExitUsage;
  }
  auto db = store::Database::Open(db_path);
  if (!db.ok()) {
    std::fprintf(stderr, "xladb: %s\n", db.status().message().c_str());
    return kExitFailure;
  }
  store::RunWriter writer(db.value().get());
  ingest::DumpIngester ingester(&writer);
  const bool tty = ::isatty(STDERR_FILENO);
  int exit_code = kExitOk;
  for (const auto& path : paths) {
    auto progress = [&](const ingest::IngestProgress& p) {
      if (!tty) return;
      std::fprintf(stderr, "\r\033[K%lld files, %.1f MB  %s", static_cast<long long>(p.files_done),
                   static_cast<double>(p.bytes_done) / 1e6, p.current_path ? p.current_path->c_str() : "");
      std::fflush(stderr);
    };
    auto summary = ingester.Ingest(path, options, progress);
    if (tty) std::fprintf(stderr, "\r\033[K");
    if (!summary.ok()) {
      std::fprintf(stderr, "xladb: ingest %s failed: %s\n", path.c_str(), summary.status().message().c_str());
      return summary.status().code() == Status::Code::kInvalidArgument ? kExitUsage : kExitFailure;
    }
    const auto& s = summary.value();
    double mb = static_cast<double>(s.bytes_read) / 1e6;
    std::printf("run %s: %lld files (%s); %lld rows, %.1f MB in %.2f s (%.1f MB/s), %lld issues\n",
                ingest::EscapeControlCharacters(s.run_name).c_str(), static_cast<long long>(s.files),
                FormatVerdicts(WithRereads(s)).c_str(),
                static_cast<long long>(s.rows), mb, s.seconds, s.seconds > 0 ? mb / s.seconds : 0.0,
                static_cast<long long>(s.issues));
    if (s.files > 0 && s.files_by_verdict.count("unchanged") &&
        s.files_by_verdict.at("unchanged") == s.files) {
      std::printf("run %s: unchanged\n", ingest::EscapeControlCharacters(s.run_name).c_str());
    }
    for (size_t i = 0; i < s.errors.size() && i < 20; ++i) {
      std::fprintf(stderr, "  error: %s: %s\n", ingest::EscapeControlCharacters(s.errors[i].path).c_str(),
                   ingest::EscapeControlCharacters(s.errors[i].reason).c_str());
    }
    if (s.errors.size() > 20) std::fprintf(stderr, "  … and %zu more errors\n", s.errors.size() - 20);
    if (!s.errors.empty()) exit_code = kExitFailure;
  }
  return exit_code;
}

int RunSql(const std::string& sql, const std::string& db_path, const std::string& format_name) {
  auto format = ParseOutputFormat(format_name);
  if (!format) {
    std::fprintf(stderr, "xladb: --format must be table, csv or json\n");
    return kExitUsage;
  }
  ResultPrinter printer(*format, stdout);
  std::vector<Cell> cells;
  auto on_columns = [&](const std::vector<store::SqlColumn>& cols) {
    std::vector<std::string> names;
    for (const auto& c : cols) names.push_back(c.name);
    printer.SetColumns(std::move(names));
  };
  auto on_row = [&](const std::vector<store::SqlValue>& row) {
    cells.resize(row.size());
    for (size_t i = 0; i < row.size(); ++i) {
      Cell& c = cells[i];
      c.is_null = std::holds_alternative<std::monostate>(row[i]);
      c.is_number = std::holds_alternative<int64_t>(row[i]) || std::holds_alternative<double>(row[i]);
      if (auto* v = std::get_if<int64_t>(&row[i])) c.text = std::to_string(*v);
      else if (auto* d = std::get_if<double>(&row[i])) {
        char buf[32];
        std::snprintf(buf, sizeof buf, "%.17g", *d);
        c.text = buf;
      } else if (auto* s = std::get_if<std::string>(&row[i])) {
        c.text = wire::EscapeInvalidUtf8(*s);  // as `xladb sql` through xladbd prints it
      } else if (auto* b = std::get_if<store::SqlBlob>(&row[i])) {
        c.text = wire::EscapeInvalidUtf8(b->bytes);
      } else {
        c.text.clear();
      }
    }
    printer.AddRow(cells);
    return true;
  };
  Status st = Status::Ok();
  if (store::IsPostgresUri(db_path)) {
    // A store in PostgreSQL (e.g. filled by `xladb copy`): connect as a role that may only read it.
    auto pg = store::PostgresConnection::Connect(db_path);
    if (!pg.ok()) {
      std::fprintf(stderr, "xladb: %s\n", pg.status().message().c_str());
      return kExitFailure;
    }
    st = store::RunReadOnlySqlOnPostgres(*pg.value(), sql, store::SqlLimits{}, on_columns, on_row);
  } else {
    auto db = store::Database::Open(db_path, store::Database::Mode::kReadOnly);
    if (!db.ok()) {
      std::fprintf(stderr, "xladb: %s\n", db.status().message().c_str());
      return kExitFailure;
    }
    st = store::RunReadOnlySql(*db.value(), sql, store::SqlLimits{}, on_columns, on_row);
  }
  if (!st.ok()) {
    std::fprintf(stderr, "xladb: %s\n", st.message().c_str());
    return kExitFailure;
  }
  printer.Finish();
  return kExitOk;
}

}  // namespace
}  // namespace xladb::cli

int main(int argc, char** argv) {
  using namespace xladb::cli;
  CLI::App app{"xladb: XLA memory dumps across runs (a client of xladbd; --db FILE works offline)"};
  app.require_subcommand(1);
  app.option_defaults()->always_capture_default();
  app.fallthrough();  // common options may follow the subcommand: `xladb runs --format csv`

  ClientOptions client;
  std::string format = "table", token_file, db_path;
  app.add_option("--addr", client.addr, "xladbd address (host:port)")->envname("XLADB_ADDR");
  app.add_option("--format", format, "table, csv or json (check: table, json, markdown or junit)")
      ->check(CLI::IsMember({"table", "csv", "json", "markdown", "junit"}));
  app.add_option("--db", db_path,
                 "Work on this store directly, without a server: a SQLite file, or a PostgreSQL store "
                 "(postgresql://user@host/db)")
      ->envname("XLADB_DB");
  app.add_option("--token-file", token_file, "File with the bearer token the server requires")
      ->envname("XLADB_TOKEN_FILE");
  app.add_option("--tls-ca", client.tls_ca, "Use TLS, trusting this CA certificate (PEM)");
  app.add_option("--timeout", client.timeout_s,
                 "Seconds to wait for xladbd's answer (uploads: the longest silence, not the total time)")
      ->check(CLI::Range(int64_t{1}, int64_t{86400}))
      ->envname("XLADB_TIMEOUT");

  // ingest
  RemoteIngestArgs ingest_args;
  std::vector<std::string> labels;
  std::string time;
  auto* ingest = app.add_subcommand("ingest", "Ingest dump folders, files or archives (uploads them to xladbd)");
  ingest->add_option("PATH", ingest_args.paths, "Dump folder, file, .gz/.zst, or .tar[.gz|.zst]/.zip artifact")
      ->required();
  ingest->add_option("--run", ingest_args.run_name, "Run name (default: the folder or archive name)");
  ingest->add_option("--label", labels, "Run label key=value (repeatable)");
  ingest->add_option("--time", time, "When the run happened: Unix seconds or YYYY-MM-DD[THH:MM:SSZ]");
  ingest->add_flag("--server-path", ingest_args.server_path, "Let the server read PATH from its own disk (IngestPath)");
  ingest->add_flag("--append", ingest_args.append,
                   "Add to an existing run that came from another folder, archive or upload");

  // queries
  RunsArgs runs_args;
  std::vector<std::string> run_labels;
  auto* runs = app.add_subcommand("runs", "List runs, newest first");
  runs->add_option("--label", run_labels, "Only runs with this label key=value (repeatable)");
  runs->add_option("--since", runs_args.since, "Only runs at or after this time");
  runs->add_option("--until", runs_args.until, "Only runs before this time");
  runs->add_option("--name", runs_args.name_pattern, "Only runs whose name matches this GLOB");
  runs->add_option("--limit", runs_args.limit, "At most this many runs")->check(CLI::PositiveNumber);

  ModulesArgs modules_args;
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

  TrendArgs trend_args;
  std::vector<std::string> trend_labels;
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
  std::string trend_folder;
  auto* trend_folder_opt = trend->add_option("--folder", trend_folder, "Only modules in this folder of their run");
  int64_t trend_xla_id = -1;
  auto* trend_xla_opt =
      trend->add_option("--xla-id", trend_xla_id, "With --run: follow that run's compile module_<ID> across runs")
          ->check(CLI::NonNegativeNumber);
  trend->add_option("--run", trend_args.run,
                    "Follow one compile of this run by its identity (--xla-id, else the largest by total_bytes)");
  trend->add_option("--fingerprint", trend_args.fingerprint, "Only instances of this program fingerprint");
  trend->add_option("--since", trend_args.since, "Only runs at or after this time");
  trend->add_option("--until", trend_args.until, "Only runs before this time");

  std::string kernel_pattern, spill_run;
  int64_t spill_limit = 20;
  auto* spills = app.add_subcommand("spills", "TPU kernels ranked by VMEM spill rate");
  spills->add_option("--kernel", kernel_pattern, "Only kernels matching this GLOB");
  spills->add_option("--run", spill_run, "Only this run");
  spills->add_option("--limit", spill_limit, "At most this many rows (0 = all)")->check(CLI::NonNegativeNumber);

  TopArgs top_args;
  auto* top = app.add_subcommand("top", "The buffers live at a module's peak, largest first");
  top->add_option("RUN", top_args.run, "Run name")->required();
  top->add_option("MODULE", top_args.module, "Module name")->required();
  top->add_option("-n", top_args.n, "How many buffers")->check(CLI::PositiveNumber);
  top->add_option("--stage", top_args.stage, "Pick the module of this stage");
  int64_t top_xla_id = -1;
  auto* top_xla_opt = top->add_option("--xla-id", top_xla_id, "Pick the compile module_<ID> of the run")
                          ->check(CLI::NonNegativeNumber);
  top->add_option("--at", top_args.at,
                  "xla: XLA's printed peak list (default); padded: the buffers live at the padded live peak")
      ->check(CLI::IsMember({"xla", "padded"}));
  std::string top_folder;
  auto* top_folder_opt = top->add_option("--folder", top_folder,
                                         "Pick the module in this folder of the run (host0, …; '' = the root)");

  DiffArgs diff_args;
  bool no_buffers = false;
  auto* diff = app.add_subcommand("diff", "What changed between two runs");
  diff->add_option("RUN_A", diff_args.run_a, "The earlier run")->required();
  diff->add_option("RUN_B", diff_args.run_b, "The later run")->required();
  diff->add_option("--module", diff_args.module, "Only modules matching this name or GLOB");
  diff->add_flag("--all", diff_args.include_unchanged, "List unchanged modules too");
  diff->add_flag("--no-buffers", no_buffers, "Module level only");
  diff->add_option("--buffers", diff_args.max_buffers, "Buffer changes shown per module")
      ->check(CLI::NonNegativeNumber);

  std::string retrace_run;
  int64_t min_compiles = 2;
  auto* retraces = app.add_subcommand("retraces", "Jit names compiled more than once in a run");
  retraces->add_option("RUN", retrace_run, "Run name")->required();
  retraces->add_option("--min", min_compiles, "Only names compiled at least this often")->check(CLI::Range(2, 1000000));

  std::string jobs_run, jobs_state;
  int64_t jobs_limit = 1000;
  auto* jobs =
      app.add_subcommand("jobs", "The daemon's ingest jobs, newest first (QUEUED, RUNNING, SUCCEEDED, FAILED)");
  jobs->add_option("--run", jobs_run, "Only jobs of this run");
  jobs->add_option("--state", jobs_state, "Only jobs in this state: QUEUED, RUNNING, SUCCEEDED or FAILED");
  jobs->add_option("--limit", jobs_limit, "The newest N jobs")->check(CLI::Range(1, 100000));

  WaitArgs wait_args;
  auto* wait = app.add_subcommand(
      "wait", "Wait for a run's ingest jobs; exit 0 succeeded, 1 failed, 2 usage, 3 timed out, 4 cannot ask");
  wait->add_option("RUN", wait_args.run, "Run name (a run not queued yet is waited for)")->required();
  wait->add_option("--timeout", wait_args.timeout, "How long to wait: N seconds, or Ns, Nm, Nh (default 10m)");

  std::string oom_run, oom_module;
  auto* oom = app.add_subcommand("oom", "The OOM reports of a run: failed allocation, limit, buffers by size");
  oom->add_option("RUN", oom_run, "Run name")->required();
  oom->add_option("--module", oom_module, "Only reports of this module name");

  CheckArgs check_args;
  std::optional<int64_t> max_growth_bytes;
  std::optional<double> max_growth_percent;
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
  std::string check_html;
  check->add_option("--html", check_html, "Also write the gate's HTML page (xladb report RUN --baseline …) here");
  check->add_option("--report-url", check_args.report_url, "Markdown: link to the HTML page at this URL");

  ChangesArgs changes_args;
  std::vector<std::string> changes_labels;
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

  ReportArgs report_args;
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

  LabelArgs label_args;
  std::vector<std::string> label_pairs;
  auto* label = app.add_subcommand("label", "Set (KEY=VALUE) or remove (--remove KEY) labels of a stored run");
  label->add_option("RUN", label_args.run, "Run name")->required();
  label->add_option("LABELS", label_pairs, "KEY=VALUE to set (repeatable)");
  label->add_option("--remove", label_args.remove, "Label key to remove (repeatable)");
  std::string delete_run;
  auto* del = app.add_subcommand("delete", "Delete a stored run: every row of it, nothing of another run");
  del->add_option("RUN", delete_run, "Run name")->required();

  PruneArgs prune_args;
  std::vector<std::string> prune_keep;
  auto* prune = app.add_subcommand(
      "prune", "Drop value-, live-range- and instruction-level rows of old runs (summaries, peaks, gate metrics stay)");
  prune->add_option("--keep-detail-days", prune_args.keep_detail_days, "Runs older than this many days lose detail")
      ->required()
      ->check(CLI::NonNegativeNumber);
  prune->add_option("--keep-label", prune_keep, "Runs with this KEY=VALUE label keep their detail (repeatable)");

  std::string copy_source, copy_destination;
  auto* copy = app.add_subcommand(
      "copy", "Copy a SQLite store into PostgreSQL or back, run by run (resumable; verified by row counts)");
  copy->add_option("SRC", copy_source, "The SQLite file, or postgresql://user@host:port/db")->required();
  copy->add_option("DST", copy_destination, "postgresql://user@host:port/db, or the SQLite file")->required();
  std::string copy_reader;
  copy->add_option("--grant-reader", copy_reader, "Then let this role read the copy (SELECT only), e.g. for `xladb sql`");

  std::string sql;
  int64_t max_rows = 0;
  auto* sqlcmd =
      app.add_subcommand("sql", "Run a read-only SQL query (on xladbd, on --db FILE, or on --db postgresql://…)");
  sqlcmd->add_option("QUERY", sql, "One SQL statement")->required();
  sqlcmd->add_option("--max-rows", max_rows, "Stop after this many rows (0 = the server's limit)")
      ->check(CLI::NonNegativeNumber);

  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    int rc = app.exit(e);
    return rc == 0 ? kExitOk : kExitUsage;
  }
  client.format = ParseOutputFormat(format).value_or(OutputFormat::kTable);
  if (!token_file.empty()) {
    std::ifstream in(token_file);
    if (!in || !std::getline(in, client.token) || client.token.empty()) {
      std::fprintf(stderr, "xladb: cannot read a token from %s\n", token_file.c_str());
      return kExitUsage;
    }
    while (!client.token.empty() && (client.token.back() == '\r' || client.token.back() == ' ')) client.token.pop_back();
  }
  // A --db that cannot be a database (a FIFO would hang every command) is a usage error before anything runs.
  if (!db_path.empty()) {
    if (xladb::Status file = xladb::store::CheckDatabaseFile(db_path); !file.ok()) {
      std::fprintf(stderr, "xladb: --db: %s\n", file.message().c_str());
      return kExitUsage;
    }
  }
  const bool query_command = runs->parsed() || modules->parsed() || trend->parsed() || spills->parsed() ||
                             top->parsed() || diff->parsed() || retraces->parsed() || check->parsed() ||
                             report->parsed() || jobs->parsed() || wait->parsed() || oom->parsed() ||
                             changes->parsed();

  if (ingest->parsed()) {
    if (!db_path.empty()) {
      return RunIngest(ingest_args.paths, db_path, ingest_args.run_name, labels, time, ingest_args.append);
    }
    if (!ParseLabels(labels, &ingest_args.labels)) return kExitUsage;
    if (!time.empty()) {
      auto t = xladb::ingest::ParseTimeToUs(time);
      if (!t.ok()) {
        std::fprintf(stderr, "xladb: --time: %s\n", t.status().message().c_str());
        return kExitUsage;
      }
      ingest_args.time_us = *t;
    }
    return CmdRemoteIngest(client, ingest_args);
  }
  if (check->parsed()) {
    check_args.format = format;
    check_args.max_growth_bytes = max_growth_bytes;
    check_args.max_growth_percent = max_growth_percent;
  } else if (changes->parsed() && format != "junit") {
    changes_args.format = format;
  } else if (format == "markdown" || format == "junit") {
    std::fprintf(stderr, "xladb: --format %s is for check (and markdown for changes) only\n", format.c_str());
    return kExitUsage;
  }
  if (query_command) {
    std::unique_ptr<QueryBackend> backend;
    if (db_path.empty()) {
      backend = NewRemoteBackend(client);
    } else {
      auto offline = NewOfflineBackend(db_path);
      if (!offline.ok()) {
        std::fprintf(stderr, "xladb: %s\n", offline.status().message().c_str());
        return check->parsed() || wait->parsed() ? kExitToolFailed : kExitFailure;
      }
      backend = std::move(offline.value());
    }
    QueryBackend& b = *backend;
    const OutputFormat out = client.format;
    if (runs->parsed()) {
      if (!ParseLabels(run_labels, &runs_args.labels)) return kExitUsage;
      return CmdRuns(b, out, runs_args);
    }
    if (modules->parsed()) return CmdModules(b, out, modules_args);
    if (trend->parsed()) {
      if (!ParseLabels(trend_labels, &trend_args.labels)) return kExitUsage;
      if (trend_folder_opt->count() > 0) trend_args.folder = trend_folder;
      if (trend_xla_opt->count() > 0) trend_args.xla_module_id = trend_xla_id;
      return CmdTrend(b, out, trend_args);
    }
    if (spills->parsed()) return CmdSpills(b, out, kernel_pattern, spill_run, spill_limit);
    if (top->parsed()) {
      if (top_folder_opt->count() > 0) top_args.folder = top_folder;
      if (top_xla_opt->count() > 0) top_args.xla_module_id = top_xla_id;
      return CmdTop(b, out, top_args);
    }
    if (diff->parsed()) {
      diff_args.buffers = !no_buffers;
      return CmdDiff(b, out, diff_args);
    }
    if (retraces->parsed()) return CmdRetraces(b, out, retrace_run, min_compiles);
    if (jobs->parsed()) return CmdJobs(b, out, jobs_run, jobs_state, jobs_limit);
    if (wait->parsed()) return CmdWait(b, wait_args);
    if (oom->parsed()) return CmdOom(b, out, oom_run, oom_module);
    if (changes->parsed()) {
      if (!ParseLabels(changes_labels, &changes_args.labels)) return kExitUsage;
      return CmdChanges(b, changes_args);
    }
    if (report->parsed()) {
      report_args.has_folder = report_folder_opt->count() > 0;
      return CmdReport(b, report_args);
    }
    const int verdict = CmdCheck(b, check_args);
    if (!check_html.empty() && verdict != kExitUsage && verdict != kExitToolFailed) {
      ReportArgs page;
      page.run = check_args.run;
      page.baseline = check_args.baseline;
      page.budgets = check_args.budgets;
      page.config = check_args.config;
      page.warn_percent = check_args.warn_percent;
      page.output = check_html;
      if (CmdReport(b, page) != kExitOk) return kExitToolFailed;
    }
    return verdict;
  }
  if (label->parsed()) {
    if (!ParseLabels(label_pairs, &label_args.set)) return kExitUsage;
    return CmdLabel(client, db_path, label_args);
  }
  if (del->parsed()) return CmdDelete(client, db_path, delete_run);
  if (prune->parsed()) {
    if (!ParseLabels(prune_keep, &prune_args.keep_labels)) return kExitUsage;
    return CmdPrune(client, db_path, prune_args);
  }
  if (copy->parsed()) return CmdCopy(copy_source, copy_destination, copy_reader, client.format);
  if (sqlcmd->parsed()) {
    if (!db_path.empty()) return RunSql(sql, db_path, format);
    return CmdRemoteSql(client, sql, max_rows);
  }
  return kExitUsage;
}
