// xladbd: the xladb daemon. Serves the gRPC API on a local SQLite file, ingests what clients send or point
// at, and watches artifact folders.
//
//   xladbd --db FILE [--listen 127.0.0.1:50051] [--watch DIR]... [--allow-root DIR]... [--quiet-seconds N]
//          [--token-file F] [--tls-cert F --tls-key F] [--log-level info]
//
// SIGTERM / SIGINT: stop accepting, let the ingest in hand finish its file, exit 0. Jobs not finished are
// kept in the database and resumed on the next start; watched folders are caught up on start.
#include <signal.h>

#include <CLI/CLI.hpp>
#include <grpcpp/ext/proto_server_reflection_plugin.h>
#include <grpcpp/grpcpp.h>
#include <grpcpp/health_check_service_interface.h>

#include <atomic>
#include <chrono>
#include <cstdio>
#include <fstream>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "service/access_policy.h"
#include "service/ingest_queue.h"
#include "service/ingest_service.h"
#include "service/query_service.h"
#include "service/run_folder_watcher.h"

namespace {

enum class LogLevel { kError = 0, kWarn = 1, kInfo = 2, kDebug = 3 };
LogLevel g_log_level = LogLevel::kInfo;

template <typename... Args>
void Log(LogLevel level, const char* fmt, Args... args) {
  if (level > g_log_level) return;
  static const char* kNames[] = {"error", "warn", "info", "debug"};
  std::fprintf(stderr, "xladbd %s: ", kNames[static_cast<int>(level)]);
  std::fprintf(stderr, fmt, args...);
  std::fputc('\n', stderr);
}

std::string ReadWholeFile(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

}  // namespace

int main(int argc, char** argv) {
  using namespace xladb;
  CLI::App app{"xladbd: the xladb daemon (gRPC over a local SQLite database)"};
  std::string db_path, listen = "127.0.0.1:50051", token_file, tls_cert, tls_key, log_level = "info", spool_dir;
  std::vector<std::string> watch_dirs, allow_roots;
  double quiet_seconds = 5;
  int64_t max_upload_bytes = int64_t{16} << 30, max_upload_files = 100000;
  int64_t query_timeout_ms = 30000, query_max_rows = 1000000;
  app.add_option("--db", db_path, "SQLite database file (created if missing)")->required();
  app.add_option("--listen", listen, "Address to serve on (host:port; port 0 picks a free one)");
  app.add_option("--watch", watch_dirs, "Folder whose subfolders (or archives) are runs to ingest (repeatable)");
  app.add_option("--allow-root", allow_roots, "Folder under which IngestPath may read (repeatable)");
  app.add_option("--quiet-seconds", quiet_seconds, "A watched run is ingested after this long without changes");
  app.add_option("--token-file", token_file, "Require 'authorization: Bearer <token>' with the token in this file");
  app.add_option("--tls-cert", tls_cert, "Serve TLS with this certificate (PEM); needs --tls-key");
  app.add_option("--tls-key", tls_key, "Private key (PEM) for --tls-cert");
  app.add_option("--spool-dir", spool_dir, "Where uploads are staged (default: <db>.uploads)");
  app.add_option("--max-upload-bytes", max_upload_bytes, "Largest accepted upload");
  app.add_option("--max-upload-files", max_upload_files, "Most files in one upload");
  app.add_option("--query-timeout-ms", query_timeout_ms, "Time limit of one SQL Query");
  app.add_option("--query-max-rows", query_max_rows, "Most rows one SQL Query returns");
  app.add_option("--log-level", log_level, "error, warn, info or debug")
      ->check(CLI::IsMember({"error", "warn", "info", "debug"}));
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    int rc = app.exit(e);
    return rc == 0 ? 0 : 2;
  }
  g_log_level = log_level == "error" ? LogLevel::kError
                : log_level == "warn" ? LogLevel::kWarn
                : log_level == "debug" ? LogLevel::kDebug
                                       : LogLevel::kInfo;
  if (tls_cert.empty() != tls_key.empty()) {
    std::fprintf(stderr, "xladbd: --tls-cert and --tls-key go together\n");
    return 2;
  }
  if (spool_dir.empty()) spool_dir = db_path + ".uploads";

