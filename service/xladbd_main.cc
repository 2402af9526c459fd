// xladbd: the xladb daemon. Serves the gRPC API on a local SQLite file (or a PostgreSQL store: --db
// postgresql://…, with --spool-dir), ingests what clients send or point at, and watches artifact folders.
//
//   xladbd --db FILE|URI [--listen 127.0.0.1:50051] [--watch DIR]... [--allow-root DIR]... [--quiet-seconds N]
//          [--http 127.0.0.1:8080] [--metrics-listen 127.0.0.1:9464] [--token-file F] [--admin-token-file F]
//          [--tls-cert F --tls-key F]
//          [--insecure-listen]
//          [--log-level info] [limits…]
//   (`xladbd --help` lists every option with its default.)
//
// The port is ours or we exit: port sharing (SO_REUSEPORT) is off, so a second daemon on a busy port exits 1
// with "address in use" instead of splitting the clients between two databases. A --listen address that is
// not loopback needs both TLS and a token, unless --insecure-listen says otherwise (logged as a warning).
//
// --prune-detail-days N prunes old runs' detail at start and daily (store/admin/run_lifecycle.h PruneDetail).
// Roles: --token-file is the read token (queries, pages, SQL); --admin-token-file, when given, is the only
// token that may write (upload, ingest a server path, label, delete, prune). With --token-file alone its token
// may do everything (service/access_policy.h).
// --http ADDR serves the report pages read-only (service/http_pages.h) under the same rules: loopback, or TLS
// and a token. Prometheus metrics (service/daemon_metrics.h) are at /metrics there, and with --metrics-listen
// ADDR on an address of their own (only /metrics and /healthz), under the same rules.
//
// SIGTERM / SIGINT: stop accepting, let the ingest in hand finish its file, exit 0. Jobs not finished are
// kept in the database and resumed on the next start; watched folders are caught up on start.
#include <arpa/inet.h>
#include <netdb.h>
#include <netinet/in.h>
#include <signal.h>
#include <sys/socket.h>
#include <unistd.h>

#include <CLI/CLI.hpp>
#include <grpcpp/ext/proto_server_reflection_plugin.h>
#include <grpcpp/grpcpp.h>
#include <grpcpp/health_check_service_interface.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <optional>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "base/build_version.h"
#include "base/timer_thread.h"
#include "ingest/text/visible_text.h"
#include "service/access_policy.h"
#include "service/daemon_metrics.h"
#include "service/http_pages.h"
#include "service/ingest_queue.h"
#include "service/ingest_service.h"
#include "service/query_service.h"
#include "service/rpc_metrics.h"
#include "service/run_folder_watcher.h"
#include "store/backend/database.h"
#include "store/schema/schema_migrations.h"
#include "store/postgres/postgres_connection.h"
#include "store/postgres/postgres_sql_query.h"
#include "store/sqlite/query_temp_storage.h"

namespace {

enum class LogLevel { kError = 0, kWarn = 1, kInfo = 2, kDebug = 3 };
LogLevel g_log_level = LogLevel::kInfo;

template <typename... Args>
void Log(LogLevel level, const char* fmt, Args... args) {
  if (level > g_log_level) return;
  static const char* kNames[] = {"error", "warn", "info", "debug"};
  // One write per line: the writer thread logs job ends while other threads log too.
  const int size = std::snprintf(nullptr, 0, fmt, args...);
  std::string text(static_cast<size_t>(std::max(size, 0)) + 1, '\0');
  std::snprintf(text.data(), text.size(), fmt, args...);
  text.pop_back();
  std::fprintf(stderr, "xladbd %s: %s\n", kNames[static_cast<int>(level)], text.c_str());
}

// True for 127.0.0.0/8, ::1 and "localhost": the only listen addresses that need no TLS and token.
bool IsLoopbackHost(std::string host) {
  if (host.size() >= 2 && host.front() == '[' && host.back() == ']') host = host.substr(1, host.size() - 2);
  if (host == "localhost") return true;
  in_addr v4{};
  if (inet_pton(AF_INET, host.c_str(), &v4) == 1) return (ntohl(v4.s_addr) >> 24) == 127;
  in6_addr v6{};
  if (inet_pton(AF_INET6, host.c_str(), &v6) == 1) return IN6_IS_ADDR_LOOPBACK(&v6);
  return false;
}

// Why binding `host:port` fails, from the kernel: gRPC only says that it did. "" when a plain bind works.
constexpr const char kAddressInUse[] = "address in use";

std::string BindFailure(const std::string& host, const std::string& port) {
  addrinfo hints{};
  hints.ai_socktype = SOCK_STREAM;
  hints.ai_flags = AI_PASSIVE;
  addrinfo* found = nullptr;
  std::string h = host;
  if (h.size() >= 2 && h.front() == '[' && h.back() == ']') h = h.substr(1, h.size() - 2);
  if (int rc = getaddrinfo(h.empty() ? nullptr : h.c_str(), port.c_str(), &hints, &found); rc != 0) {
    return std::string("cannot resolve the address: ") + gai_strerror(rc);
  }
  std::string why;
  for (addrinfo* a = found; a != nullptr && why.empty(); a = a->ai_next) {
    int fd = ::socket(a->ai_family, a->ai_socktype, a->ai_protocol);
    if (fd < 0) continue;
    int one = 1;
    ::setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);  // as gRPC does: TIME_WAIT is not "in use"
    if (::bind(fd, a->ai_addr, a->ai_addrlen) != 0) why = errno == EADDRINUSE ? kAddressInUse : std::strerror(errno);
    ::close(fd);
  }
  freeaddrinfo(found);
  return why;
}

