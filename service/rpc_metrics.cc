#include "service/rpc_metrics.h"

#include <google/protobuf/descriptor.h>

#include <chrono>
#include <memory>
#include <set>
#include <string>

namespace xladb::service {
namespace {

using grpc::experimental::InterceptionHookPoints;

// The paths ("/package.Service/Method") a label may name; any other is "/unknown/unknown".
using KnownMethods = std::set<std::string, std::less<>>;

class RpcTimer final : public grpc::experimental::Interceptor {
 public:
  RpcTimer(DaemonMetrics* metrics, const KnownMethods& known, const char* method)
      : metrics_(metrics),
        method_(method != nullptr && known.count(std::string_view(method)) > 0 ? method : "/unknown/unknown"),
        start_(std::chrono::steady_clock::now()) {}

  void Intercept(grpc::experimental::InterceptorBatchMethods* methods) override {
    if (methods->QueryInterceptionHookPoint(InterceptionHookPoints::PRE_SEND_STATUS)) {
      const std::chrono::duration<double> took = std::chrono::steady_clock::now() - start_;
      metrics_->ObserveRpc(method_, GrpcCodeName(methods->GetSendStatus().error_code()), took.count());
    }
    methods->Proceed();
  }

 private:
  DaemonMetrics* metrics_;
  std::string method_;
  std::chrono::steady_clock::time_point start_;
};

class RpcTimerFactory final : public grpc::experimental::ServerInterceptorFactoryInterface {
 public:
  RpcTimerFactory(DaemonMetrics* metrics, KnownMethods known) : metrics_(metrics), known_(std::move(known)) {}
  grpc::experimental::Interceptor* CreateServerInterceptor(grpc::experimental::ServerRpcInfo* info) override {
    return new RpcTimer(metrics_, known_, info->method());  // gRPC owns it for the call
  }

 private:
  DaemonMetrics* metrics_;
  const KnownMethods known_;
};

}  // namespace

std::unique_ptr<grpc::experimental::ServerInterceptorFactoryInterface> RpcMetricsInterceptors(
    DaemonMetrics* metrics, const std::vector<std::string>& services) {
  // gRPC's own services, served by every xladbd (grpc::EnableDefaultHealthCheckService, reflection).
  KnownMethods known = {"/grpc.health.v1.Health/Check", "/grpc.health.v1.Health/Watch",
                        "/grpc.reflection.v1alpha.ServerReflection/ServerReflectionInfo"};
  for (const std::string& name : services) {
    const auto* service = google::protobuf::DescriptorPool::generated_pool()->FindServiceByName(name);
    for (int i = 0; service != nullptr && i < service->method_count(); ++i) {
      known.insert("/" + name + "/" + service->method(i)->name());
    }
  }
  return std::make_unique<RpcTimerFactory>(metrics, std::move(known));
}

std::string_view GrpcCodeName(grpc::StatusCode code) {
  switch (code) {
    case grpc::StatusCode::OK: return "OK";
    case grpc::StatusCode::CANCELLED: return "CANCELLED";
    case grpc::StatusCode::UNKNOWN: return "UNKNOWN";
    case grpc::StatusCode::INVALID_ARGUMENT: return "INVALID_ARGUMENT";
    case grpc::StatusCode::DEADLINE_EXCEEDED: return "DEADLINE_EXCEEDED";
    case grpc::StatusCode::NOT_FOUND: return "NOT_FOUND";
    case grpc::StatusCode::ALREADY_EXISTS: return "ALREADY_EXISTS";
    case grpc::StatusCode::PERMISSION_DENIED: return "PERMISSION_DENIED";
    case grpc::StatusCode::RESOURCE_EXHAUSTED: return "RESOURCE_EXHAUSTED";
    case grpc::StatusCode::FAILED_PRECONDITION: return "FAILED_PRECONDITION";
    case grpc::StatusCode::ABORTED: return "ABORTED";
    case grpc::StatusCode::OUT_OF_RANGE: return "OUT_OF_RANGE";
    case grpc::StatusCode::UNIMPLEMENTED: return "UNIMPLEMENTED";
    case grpc::StatusCode::INTERNAL: return "INTERNAL";
    case grpc::StatusCode::UNAVAILABLE: return "UNAVAILABLE";
    case grpc::StatusCode::DATA_LOSS: return "DATA_LOSS";
    case grpc::StatusCode::UNAUTHENTICATED: return "UNAUTHENTICATED";
    default: return "UNKNOWN";
  }
}

}  // namespace xladb::service
