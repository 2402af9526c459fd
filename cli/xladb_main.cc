// xladb: the command-line tool.
//
//   xladb ingest PATH... --db FILE [--run NAME] [--label key=value]... [--time T]
//   xladb sql "SELECT …" --db FILE [--format table|csv|json]
//
// Exit codes: 0 success, 1 failure (including files that could not be ingested), 2 usage error.
#include <unistd.h>

#include <CLI/CLI.hpp>

#include <cstdio>
#include <string>
#include <vector>

#include "cli/output.h"
#include "ingest/dump_ingester.h"
#include "store/database.h"
#include "store/run_writer.h"
#include "store/sql_query.h"

namespace xladb::cli {
namespace {

constexpr int kExitOk = 0;
constexpr int kExitFailure = 1;
constexpr int kExitUsage = 2;

bool ParseLabels(const std::vector<std::string>& raw, std::vector<std::pair<std::string, std::string>>* out) {
  for (const auto& kv : raw) {
    size_t eq = kv.find('=');
    if (eq == std::string::npos || eq == 0) {
      std::fprintf(stderr, "xladb: label '%s' is not key=value\n", kv.c_str());
      return false;
    }
    out->emplace_back(kv.substr(0, eq), kv.substr(eq + 1));
  }
  return true;
}

std::string FormatVerdicts(const std::map<std::string, int64_t>& by_verdict) {
  std::string s;
  for (const char* v : {"ingested", "unchanged", "not_ingested", "error"}) {
    auto it = by_verdict.find(v);
    int64_t n = it == by_verdict.end() ? 0 : it->second;
    if (!s.empty()) s += ", ";
    s += std::to_string(n) + " " + v;
  }
  return s;
}

int RunIngest(const std::vector<std::string>& paths, const std::string& db_path, const std::string& run_name,
              const std::vector<std::string>& raw_labels, const std::string& time) {
  ingest::IngestOptions options;
  options.run_name = run_name;
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
      return kExitFailure;
    }
    const auto& s = summary.value();
    double mb = static_cast<double>(s.bytes_read) / 1e6;
    std::printf("run %s: %lld files (%s); %lld rows, %.1f MB in %.2f s (%.1f MB/s), %lld issues\n",
                s.run_name.c_str(), static_cast<long long>(s.files), FormatVerdicts(s.files_by_verdict).c_str(),
                static_cast<long long>(s.rows), mb, s.seconds, s.seconds > 0 ? mb / s.seconds : 0.0,
                static_cast<long long>(s.issues));
    if (s.files > 0 && s.files_by_verdict.count("unchanged") &&
        s.files_by_verdict.at("unchanged") == s.files) {
      std::printf("run %s: unchanged\n", s.run_name.c_str());
    }
    for (size_t i = 0; i < s.errors.size() && i < 20; ++i) {
      std::fprintf(stderr, "  error: %s: %s\n", s.errors[i].path.c_str(), s.errors[i].reason.c_str());
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
  auto db = store::Database::Open(db_path, store::Database::Mode::kReadOnly);
  if (!db.ok()) {
    std::fprintf(stderr, "xladb: %s\n", db.status().message().c_str());
    return kExitFailure;
  }
  ResultPrinter printer(*format, stdout);
  std::vector<Cell> cells;
  Status st = store::RunReadOnlySql(
      *db.value(), sql,
      [&](const std::vector<store::SqlColumn>& cols) {
        std::vector<std::string> names;
        for (const auto& c : cols) names.push_back(c.name);
        printer.SetColumns(std::move(names));
      },
      [&](const std::vector<store::SqlValue>& row) {
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
          } else if (auto* s = std::get_if<std::string>(&row[i])) c.text = *s;
          else c.text.clear();
        }
        printer.AddRow(cells);
        return true;
      });
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
  CLI::App app{"xladb: XLA memory dumps across runs"};
  app.require_subcommand(1);

  std::vector<std::string> paths, labels;
  std::string db_path, run_name, time, sql, format = "table";

  auto* ingest = app.add_subcommand("ingest", "Ingest dump folders, files or archives into a database");
  ingest->add_option("PATH", paths, "Dump folder, file, .gz/.zst, or .tar[.gz|.zst]/.zip artifact")->required();
  ingest->add_option("--db", db_path, "SQLite database file (created if missing)")->required();
  ingest->add_option("--run", run_name, "Run name (default: the folder or archive name)");
  ingest->add_option("--label", labels, "Run label key=value (repeatable)");
  ingest->add_option("--time", time, "When the run happened: Unix seconds or YYYY-MM-DD[THH:MM:SSZ]");

  auto* sqlcmd = app.add_subcommand("sql", "Run a read-only SQL query on a database file");
  sqlcmd->add_option("QUERY", sql, "One SQL statement")->required();
  sqlcmd->add_option("--db", db_path, "SQLite database file")->required();
  sqlcmd->add_option("--format", format, "table, csv or json")->check(CLI::IsMember({"table", "csv", "json"}));

  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    int rc = app.exit(e);
    return rc == 0 ? kExitOk : kExitUsage;
  }
  if (ingest->parsed()) return RunIngest(paths, db_path, run_name, labels, time);
  if (sqlcmd->parsed()) return RunSql(sql, db_path, format);
  return kExitUsage;
}