std::string ReadWholeFile(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}


using namespace xladb;

// Every flag of xladbd, as parsed.
struct DaemonFlags {
  std::string db_path, sql_db, listen = "127.0.0.1:50051", http_listen, metrics_listen, home_label, token_file;
  std::string admin_token_file;
  std::string tls_cert, tls_key, log_level = "info", spool_dir;
  std::vector<std::string> watch_dirs, allow_roots, prune_keep_labels;
  double quiet_seconds = 5;
  int64_t max_upload_bytes = int64_t{16} << 30, max_upload_files = 100000;
  int64_t prune_detail_days = -1;
  bool insecure_listen = false;
  service::QueryLimits query_limits;
  int64_t query_max_temp_bytes = int64_t{1} << 30;
  ingest::SourceLimits source_limits;

  // What the flags mean once checked (CheckFlags).
  store::LabelList prune_keep;
  std::string listen_host, listen_port;
};

void AddFlags(CLI::App& app, DaemonFlags& f) {
  app.option_defaults()->always_capture_default();
  app.add_option("--db", f.db_path,
                 "SQLite database file (created if missing), or a PostgreSQL store: postgresql://user@host/db "
                 "(its schema is created if missing)")->required();
  app.add_option("--sql-db", f.sql_db,
                 "PostgreSQL store: the SQL endpoint (Query) connects with this URI, as a role that may only read "
                 "(granted SELECT at start, and refused if it may write); without it, the daemon's own role "
                 "runs queries in a read-only transaction");
  app.add_option("--listen", f.listen, "Address to serve on (host:port; port 0 picks a free one)");
  app.add_option("--prune-detail-days", f.prune_detail_days,
                 "Daily (and at start): runs older than this many days lose their value-level detail (off: -1)");
  app.add_option("--prune-keep-label", f.prune_keep_labels, "KEY=VALUE: runs with this label keep their detail");
  app.add_option("--http", f.http_listen,
                 "Also serve the report pages, read-only, on this host:port (HTTPS with --tls-cert; port 0 picks; "
                 "with a token, browsers log in at /login)");
  app.add_option("--metrics-listen", f.metrics_listen,
                 "Serve Prometheus metrics at /metrics on this host:port alone (they are also at /metrics of "
                 "--http); the same rules as --http: loopback, or TLS and a token");
  app.add_option("--home-label", f.home_label,
                 "The front page (/ of --http) groups runs by this label's value, e.g. branch (default: every run)");
  app.add_option("--watch", f.watch_dirs, "Folder whose subfolders (or archives) are runs to ingest (repeatable)");
  app.add_option("--allow-root", f.allow_roots, "Folder under which IngestPath may read (repeatable)");
  app.add_option("--quiet-seconds", f.quiet_seconds, "A watched run is ingested after this long without changes");
  app.add_option("--token-file", f.token_file,
                 "Require 'authorization: Bearer <token>' with the token in this file (with --admin-token-file: "
                 "the read token, for queries, pages and SQL)");
  app.add_option("--admin-token-file", f.admin_token_file,
                 "The token in this file alone may upload, ingest server paths, label, delete and prune");
  app.add_option("--tls-cert", f.tls_cert, "Serve TLS with this certificate (PEM); needs --tls-key");
  app.add_option("--tls-key", f.tls_key, "Private key (PEM) for --tls-cert");
  app.add_option("--spool-dir", f.spool_dir, "Where uploads are staged (default: <db>.uploads)");
  app.add_option("--max-upload-bytes", f.max_upload_bytes, "Largest accepted upload");
  app.add_option("--max-upload-files", f.max_upload_files, "Most files in one upload");
  app.add_flag("--insecure-listen", f.insecure_listen,
               "Allow a --listen address that is not loopback without TLS and a token (logged as a warning)");
  service::QueryLimits& q = f.query_limits;
  app.add_option("--query-timeout-ms", q.timeout_ms, "Time limit of one SQL Query");
  app.add_option("--query-max-rows", q.max_rows, "Most rows one SQL Query returns");
  app.add_option("--query-max-bytes", q.max_bytes, "Most bytes one SQL Query returns (all values)");
  app.add_option("--query-max-value-bytes", q.max_value_bytes,
                 "Largest single value an SQL Query may make (refused before it is made)");
  app.add_option("--query-max-row-bytes", q.max_row_bytes,
                 "Most text and blob bytes in one result row (under gRPC's default 4 MiB message limit)");
  app.add_option("--query-max-columns", q.max_columns, "Most columns in one SQL Query's result");
  app.add_option("--query-max-concurrent", q.max_concurrent, "SQL Queries run at once (more wait 5 s)");
  app.add_option("--query-max-temp-bytes", f.query_max_temp_bytes,
                 "SQLite temp files (sorts, temp tables) of all queries together");
  ingest::SourceLimits& a = f.source_limits;
  app.add_option("--archive-max-member-bytes", a.max_member_bytes, "Largest expanded archive member or .gz/.zst file");
  app.add_option("--archive-max-bytes", a.max_archive_bytes, "Most expanded bytes of one archive");
  app.add_option("--archive-max-ratio", a.max_ratio, "Highest expanded/compressed ratio (checked past 64 MiB expanded)");
  app.add_option("--log-level", f.log_level, "error, warn, info or debug")
      ->check(CLI::IsMember({"error", "warn", "info", "debug"}));
}

