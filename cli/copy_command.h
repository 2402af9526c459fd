// `xladb copy SRC DST`: copies the SQLite store SRC into the PostgreSQL database DST (a libpq URI,
// postgresql://user@host:port/db), or a PostgreSQL store SRC into the SQLite file DST: run by run,
// resumable, verified by row counts (store/copy/store_copy.h).
// Prints one line per table (rows copied now, rows on each side afterwards) in the chosen format, and on
// stderr how many runs were copied and how many were there already. Exit codes: 0 done and verified,
// 1 failure (named on stderr), 2 usage.
#ifndef XLADB_CLI_COPY_COMMAND_H_
#define XLADB_CLI_COPY_COMMAND_H_

#include <string>

#include "cli/output.h"

namespace xladb::cli {

// `reader`: a role to grant read-only access to the copy afterwards ("" for none).
int CmdCopy(const std::string& source, const std::string& destination, const std::string& reader,
            OutputFormat format);

}  // namespace xladb::cli

#endif  // XLADB_CLI_COPY_COMMAND_H_
