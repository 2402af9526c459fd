#include "cli/copy_command.h"

#include <cstdio>
#include <memory>
#include <string>

#include "cli/remote_commands.h"
#include "store/backend/database.h"
#include "store/postgres/postgres_connection.h"
#include "store/postgres/postgres_sql_query.h"
#include "store/copy/store_copy.h"

namespace xladb::cli {
int CmdCopy(const std::string& source, const std::string& destination, const std::string& reader,
            OutputFormat format) {
  const bool up = !store::IsPostgresUri(source) && store::IsPostgresUri(destination);
  const bool down = store::IsPostgresUri(source) && !store::IsPostgresUri(destination);
  if (!up && !down) {
    std::fprintf(stderr, "xladb copy: one of SRC and DST must be a SQLite file and the other a PostgreSQL URI "
                         "(postgresql://user@host:port/db)\n");
    return kExitUsage;
  }
  if (down && !reader.empty()) {
    std::fprintf(stderr, "xladb copy: --grant-reader is for a copy into PostgreSQL\n");
    return kExitUsage;
  }
  const std::string& file = up ? source : destination;
  if (Status usable = store::CheckDatabaseFile(file); !usable.ok()) {
    std::fprintf(stderr, "xladb copy: %s\n", usable.message().c_str());
    return kExitUsage;
  }
  auto db = store::Database::Open(file, up ? store::Database::Mode::kReadOnly : store::Database::Mode::kReadWrite);
  if (!db.ok()) {
    std::fprintf(stderr, "xladb copy: %s: %s\n", file.c_str(), db.status().message().c_str());
    return kExitFailure;
  }
  auto pg = store::PostgresConnection::Connect(up ? destination : source);
  if (!pg.ok()) {
    std::fprintf(stderr, "xladb copy: %s\n", pg.status().message().c_str());
    return kExitFailure;
  }
  auto report = up ? store::CopyToPostgres(*db.value(), *pg.value()) : store::CopyToSqlite(*pg.value(), *db.value());
  if (!report.ok()) {
    std::fprintf(stderr, "xladb copy: %s\n", report.status().message().c_str());
    return kExitFailure;
  }
  if (!reader.empty()) {
    if (Status granted = store::GrantReadOnlyAccess(*pg.value(), reader); !granted.ok()) {
      std::fprintf(stderr, "xladb copy: granting %s read access: %s\n", reader.c_str(), granted.message().c_str());
      return kExitFailure;
    }
  }
  ResultPrinter out(format, stdout);
  out.SetColumns({"table", "rows_copied", "source_rows", "destination_rows"});
  auto number = [](int64_t n) { return Cell{std::to_string(n), false, true}; };
  for (const auto& t : report->tables) {
    out.AddRow({Cell{t.name}, number(t.rows_copied), number(t.source_rows), number(t.destination_rows)});
  }
  out.Finish();
  std::fprintf(stderr, "xladb copy: %lld runs copied, %lld already there; every table verified by row count\n",
               static_cast<long long>(report->runs_copied), static_cast<long long>(report->runs_already_there));
  if (!report->tidy_warning.empty()) std::fprintf(stderr, "xladb copy: warning: %s\n", report->tidy_warning.c_str());
  return kExitOk;
}

}  // namespace xladb::cli