// An address that is not loopback needs TLS and a token, unless --insecure-listen (a warning then).
bool AddressAllowed(const DaemonFlags& f, const std::string& address, const char* flag) {
  if (IsLoopbackHost(address.substr(0, address.rfind(':')))) return true;
  const bool protected_listen = !f.tls_cert.empty() && !f.token_file.empty();
  if (!protected_listen && !f.insecure_listen) {
    std::fprintf(stderr,
                 "xladbd: refusing %s %s without TLS and a token: anyone who can reach it could read every run%s. "
                 "Give --tls-cert/--tls-key and --token-file, use 127.0.0.1, or pass --insecure-listen\n",
                 flag, address.c_str(), std::string(flag) == "--listen" ? " and ingest server paths" : "");
    return false;
  }
  if (!protected_listen) {
    Log(LogLevel::kWarn, "%s %s without %s (--insecure-listen): anyone who can reach it can use it", flag,
        address.c_str(), f.tls_cert.empty() && f.token_file.empty() ? "TLS or a token" : f.tls_cert.empty() ? "TLS" : "a token");
  }
  return true;
}

bool LimitsArePositive(const DaemonFlags& f) {
  const service::QueryLimits& q = f.query_limits;
  const ingest::SourceLimits& a = f.source_limits;
  return q.max_rows > 0 && q.max_bytes > 0 && q.max_value_bytes > 0 && q.max_row_bytes > 0 && q.max_columns > 0 &&
         q.timeout_ms > 0 && q.max_concurrent > 0 && f.query_max_temp_bytes > 0 && f.max_upload_bytes > 0 &&
         f.max_upload_files > 0 && a.max_member_bytes > 0 && a.max_archive_bytes > 0 && a.max_ratio >= 1 &&
         f.quiet_seconds >= 0;
}

