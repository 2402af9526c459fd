// QueryBackend: where xladb's query commands get their answers. The remote backend calls xladbd over gRPC
// (with the token and deadline of ClientOptions); the offline backend (--db FILE) opens the SQLite file
// read-only and answers in-process with the daemon's own code (service/query_answers.h), so the two print
// the same thing. Both report errors as grpc::Status with the server's codes and messages.
//
// Not thread-safe; one command per process.
#ifndef XLADB_CLI_QUERY_BACKEND_H_
#define XLADB_CLI_QUERY_BACKEND_H_

#include <grpcpp/grpcpp.h>

#include <memory>
#include <string>
#include <vector>

#include "cli/remote_commands.h"
#include "base/status.h"
#include "xladb/v1/xladb.pb.h"

namespace xladb::cli {

class QueryBackend {
 public:
  virtual ~QueryBackend() = default;
  virtual grpc::Status ListRuns(const v1::ListRunsRequest& req, v1::ListRunsResponse* resp) = 0;
  virtual grpc::Status ListModules(const v1::ListModulesRequest& req, v1::ListModulesResponse* resp) = 0;
  virtual grpc::Status PeakMemoryTrend(const v1::PeakMemoryTrendRequest& req, v1::PeakMemoryTrendResponse* resp) = 0;
  virtual grpc::Status SpillRates(const v1::SpillRatesRequest& req, v1::SpillRatesResponse* resp) = 0;
  virtual grpc::Status TopBuffers(const v1::TopBuffersRequest& req, v1::TopBuffersResponse* resp) = 0;
  virtual grpc::Status DiffRuns(const v1::DiffRunsRequest& req, v1::DiffRunsResponse* resp) = 0;
  virtual grpc::Status CheckRun(const v1::CheckRunRequest& req, v1::CheckRunResponse* resp) = 0;
  virtual grpc::Status ListRetraces(const v1::ListRetracesRequest& req, v1::ListRetracesResponse* resp) = 0;
  virtual grpc::Status ListJobs(const v1::ListJobsRequest& req, v1::ListJobsResponse* resp) = 0;
  virtual grpc::Status OomReports(const v1::OomReportsRequest& req, v1::OomReportsResponse* resp) = 0;
  virtual grpc::Status ListChanges(const v1::ListChangesRequest& req, v1::ListChangesResponse* resp) = 0;
  // The report page, whole (the remote backend joins the stream and checks that it ended with `last`), and
  // the notes that came with it (how a module name was resolved).
  virtual grpc::Status Report(const v1::ReportRequest& req, std::string* html, std::vector<std::string>* notes) = 0;
  // Prints what went wrong for a failed call on stderr; returns kExitFailure.
  virtual int Fail(const grpc::Status& status) = 0;
};

// A failed call, said (QueryBackend::Fail) and turned into the command's exit code: kExitUsage when the server
// refused the request as INVALID_ARGUMENT (and NOT_FOUND where `not_found_is_usage`: a name the user typed,
// such as a baseline), else `otherwise`.
int FailedCall(QueryBackend& backend, const grpc::Status& status, int otherwise, bool not_found_is_usage = false);

std::unique_ptr<QueryBackend> NewRemoteBackend(const ClientOptions& options);
// kIoError / kFailedPrecondition when the file cannot be opened read-only at this schema version.
StatusOr<std::unique_ptr<QueryBackend>> NewOfflineBackend(const std::string& db_path);

}  // namespace xladb::cli

#endif  // XLADB_CLI_QUERY_BACKEND_H_