  // Signals are taken by one thread with sigwait; block them everywhere else before any thread starts.
  sigset_t signals;
  sigemptyset(&signals);
  sigaddset(&signals, SIGTERM);
  sigaddset(&signals, SIGINT);
  pthread_sigmask(SIG_BLOCK, &signals, nullptr);

  std::string token;
  if (!token_file.empty()) {
    auto t = service::ReadTokenFile(token_file);
    if (!t.ok()) {
      std::fprintf(stderr, "xladbd: %s\n", t.status().message().c_str());
      return 2;
    }
    token = t.value();
  }
  auto access = service::AccessPolicy::Create(token, allow_roots);
  if (!access.ok()) {
    std::fprintf(stderr, "xladbd: %s\n", access.status().message().c_str());
    return 2;
  }
  auto queue = service::IngestQueue::Start(db_path);
  if (!queue.ok()) {
    std::fprintf(stderr, "xladbd: %s\n", queue.status().message().c_str());
    return 1;
  }

  service::QueryServiceImpl query_service(db_path, &access.value(),
                                          service::QueryLimits{query_max_rows, int64_t{1} << 30, query_timeout_ms});
  service::IngestServiceImpl ingest_service(queue.value().get(), &access.value(), spool_dir,
                                            service::UploadLimits{max_upload_bytes, max_upload_files});

  grpc::EnableDefaultHealthCheckService(true);
  grpc::reflection::InitProtoReflectionServerBuilderPlugin();
  grpc::ServerBuilder builder;
  std::shared_ptr<grpc::ServerCredentials> creds = grpc::InsecureServerCredentials();
  if (!tls_cert.empty()) {
    grpc::SslServerCredentialsOptions ssl;
    ssl.pem_key_cert_pairs.push_back({ReadWholeFile(tls_key), ReadWholeFile(tls_cert)});
    creds = grpc::SslServerCredentials(ssl);
  }
  int port = 0;
  builder.AddListeningPort(listen, creds, &port);
  builder.SetMaxReceiveMessageSize(64 << 20);
  builder.RegisterService(&query_service);
  builder.RegisterService(&ingest_service);
  std::unique_ptr<grpc::Server> server = builder.BuildAndStart();
  if (!server || port == 0) {
    std::fprintf(stderr, "xladbd: cannot listen on %s (in use, or not a host:port?)\n", listen.c_str());
    queue.value()->Shutdown();
    return 1;
  }
  std::string host = listen.substr(0, listen.rfind(':'));
  std::printf("xladbd listening on %s:%d (database %s)\n", host.c_str(), port, db_path.c_str());
  std::fflush(stdout);

  std::unique_ptr<service::RunFolderWatcher> watcher;
  if (!watch_dirs.empty()) {
    service::WatchOptions wo;
    wo.roots = watch_dirs;
    wo.quiet_period = std::chrono::milliseconds(static_cast<int64_t>(quiet_seconds * 1000));
    auto* q = queue.value().get();
    auto w = service::RunFolderWatcher::Start(wo, [q](const std::string& path, const std::string& name) {
      auto id = q->Submit(service::IngestRequest{"watch", path, name, {}, -1});
      if (id.ok()) Log(LogLevel::kInfo, "run %s ready: queued %s", name.c_str(), id.value().c_str());
    });
    if (!w.ok()) {
      std::fprintf(stderr, "xladbd: %s\n", w.status().message().c_str());
      server->Shutdown();
      queue.value()->Shutdown();
      return 2;
    }
    watcher = std::move(w.value());
    for (const auto& d : watch_dirs) Log(LogLevel::kInfo, "watching %s", d.c_str());
  }

  int sig = 0;
  sigwait(&signals, &sig);
  Log(LogLevel::kInfo, "signal %d: shutting down (finishing the file in hand)", sig);
  if (watcher) watcher->Stop();
  queue.value()->Shutdown();  // the writer stops after its current file; unfinished jobs resume on restart
  server->Shutdown(std::chrono::system_clock::now() + std::chrono::seconds(5));
  Log(LogLevel::kInfo, "stopped");
  return 0;
}