// Checks the flags and completes what they imply (the spool folder, the listen host and port, the labels
// kept by pruning). 0 when the daemon may start, else its exit code (2 usage, 1 a busy port).
int CheckFlags(DaemonFlags& f) {
  g_log_level = f.log_level == "error" ? LogLevel::kError
                : f.log_level == "warn" ? LogLevel::kWarn
                : f.log_level == "debug" ? LogLevel::kDebug
                                         : LogLevel::kInfo;
  for (const auto& kv : f.prune_keep_labels) {
    const size_t eq = kv.find('=');
    if (eq == std::string::npos || eq == 0) {
      std::fprintf(stderr, "xladbd: --prune-keep-label %s is not KEY=VALUE\n", kv.c_str());
      return 2;
    }
    f.prune_keep.emplace_back(kv.substr(0, eq), kv.substr(eq + 1));
  }
  if (f.tls_cert.empty() != f.tls_key.empty()) {
    std::fprintf(stderr, "xladbd: --tls-cert and --tls-key go together\n");
    return 2;
  }
  if (Status file = store::CheckDatabaseFile(f.db_path); !file.ok()) {  // a FIFO would hang the start
    std::fprintf(stderr, "xladbd: --db: %s\n", file.message().c_str());
    return 2;
  }
  if (f.spool_dir.empty() && store::IsPostgresUri(f.db_path)) {
    std::fprintf(stderr, "xladbd: --db postgresql://… needs --spool-dir DIR: the folder where uploads are staged "
                         "(on this machine; a restart must find it again)\n");
    return 2;
  }
  if (!f.sql_db.empty() && !(store::IsPostgresUri(f.db_path) && store::IsPostgresUri(f.sql_db))) {
    std::fprintf(stderr, "xladbd: --sql-db is a postgresql:// URI, for a --db postgresql://… store\n");
    return 2;
  }
  if (f.spool_dir.empty()) f.spool_dir = f.db_path + ".uploads";
  {
    // Absolute, so staged paths recorded in ingest_jobs still name the same folder after a restart from
    // another working directory (a resumed upload must find its files, and cleanup must recognise them).
    std::error_code ec;
    f.spool_dir = std::filesystem::absolute(f.spool_dir, ec).lexically_normal().string();
  }
  if (!LimitsArePositive(f)) {
    std::fprintf(stderr, "xladbd: limits must be positive (see xladbd --help)\n");
    return 2;
  }
  f.listen_host = f.listen.substr(0, f.listen.rfind(':'));
  f.listen_port = f.listen.rfind(':') == std::string::npos ? "" : f.listen.substr(f.listen.rfind(':') + 1);
  if (!AddressAllowed(f, f.listen, "--listen")) return 2;
  // A busy port is one clear line, before anything starts: gRPC reports it only after a multi-line error dump
  // of its own. (A port taken between this check and gRPC's bind still fails below, with the dump.) Only a
  // port in use stops the start here: another failure on one of the host's addresses (::1 where IPv6 is off)
  // is gRPC's to judge, since it listens on whichever of them it can.
  if (!f.listen_port.empty() && f.listen.rfind("unix:", 0) != 0) {
    if (const std::string why = BindFailure(f.listen_host, f.listen_port); why == kAddressInUse) {
      std::fprintf(stderr, "xladbd: cannot listen on %s: %s\n", f.listen.c_str(), why.c_str());
      return 1;
    }
  }
  for (const auto& [address, flag] :
       {std::pair{&f.http_listen, "--http"}, std::pair{&f.metrics_listen, "--metrics-listen"}}) {
    if (address->empty()) continue;
    const std::string port = address->substr(address->rfind(':') + 1);
    if (address->rfind(':') == std::string::npos || port.empty() ||
        port.find_first_not_of("0123456789") != std::string::npos || port.size() > 5) {
      std::fprintf(stderr, "xladbd: %s wants host:port, not %s\n", flag, address->c_str());
      return 2;
    }
    if (!AddressAllowed(f, *address, flag)) return 2;
  }
  return 0;
}

// The access policy of the tokens' files and the allowed roots (an empty file name: no token of that kind).
StatusOr<service::AccessPolicy> LoadAccessPolicy(const DaemonFlags& f) {
  const auto read_token = [](const std::string& file) -> StatusOr<std::string> {
    if (file.empty()) return std::string();
    return service::ReadTokenFile(file);
  };
  auto token = read_token(f.token_file);
  auto admin_token = token.ok() ? read_token(f.admin_token_file) : token;
  if (!admin_token.ok()) return admin_token.status();
  return service::AccessPolicy::Create(*token, *admin_token, f.allow_roots);
}

