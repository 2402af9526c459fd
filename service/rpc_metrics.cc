#include "service/rpc_metrics.h"

#include <google/protobuf/descriptor.h>

#include <chrono>
#include <map>
#include <memory>
#include <string>

namespace xladb::service {
namespace {

using grpc::experimental::InterceptionHookPoints;

// A method's labels: its service ("xladb.v1.QueryService") and its name ("ListRuns").
struct MethodLabels {
  std::string service, method;
};
const MethodLabels kUnknownMethod{"unknown", "unknown"};

// The paths ("/package.Service/Method") a label may name, split into their labels once, at start.
using KnownMethods = std::map<std::string, MethodLabels, std::less<>>;

void AddKnownMethod(KnownMethods& known, const std::string& service, const std::string& method) {
  known.emplace("/" + service + "/" + method, MethodLabels{service, method});
}

class RpcTimer final : public grpc::experimental::Interceptor {
 public:
  RpcTimer(DaemonMetrics* metrics, const MethodLabels& labels)
      : metrics_(metrics), labels_(labels), start_(std::chrono::steady_clock::now()) {}

  void Intercept(grpc::experimental::InterceptorBatchMethods* methods) override {
    if (methods->QueryInterceptionHookPoint(InterceptionHookPoints::PRE_SEND_STATUS)) {
      const std::chrono::duration<double> took = std::chrono::steady_clock::now() - start_;
      metrics_->ObserveRpc(labels_.service, labels_.method, GrpcCodeName(methods->GetSendStatus().error_code()),
                           took.count());
    }
    methods->Proceed();
  }

 private:
  DaemonMetrics* metrics_;
  const MethodLabels& labels_;  // in the factory's KnownMethods, which outlives every call
  std::chrono::steady_clock::time_point start_;
};

class RpcTimerFactory final : public grpc::experimental::ServerInterceptorFactoryInterface {
 public:
  RpcTimerFactory(DaemonMetrics* metrics, KnownMethods known) : metrics_(metrics), known_(std::move(known)) {}
  grpc::experimental::Interceptor* CreateServerInterceptor(grpc::experimental::ServerRpcInfo* info) override {
    const char* path = info->method();
    const auto known = path == nullptr ? known_.end() : known_.find(std::string_view(path));
    return new RpcTimer(metrics_, known == known_.end() ? kUnknownMethod : known->second);  // gRPC owns it
  }

 private:
  DaemonMetrics* metrics_;
  const KnownMethods known_;
};

}  // namespace

std::unique_ptr<grpc::experimental::ServerInterceptorFactoryInterface> RpcMetricsInterceptors(
    DaemonMetrics* metrics, const std::vector<std::string>& services) {
  // gRPC's own services, served by every xladbd (grpc::EnableDefaultHealthCheckService, reflection).
  KnownMethods known;
  AddKnownMethod(known, "grpc.health.v1.Health", "Check");
  AddKnownMethod(known, "grpc.health.v1.Health", "Watch");
  AddKnownMethod(known, "grpc.reflection.v1alpha.ServerReflection", "ServerReflectionInfo");
  for (const std::string& name : services) {
    const auto* service = google::protobuf::DescriptorPool::generated_pool()->FindServiceByName(name);
    for (int i = 0; service != nullptr && i < service->method_count(); ++i) {
      AddKnownMethod(known, name, service->method(i)->name());
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
