// `xladb ingest PATH…`: against xladbd (CmdRemoteIngest: an upload, or a path the server reads itself), or
// offline into a store (CmdOfflineIngest, --db: the files go through the store's writer directly, not
// re-encoded through protobuf). Both print one line per run with its files by verdict, and the first 20 errors.
//
// Exit codes: 0 every file ingested (or unchanged), 1 a file could not be read or the call failed, 2 usage.
#ifndef XLADB_CLI_INGEST_COMMAND_H_
#define XLADB_CLI_INGEST_COMMAND_H_

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "cli/remote_commands.h"

namespace xladb::cli {

struct IngestArgs {
  std::vector<std::string> paths;
  std::string run_name;
  LabelList labels;
  int64_t time_us = -1;
  bool server_path = false;   // IngestPath (the server reads the path) instead of Upload
  bool append = false;        // add to an existing run from another source
};
int CmdRemoteIngest(const ClientOptions& o, const IngestArgs& a);
int CmdOfflineIngest(const std::string& db_path, const IngestArgs& a);

// "N ingested, N unchanged, N not_ingested, N error" (and ", N read again" where a module's other files were
// read again to rebuild it: store/write/run_writer.h).
std::string FormatVerdicts(const std::map<std::string, int64_t>& by_verdict);

}  // namespace xladb::cli

#endif  // XLADB_CLI_INGEST_COMMAND_H_