// The gRPC server with both services on --listen; null (and said on stderr) when it cannot listen.
// Calls are timed for the metrics when `metrics` is given.
std::unique_ptr<grpc::Server> StartGrpcServer(const DaemonFlags& f, service::QueryServiceImpl& query_service,
                                              service::IngestServiceImpl& ingest_service,
                                              service::DaemonMetrics* metrics) {
  grpc::EnableDefaultHealthCheckService(true);
  grpc::reflection::InitProtoReflectionServerBuilderPlugin();
  grpc::ServerBuilder builder;
  std::shared_ptr<grpc::ServerCredentials> creds = grpc::InsecureServerCredentials();
  if (!f.tls_cert.empty()) {
    grpc::SslServerCredentialsOptions ssl;
    ssl.pem_key_cert_pairs.push_back({ReadWholeFile(f.tls_key), ReadWholeFile(f.tls_cert)});
    creds = grpc::SslServerCredentials(ssl);
  }
  int port = 0;
  builder.AddChannelArgument(GRPC_ARG_ALLOW_REUSEPORT, 0);  // the port is ours or we exit
  builder.AddListeningPort(f.listen, creds, &port);
  builder.SetMaxReceiveMessageSize(service::kMaxMessageBytes);
  builder.RegisterService(&query_service);
  builder.RegisterService(&ingest_service);
  if (metrics != nullptr) {
    std::vector<std::unique_ptr<grpc::experimental::ServerInterceptorFactoryInterface>> interceptors;
    interceptors.push_back(service::RpcMetricsInterceptors(
        metrics, {xladb::v1::QueryService::service_full_name(), xladb::v1::IngestService::service_full_name()}));
    builder.experimental().SetInterceptorCreators(std::move(interceptors));
  }
  std::unique_ptr<grpc::Server> server = builder.BuildAndStart();
  if (!server || port == 0) {
    std::string why = f.listen_port.empty() ? "not a host:port" : BindFailure(f.listen_host, f.listen_port);
    std::fprintf(stderr, "xladbd: cannot listen on %s: %s\n", f.listen.c_str(), why.empty() ? "refused" : why.c_str());
    return nullptr;
  }
  std::printf("xladbd listening on %s:%d (database %s)\n", f.listen_host.c_str(), port,
              store::WithoutPassword(f.db_path).c_str());
  return server;
}

// The HTTP servers: the pages (--http, with /metrics when metrics are kept) and the metrics alone
// (--metrics-listen). Each prints its address.
struct HttpServers {
  std::unique_ptr<service::HttpPages> pages, metrics;
  void Stop() {
    if (pages) pages->Stop();
    if (metrics) metrics->Stop();
  }
};

StatusOr<HttpServers> StartHttp(const DaemonFlags& f, const service::AccessPolicy* access,
                                service::QueryServiceImpl& query_service, const service::DaemonMetrics* metrics) {
  HttpServers servers;
  for (const bool pages : {true, false}) {
    const std::string& address = pages ? f.http_listen : f.metrics_listen;
    if (address.empty()) continue;
    service::HttpPagesOptions ho;
    ho.host = address.substr(0, address.rfind(':'));
    if (ho.host.size() >= 2 && ho.host.front() == '[' && ho.host.back() == ']') {
      ho.host = ho.host.substr(1, ho.host.size() - 2);
    }
    ho.port = std::atoi(address.substr(address.rfind(':') + 1).c_str());
    ho.tls_cert_file = f.tls_cert;
    ho.tls_key_file = f.tls_key;
    ho.home_label = f.home_label;
    ho.serve_pages = pages;
    if (metrics != nullptr) ho.metrics = [metrics] { return metrics->Scrape(); };
    auto started = service::HttpPages::Start(ho, f.db_path, access, query_service.query_gate());
    if (!started.ok()) return started.status();
    std::printf("xladbd %s on %s://%s:%d/%s\n", pages ? "pages" : "metrics", f.tls_cert.empty() ? "http" : "https",
                address.substr(0, address.rfind(':')).c_str(), started.value()->port(), pages ? "" : "metrics");
    (pages ? servers.pages : servers.metrics) = std::move(started.value());
  }
  return servers;
}

