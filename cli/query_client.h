// QueryClient: the QueryService stub every query command calls, and the one query path of the CLI. Remote, the
// stub talks to xladbd over its channel (with the token and deadline of ClientOptions). Offline (--db FILE or a
// postgresql:// URI), the same stub talks to the daemon's own QueryServiceImpl served in this process through
// gRPC's in-process channel, so online and offline answers are equal by construction: the same handlers, the
// same protobuf, the same errors. Offline, the SQL endpoint runs without the daemon's limits (rows, bytes,
// time): the user reads a store they already hold.
//
// Errors come back as grpc::Status with the server's codes and messages; Fail() says them on stderr.
// Not thread-safe; one command per process.
#ifndef XLADB_CLI_QUERY_CLIENT_H_
#define XLADB_CLI_QUERY_CLIENT_H_

#include <grpcpp/grpcpp.h>

#include <memory>
#include <string>
#include <vector>

#include "base/status.h"
#include "cli/remote_commands.h"
#include "xladb/v1/xladb.grpc.pb.h"

namespace xladb::cli {

class QueryClient {
 public:
  using Stub = v1::QueryService::Stub;

  // xladbd at options.addr.
  static std::unique_ptr<QueryClient> Remote(const ClientOptions& options);
  // The store at `db_path`, served in process. kIoError / kFailedPrecondition when it cannot be opened
  // read-only at this schema version (checked here, before any call).
  [[nodiscard]] static StatusOr<std::unique_ptr<QueryClient>> Offline(const std::string& db_path,
                                                                      const ClientOptions& options);
  ~QueryClient();

  // One unary call, e.g. Call(&Stub::ListRuns, request, &response).
  template <typename Request, typename Response>
  grpc::Status Call(grpc::Status (Stub::*rpc)(grpc::ClientContext*, const Request&, Response*),
                    const Request& request, Response* response) {
    grpc::ClientContext context;
    Prepare(&context);
    return (stub_.get()->*rpc)(&context, request, response);
  }

  // The report page, whole (the stream joined and checked to end with `last`), and the notes that came with
  // it (how a module name was resolved).
  grpc::Status Report(const v1::ReportRequest& request, std::string* html, std::vector<std::string>* notes);

  // The stub itself and a context set up for it, for streaming calls (Query).
  Stub& stub() { return *stub_; }
  void Prepare(grpc::ClientContext* context) const;

  // Prints what went wrong for a failed call on stderr (remote: naming the server and what to do); returns
  // kExitFailure.
  int Fail(const grpc::Status& status) const;
  // Where answers come from, for messages: the server's address, or the store's path.
  const std::string& where() const { return where_; }
  const ClientOptions& options() const { return options_; }

 private:
  struct InProcessServer;
  QueryClient(ClientOptions options, std::string where, std::unique_ptr<InProcessServer> server,
              std::shared_ptr<grpc::Channel> channel);

  ClientOptions options_;
  std::string where_;
  std::unique_ptr<InProcessServer> server_;  // offline only; outlives the stub
  std::unique_ptr<Stub> stub_;
};

// A failed call, said (QueryClient::Fail) and turned into the command's exit code: kExitUsage when the server
// refused the request as INVALID_ARGUMENT (and NOT_FOUND where `not_found_is_usage`: a name the user typed,
// such as a baseline), else `otherwise`.
int FailedCall(const QueryClient& client, const grpc::Status& status, int otherwise, bool not_found_is_usage = false);

}  // namespace xladb::cli

#endif  // XLADB_CLI_QUERY_CLIENT_H_
