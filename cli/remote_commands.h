// The xladb subcommands that only talk to xladbd over gRPC (uploads and streamed SQL; the query commands,
// which also work offline, are in cli/query_commands.h), and the connection set-up they share. Each returns the process exit code (0 success,
// 1 failure, 2 usage) and prints its result with ResultPrinter, errors to stderr naming what went wrong and
// what to do. Every call has a deadline (ClientOptions::timeout_s): a server that does not answer ends the
// command with "xladbd at ADDR did not answer in N s" and exit 1, never a hang. Uploads are bounded by
// inactivity instead (no bytes accepted and no job progress for timeout_s), not by their total time.
// Not thread-safe; one command per process.
#ifndef XLADB_CLI_REMOTE_COMMANDS_H_
#define XLADB_CLI_REMOTE_COMMANDS_H_

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include <grpcpp/grpcpp.h>

#include <memory>
#include <optional>

#include "cli/output.h"

namespace xladb::cli {

inline constexpr int kExitOk = 0;
inline constexpr int kExitFailure = 1;
inline constexpr int kExitUsage = 2;

using LabelList = std::vector<std::pair<std::string, std::string>>;

struct ClientOptions {
  std::string addr = "127.0.0.1:50051";
  std::string token;          // bearer token ("" = none)
  std::string tls_ca;         // PEM file of the CA to trust; "" = plaintext
  OutputFormat format = OutputFormat::kTable;
  int64_t timeout_s = 30;     // deadline of each call; for uploads, the longest silence
};

// Connection and call set-up shared by the commands (remote_commands.cc).
std::shared_ptr<grpc::Channel> Connect(const ClientOptions& o);
// Sets the token, and the deadline unless `deadline` is false (uploads watch for inactivity instead).
void Prepare(const ClientOptions& o, grpc::ClientContext* ctx, bool deadline = true);
// Prints what went wrong for a failed call, naming the server and what to do; returns kExitFailure.
int Fail(const ClientOptions& o, const grpc::Status& st);

}  // namespace xladb::cli

#endif  // XLADB_CLI_REMOTE_COMMANDS_H_
