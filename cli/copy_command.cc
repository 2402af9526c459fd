#include "cli/copy_command.h"

#include <cstdio>
#include <string>

#include "cli/remote_commands.h"
#include "store/database.h"
#include "store/postgres_connection.h"
#include "store/postgres_sql_query.h"
#include "store/store_copy.h"

namespace xladb::cli {

int CmdCopy(const std::string& source, const std::string& destination, const std::string& reader,
            OutputFormat format) {
  if (destination.rfind("postgresql://", 0) != 0 && destination.rfind("postgres://", 0) != 0) {
    std::fprintf(stderr, "xladb copy: DST must be a PostgreSQL URI (postgresql://user@host:port/db), not %s\n",
                 destination.c_str());
    return kExitUsage;
  }
  auto src = store::Database::Open(source, store::Database::Mode::kReadOnly);
  if (!src.ok()) {
    std::fprintf(stderr, "xladb copy: %s: %s\n", source.c_str(), src.status().message().c_str());
    return kExitFailure;
  }
  auto dst = store::PostgresConnection::Connect(destination);
  if (!dst.ok()) {
    std::fprintf(stderr, "xladb copy: %s\n", dst.status().message().c_str());
    return kExitFailure;
  }
  auto report = store::CopyToPostgres(*src.value(), *dst.value());
  if (!report.ok()) {
    std::fprintf(stderr, "xladb copy: %s\n", report.status().message().c_str());
    return kExitFailure;
  }
  if (!reader.empty()) {
    if (Status granted = store::GrantReadOnlyAccess(*dst.value(), reader); !granted.ok()) {
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
  return kExitOk;
}

}  // namespace xladb::cli