// A watched run whose job could not be recorded is reported again this much later.
constexpr int64_t kWatchRetrySeconds = 5;

StatusOr<std::unique_ptr<service::RunFolderWatcher>> StartWatcher(const DaemonFlags& f, service::IngestQueue* queue) {
  service::WatchOptions wo;
  wo.roots = f.watch_dirs;
  wo.quiet_period = std::chrono::milliseconds(static_cast<int64_t>(f.quiet_seconds * 1000));
  wo.retry_after = std::chrono::seconds(kWatchRetrySeconds);
  auto watcher = service::RunFolderWatcher::Start(wo, [queue](const std::string& path, const std::string& name) {
    service::IngestRequest request;
    request.source = "watch";
    request.path = path;
    request.run_name = name;
    auto id = queue->Submit(request);
    if (!id.ok()) {  // not recorded (the store locked past its busy timeout, say): the watcher tries again
      Log(LogLevel::kWarn, "run %s ready but not queued, trying again in %lld s: %s",
          ingest::EscapeControlCharacters(name).c_str(), static_cast<long long>(kWatchRetrySeconds),
          ingest::EscapeControlCharacters(id.status().message()).c_str());
      return false;
    }
    Log(LogLevel::kInfo, "run %s ready: queued %s", ingest::EscapeControlCharacters(name).c_str(),
        id.value().c_str());
    return true;
  });
  if (watcher.ok()) {
    for (const auto& d : f.watch_dirs) Log(LogLevel::kInfo, "watching %s", d.c_str());
  }
  return watcher;
}

// Retention (--prune-detail-days): by the one writer between ingest jobs.
void PruneOldRuns(service::IngestQueue* queue, int64_t days, const store::LabelList& keep) {
  auto pruned = service::PruneOnWriter(queue, days, keep);
  if (pruned.ok()) {
    Log(LogLevel::kInfo, "pruned %lld runs older than %lld days: %lld rows, database %lld -> %lld bytes",
        static_cast<long long>(pruned->runs), static_cast<long long>(days), static_cast<long long>(pruned->rows),
        static_cast<long long>(pruned->bytes_before), static_cast<long long>(pruned->bytes_after));
  } else {
    Log(LogLevel::kWarn, "pruning failed: %s", pruned.status().message().c_str());
  }
}

// The ingest queue (the one writer), with the log lines of its start.
// Jobs that end are counted in `metrics` when given.
StatusOr<std::unique_ptr<service::IngestQueue>> StartQueue(const DaemonFlags& f, const service::AccessPolicy* access,
                                                           service::DaemonMetrics* metrics) {
  std::error_code spool_ec;
  std::filesystem::create_directories(f.spool_dir, spool_ec);
  const auto on_job_end = [metrics](const service::JobStatus& job) {
    Log(job.state == service::JobStatus::State::kSucceeded ? LogLevel::kInfo : LogLevel::kWarn, "%s",
        service::JobEndLine(job).c_str());
    if (metrics != nullptr) metrics->OnJobEnd(job);
  };
  auto queue = service::IngestQueue::Start(f.db_path, access, f.source_limits, on_job_end);
  if (!queue.ok()) return queue.status();
  for (const std::string& job : queue.value()->left_to_other_daemons()) {
    Log(LogLevel::kInfo, "job %s is an upload another daemon staged: left queued for it", job.c_str());
  }
  if (int removed = service::RemoveAbandonedUploads(f.spool_dir, *queue.value()); removed > 0) {
    Log(LogLevel::kInfo, "removed %d staged uploads a previous run left unfinished", removed);
  }
  return queue;
}

// The SQL endpoint's reader role (--sql-db), checked; or the warning that there is none on PostgreSQL.
Status PrepareSqlEndpoint(const DaemonFlags& f) {
  if (!f.sql_db.empty()) {
    Status reader = store::PrepareSqlReader(f.db_path, f.sql_db);
    if (!reader.ok()) return Status::FailedPrecondition("--sql-db " + store::WithoutPassword(f.sql_db) + ": " + reader.message());
  } else if (store::IsPostgresUri(f.db_path)) {
    Log(LogLevel::kWarn, "the SQL endpoint runs as the daemon's own role, in read-only transactions; give "
                         "--sql-db with a role that may only read (docs/deploy.md)");
  }
  return Status::Ok();
}

int Fail(int code, const std::string& message) {
  std::fprintf(stderr, "xladbd: %s\n", message.c_str());
  return code;
}

