// RPC metrics: a gRPC server interceptor that times every call the server answers (health and reflection
// included) and hands its method, status code and duration to DaemonMetrics (xladb_rpc_duration_seconds).
//
// Contract: the factory is given to grpc::ServerBuilder::experimental().SetInterceptorCreators before the
// server starts; `metrics` must outlive the server. A call is timed from the moment gRPC creates its
// interceptors (the call's arrival) to its status being sent; a call that never sends a status (the server
// shut down first) is not counted. Calls to a method that is not one of `services`' (their methods read from
// the protobuf descriptors), gRPC health's or reflection's are counted as service and method "unknown":
// with callback services (gRPC's health service is one) such calls reach interceptors with whatever path the
// client sent, and a label per path would let any client grow the scrape without bound. The labels of every
// known path are made once, with the factory. Thread-safe.
#ifndef XLADB_SERVICE_RPC_METRICS_H_
#define XLADB_SERVICE_RPC_METRICS_H_

#include <grpcpp/support/server_interceptor.h>

#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "service/daemon_metrics.h"

namespace xladb::service {

// `services`: the full names of the protobuf services the server registered ("xladb.v1.QueryService").
std::unique_ptr<grpc::experimental::ServerInterceptorFactoryInterface> RpcMetricsInterceptors(
    DaemonMetrics* metrics, const std::vector<std::string>& services);

// "OK", "NOT_FOUND", … as gRPC spells its status codes.
std::string_view GrpcCodeName(grpc::StatusCode code);

}  // namespace xladb::service

#endif  // XLADB_SERVICE_RPC_METRICS_H_
