#include "cli/remote_commands.h"

#include <grpcpp/grpcpp.h>

#include <chrono>
#include <cstdio>
#include <ctime>
#include <fstream>
#include <map>
#include <memory>
#include <sstream>
#include <string>

#include "cli/call_watchdog.h"
#include "ingest/dump_ingester.h"
#include "ingest/text/visible_text.h"
#include "proto/wire_text.h"
#include "service/query_service.h"
#include "xladb/v1/xladb.grpc.pb.h"

namespace xladb::cli {
namespace {

namespace v1 = xladb::v1;

}  // namespace

std::shared_ptr<grpc::Channel> Connect(const ClientOptions& o) {
  grpc::ChannelArguments args;
  args.SetMaxReceiveMessageSize(service::kMaxMessageBytes);  // the server sends ~1 MiB messages; a large row more
  if (o.tls_ca.empty()) return grpc::CreateCustomChannel(o.addr, grpc::InsecureChannelCredentials(), args);
  std::ifstream in(o.tls_ca);
  std::stringstream ss;
  ss << in.rdbuf();
  grpc::SslCredentialsOptions ssl;
  ssl.pem_root_certs = ss.str();
  return grpc::CreateCustomChannel(o.addr, grpc::SslCredentials(ssl), args);
}

void Prepare(const ClientOptions& o, grpc::ClientContext* ctx, bool deadline) {
  if (!o.token.empty()) ctx->AddMetadata("authorization", "Bearer " + o.token);
  if (deadline) ctx->set_deadline(std::chrono::system_clock::now() + std::chrono::seconds(o.timeout_s));
}

int Fail(const ClientOptions& o, const grpc::Status& st) {
  switch (st.error_code()) {
    case grpc::StatusCode::UNAVAILABLE:
      std::fprintf(stderr, "xladb: cannot reach xladbd at %s: %s\n  is it running? start it with: xladbd --db FILE "
                           "--listen %s (or pass --addr)\n",
                   o.addr.c_str(), st.error_message().c_str(), o.addr.c_str());
      break;
    case grpc::StatusCode::DEADLINE_EXCEEDED:
      std::fprintf(stderr, "xladb: xladbd at %s did not answer in %lld s (--timeout)\n", o.addr.c_str(),
                   static_cast<long long>(o.timeout_s));
      break;
    case grpc::StatusCode::PERMISSION_DENIED:
      std::fprintf(stderr, "xladb: refused: %s\n", ingest::EscapeControlCharacters(st.error_message()).c_str());
      if (st.error_message().find("token") != std::string::npos) {
        std::fprintf(stderr, "  (a server started with --token-file needs --token-file here too)\n");
      }
      break;
    default:  // messages quote names from dumps and requests: shown with their controls escaped
      std::fprintf(stderr, "xladb: %s\n", ingest::EscapeControlCharacters(st.error_message()).c_str());
  }
  return kExitFailure;
}

}  // namespace xladb::cli