// Starts every part, serves until SIGTERM or SIGINT, stops them in order.
int Serve(DaemonFlags& f) {
  f.source_limits.spool_dir = f.spool_dir;
  store::SetQueryTempStorageLimit(f.query_max_temp_bytes);
  // SQLite's temp files (query sorts, within the cap above) go to the daemon's own folder, not /var/tmp. Set
  // before any connection is opened: SQLite reads it when it first needs a temp folder.
  ::setenv("SQLITE_TMPDIR", f.spool_dir.c_str(), 1);

  // Signals are taken by one thread with sigwait; block them everywhere else before any thread starts.
  sigset_t signals;
  sigemptyset(&signals);
  sigaddset(&signals, SIGTERM);
  sigaddset(&signals, SIGINT);
  pthread_sigmask(SIG_BLOCK, &signals, nullptr);

  auto access = LoadAccessPolicy(f);
  if (!access.ok()) return Fail(2, access.status().message());
  // Kept when something serves them; destroyed last: the queue, the servers and the interceptors report to it.
  std::unique_ptr<service::DaemonMetrics> metrics;
  if (!f.http_listen.empty() || !f.metrics_listen.empty()) {
    metrics = service::DaemonMetrics::Create(
        {std::string(BuildVersion()), std::string(BuildCommit()), store::kSchemaVersion}, f.db_path);
  }
  auto queue = StartQueue(f, &access.value(), metrics.get());
  if (!queue.ok()) return Fail(1, queue.status().message());
  service::IngestQueue& writer = *queue.value();
  if (Status sql = PrepareSqlEndpoint(f); !sql.ok()) {
    writer.Shutdown();
    return Fail(1, sql.message());
  }
  service::QueryServiceImpl query_service(f.db_path, f.sql_db.empty() ? f.db_path : f.sql_db, &access.value(),
                                          f.query_limits);
  service::IngestServiceImpl ingest_service(&writer, &access.value(), f.spool_dir,
                                            service::UploadLimits{f.max_upload_bytes, f.max_upload_files});
  std::unique_ptr<grpc::Server> server = StartGrpcServer(f, query_service, ingest_service, metrics.get());
  if (!server) {
    writer.Shutdown();
    return 1;
  }
  if (metrics) {
    metrics->set_sources({&writer, query_service.query_gate(), f.spool_dir});
    metrics->StartMeasuring();  // the queue has made the store
  }
  auto http = StartHttp(f, &access.value(), query_service, metrics.get());
  if (!http.ok()) {
    server->Shutdown();
    writer.Shutdown();
    return Fail(1, http.status().message());
  }
  std::fflush(stdout);
  std::unique_ptr<service::RunFolderWatcher> watcher;
  if (!f.watch_dirs.empty()) {
    auto started = StartWatcher(f, &writer);
    if (!started.ok()) {
      server->Shutdown();
      writer.Shutdown();
      return Fail(2, started.status().message());
    }
    watcher = std::move(started.value());
  }
  std::optional<TimerThread> pruner;  // at start, then daily; stops (and joins) on reset
  if (f.prune_detail_days >= 0) {
    pruner.emplace(std::chrono::milliseconds(0), std::chrono::hours(24),
                   [&writer, &f] { PruneOldRuns(&writer, f.prune_detail_days, f.prune_keep); });
  }

  int sig = 0;
  sigwait(&signals, &sig);
  Log(LogLevel::kInfo, "signal %d: shutting down (finishing the file in hand)", sig);
  if (watcher) watcher->Stop();
  http->Stop();
  writer.Shutdown();  // the writer stops after its current file; unfinished jobs resume on restart
  pruner.reset();     // a prune waiting for the writer is refused by the shutdown
  server->Shutdown(std::chrono::system_clock::now() + std::chrono::seconds(5));
  Log(LogLevel::kInfo, "stopped");
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{"xladbd: the xladb daemon (gRPC over a SQLite or PostgreSQL store)"};
  app.set_version_flag("--version", xladb::VersionLine("xladbd", xladb::store::kSchemaVersion));
  DaemonFlags flags;
  AddFlags(app, flags);
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    int rc = app.exit(e);
    return rc == 0 ? 0 : 2;
  }
  if (int refused = CheckFlags(flags); refused != 0) return refused;
  return Serve(flags);
}
