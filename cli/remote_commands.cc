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
#include "xladb/v1/xladb.grpc.pb.h"

namespace xladb::cli {
namespace {

namespace v1 = xladb::v1;

}  // namespace

std::shared_ptr<grpc::Channel> Connect(const ClientOptions& o) {
  grpc::ChannelArguments args;
  args.SetMaxReceiveMessageSize(64 << 20);  // the server sends ~1 MiB messages; one large row may be more
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

int CmdRemoteSql(const ClientOptions& o, const std::string& sql, int64_t max_rows) {
  v1::QueryRequest req;
  req.set_sql(sql);
  req.set_max_rows(max_rows);
  grpc::ClientContext ctx;
  Prepare(o, &ctx);
  auto reader = v1::QueryService::NewStub(Connect(o))->Query(&ctx, req);
  v1::QueryResponse msg;
  ResultPrinter p(o.format, stdout);
  bool columns_set = false, truncated = false, last_seen = false;
  std::vector<Cell> cells;
  while (reader->Read(&msg)) {
    if (!columns_set) {
      std::vector<std::string> names;
      for (const auto& c : msg.columns()) names.push_back(c.name());
      p.SetColumns(std::move(names));
      columns_set = true;
    }
    for (const auto& row : msg.rows()) {
      cells.resize(static_cast<size_t>(row.values_size()));
      for (int i = 0; i < row.values_size(); ++i) {
        const auto& v = row.values(i);
        Cell& c = cells[static_cast<size_t>(i)];
        c.is_null = v.value_case() == v1::Value::VALUE_NOT_SET;
        c.is_number = v.value_case() == v1::Value::kIntValue || v.value_case() == v1::Value::kRealValue;
        switch (v.value_case()) {
          case v1::Value::kIntValue: c.text = std::to_string(v.int_value()); break;
          case v1::Value::kRealValue: {
            char buf[32];
            std::snprintf(buf, sizeof buf, "%.17g", v.real_value());
            c.text = buf;
            break;
          }
          case v1::Value::kTextValue: c.text = v.text_value(); break;
          case v1::Value::kBytesValue: c.text = wire::EscapeInvalidUtf8(v.bytes_value()); break;
          case v1::Value::kTextBytesValue: c.text = wire::EscapeInvalidUtf8(v.text_bytes_value()); break;
          default: c.text.clear();
        }
      }
      p.AddRow(cells);
    }
    truncated = truncated || msg.truncated();
    last_seen = last_seen || msg.last();
  }
  // A stream that ends without its last message either failed on the server (Finish brings its status at
  // once) or was cut here (a message this client could not read) while the server goes on sending: then
  // Finish would wait for it. Cancel the call if Finish has not returned shortly.
  bool cancelled_here = false;
  grpc::Status st;
  if (last_seen) {
    st = reader->Finish();
  } else {
    InactivityWatchdog watchdog(&ctx, std::chrono::seconds(2));
    st = reader->Finish();
    cancelled_here = watchdog.fired();
  }
  if (cancelled_here) {
    std::fprintf(stderr, "xladb: the answer from xladbd at %s was cut short after %lld rows (a message could "
                         "not be read); nothing more was printed\n",
                 o.addr.c_str(), static_cast<long long>(p.rows()));
    return kExitFailure;
  }
  if (!st.ok()) return Fail(o, st);
  if (!last_seen) {
    std::fprintf(stderr, "xladb: the answer from xladbd at %s ended without its last message after %lld rows\n",
                 o.addr.c_str(), static_cast<long long>(p.rows()));
    return kExitFailure;
  }
  if (!columns_set) p.SetColumns({});
  p.Finish();
  if (truncated) std::fprintf(stderr, "xladb: result truncated at %lld rows (raise --max-rows)\n",
                              static_cast<long long>(p.rows()));
  return kExitOk;
}

}  // namespace xladb::cli
