// RPC metrics: a gRPC server interceptor that times every call the server answers (health and reflection
// included) and hands its method, status code and duration to DaemonMetrics (xladb_rpc_duration_seconds).
//
// Contract: the factory is given to grpc::ServerBuilder::experimental().SetInterceptorCreators before the
// server starts; `metrics` must outlive the server. A call is timed from the moment gRPC creates its
// interceptors (the call's arrival) to its status being sent; a call that never sends a status (the server
// shut down first) is not counted. Methods the server does not implement never reach interceptors, so the
// method label only takes names the server registered. Thread-safe.
#ifndef XLADB_SERVICE_RPC_METRICS_H_
#define XLADB_SERVICE_RPC_METRICS_H_

#include <grpcpp/support/server_interceptor.h>

#include <memory>
#include <string_view>

#include "service/daemon_metrics.h"

namespace xladb::service {

std::unique_ptr<grpc::experimental::ServerInterceptorFactoryInterface> RpcMetricsInterceptors(DaemonMetrics* metrics);

// "OK", "NOT_FOUND", … as gRPC spells its status codes.
std::string_view GrpcCodeName(grpc::StatusCode code);

}  // namespace xladb::service

#endif  // XLADB_SERVICE_RPC_METRICS_H_
