// `xladb sql`: one read-only SQL statement through the QueryService's Query stream (xladbd's SQL endpoint, or
// the store's own served in process with --db), printed as a result set (cli/output.h) on stdout.
//
// Exit codes: 0 success (a truncated result says so on stderr), 1 failure (refused, bad SQL, cut short).
#ifndef XLADB_CLI_SQL_COMMAND_H_
#define XLADB_CLI_SQL_COMMAND_H_

#include <cstdint>
#include <string>

#include "cli/query_client.h"

namespace xladb::cli {

// `max_rows` 0: the server's limit (offline: none).
int CmdSql(QueryClient& client, const std::string& sql, int64_t max_rows);

}  // namespace xladb::cli

#endif  // XLADB_CLI_SQL_COMMAND_H_
