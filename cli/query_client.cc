#include "cli/query_client.h"

#include <cstdio>
#include <utility>

#include "ingest/text/visible_text.h"
#include "service/access_policy.h"
#include "service/query_service.h"
#include "store/backend/database.h"

namespace xladb::cli {

// The daemon's QueryService, served to this process only: no port, an access policy without tokens or roots,
// and limits that bound nothing (the offline user holds the store already).
struct QueryClient::InProcessServer {
  service::AccessPolicy access;
  service::QueryServiceImpl service;
  std::unique_ptr<grpc::Server> server;

  InProcessServer(service::AccessPolicy policy, const std::string& db_path)
      : access(std::move(policy)), service(db_path, db_path, &access, Unbounded()) {}
  ~InProcessServer() {
    if (server) server->Shutdown();
  }

  static service::QueryLimits Unbounded() {
    service::QueryLimits limits;
    limits.max_rows = limits.max_bytes = limits.max_value_bytes = limits.max_row_bytes = limits.timeout_ms = -1;
    limits.max_columns = -1;
    return limits;
  }
};

QueryClient::QueryClient(ClientOptions options, std::string where, std::unique_ptr<InProcessServer> server,
                         std::shared_ptr<grpc::Channel> channel)
    : options_(std::move(options)),
      where_(std::move(where)),
      server_(std::move(server)),
      stub_(v1::QueryService::NewStub(std::move(channel))) {}

QueryClient::~QueryClient() {
  stub_.reset();  // before the server it calls
  server_.reset();
}

std::unique_ptr<QueryClient> QueryClient::Remote(const ClientOptions& options) {
  return std::unique_ptr<QueryClient>(new QueryClient(options, options.addr, nullptr, Connect(options)));
}

StatusOr<std::unique_ptr<QueryClient>> QueryClient::Offline(const std::string& db_path, const ClientOptions& options) {
  {  // Fail now, with the store's own message, rather than on the first call.
    auto db = store::Database::Open(db_path, store::Database::Mode::kReadOnly);
    if (!db.ok()) return db.status();
  }
  auto access = service::AccessPolicy::Create("", {});
  if (!access.ok()) return access.status();
  auto server = std::make_unique<InProcessServer>(std::move(access.value()), db_path);
  grpc::ServerBuilder builder;
  builder.SetMaxReceiveMessageSize(service::kMaxMessageBytes);
  builder.RegisterService(&server->service);
  server->server = builder.BuildAndStart();
  if (!server->server) return Status::Internal("could not start the in-process query service");
  grpc::ChannelArguments args;
  args.SetMaxReceiveMessageSize(-1);  // a row is as large as the store holds it: no server limit bounds it here
  auto channel = server->server->InProcessChannel(args);
  ClientOptions offline = options;
  offline.token.clear();
  return std::unique_ptr<QueryClient>(new QueryClient(offline, db_path, std::move(server), std::move(channel)));
}

void QueryClient::Prepare(grpc::ClientContext* context) const {
  if (server_) return;  // in process: no token, and no deadline (nothing to wait for but the store)
  cli::Prepare(options_, context);
}

grpc::Status QueryClient::Report(const v1::ReportRequest& request, std::string* html,
                                 std::vector<std::string>* notes) {
  grpc::ClientContext context;
  Prepare(&context);
  auto reader = stub_->Report(&context, request);
  v1::ReportChunk chunk;
  bool last = false;
  while (reader->Read(&chunk)) {
    html->append(chunk.html());
    notes->insert(notes->end(), chunk.notes().begin(), chunk.notes().end());
    last = chunk.last();
  }
  grpc::Status st = reader->Finish();
  if (st.ok() && !last) return {grpc::StatusCode::DATA_LOSS, "the report was cut short (no last chunk)"};
  return st;
}

int QueryClient::Fail(const grpc::Status& status) const {
  if (!server_) return cli::Fail(options_, status);
  std::fprintf(stderr, "xladb: %s\n", ingest::EscapeControlCharacters(status.error_message()).c_str());
  return kExitFailure;
}

int FailedCall(const QueryClient& client, const grpc::Status& status, int otherwise, bool not_found_is_usage) {
  client.Fail(status);
  const bool usage = status.error_code() == grpc::StatusCode::INVALID_ARGUMENT ||
                     (not_found_is_usage && status.error_code() == grpc::StatusCode::NOT_FOUND);
  return usage ? kExitUsage : otherwise;
}

}  // namespace xladb::cli
