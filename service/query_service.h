// QueryServiceImpl: the xladb.v1.QueryService handlers. Each one checks access, opens (or reuses) a
// read-only connection for the calling thread, calls the store query and translates the result to proto.
//
// Contract
//   * Read-only: every call uses a connection opened SQLITE_OPEN_READONLY; Query additionally refuses
//     statements that would write and stops at the configured row, byte and time limits.
//   * Errors map to gRPC codes: kNotFound → NOT_FOUND, kInvalidArgument → INVALID_ARGUMENT,
//     kPermissionDenied → PERMISSION_DENIED, kResourceExhausted → RESOURCE_EXHAUSTED, others → INTERNAL.
//   * Thread-safe: gRPC calls handlers concurrently; connections are per thread.
#ifndef XLADB_SERVICE_QUERY_SERVICE_H_
#define XLADB_SERVICE_QUERY_SERVICE_H_

#include <cstdint>
#include <string>

#include <grpcpp/grpcpp.h>

#include "ingest/status.h"
#include "service/access_policy.h"
#include "store/database.h"
#include "xladb/v1/xladb.grpc.pb.h"

namespace xladb::service {

struct QueryLimits {
  int64_t max_rows = 1000000;          // rows per Query call
  int64_t max_bytes = int64_t{1} << 30;  // result bytes per Query call
  int64_t timeout_ms = 30000;          // per Query call
};

// Maps a Status to a grpc::Status with the same message.
grpc::Status ToGrpc(const Status& status);

// The calling thread's read-only connection to `db_path` (opened on first use).
StatusOr<store::Database*> ThreadReadConnection(const std::string& db_path);

class QueryServiceImpl final : public xladb::v1::QueryService::Service {
 public:
  QueryServiceImpl(std::string db_path, const AccessPolicy* access, QueryLimits limits)
      : db_path_(std::move(db_path)), access_(access), limits_(limits) {}

  grpc::Status ListRuns(grpc::ServerContext*, const v1::ListRunsRequest*, v1::ListRunsResponse*) override;
  grpc::Status GetRun(grpc::ServerContext*, const v1::GetRunRequest*, v1::Run*) override;
  grpc::Status ListModules(grpc::ServerContext*, const v1::ListModulesRequest*, v1::ListModulesResponse*) override;
  grpc::Status PeakMemoryTrend(grpc::ServerContext*, const v1::PeakMemoryTrendRequest*,
                               v1::PeakMemoryTrendResponse*) override;
  grpc::Status SpillRates(grpc::ServerContext*, const v1::SpillRatesRequest*, v1::SpillRatesResponse*) override;
  grpc::Status TopBuffers(grpc::ServerContext*, const v1::TopBuffersRequest*, v1::TopBuffersResponse*) override;
  grpc::Status DiffRuns(grpc::ServerContext*, const v1::DiffRunsRequest*, v1::DiffRunsResponse*) override;
  grpc::Status Query(grpc::ServerContext*, const v1::QueryRequest*,
                     grpc::ServerWriter<v1::QueryResponse>*) override;

 private:
  // Checks the token, then returns this thread's read-only connection.
  StatusOr<store::Database*> Begin(grpc::ServerContext* context);

  std::string db_path_;
  const AccessPolicy* access_;
  QueryLimits limits_;
};

// The `authorization` metadata of a call, or "".
std::string AuthorizationHeader(const grpc::ServerContext* context);

}  // namespace xladb::service

#endif  // XLADB_SERVICE_QUERY_SERVICE_H_
