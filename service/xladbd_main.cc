// xladbd: the xladb daemon. Serves the gRPC API on a local SQLite file (or a PostgreSQL store: --db
// postgresql://…, with --spool-dir), ingests what clients send or point at, and watches artifact folders.
//
//   xladbd --db FILE|URI [--listen 127.0.0.1:50051] [--watch DIR]... [--allow-root DIR]... [--quiet-seconds N]
//          [--http 127.0.0.1:8080] [--token-file F] [--admin-token-file F] [--tls-cert F --tls-key F]
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
// and a token.
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
#include <condition_variable>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <mutex>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "ingest/text/visible_text.h"
#include "service/access_policy.h"
#include "service/http_pages.h"
#include "service/ingest_queue.h"
#include "service/ingest_service.h"
#include "service/query_service.h"
#include "service/run_folder_watcher.h"
#include "store/backend/database.h"
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

}  // namespace

int main(int argc, char** argv) {
  using namespace xladb;
  CLI::App app{"xladbd: the xladb daemon (gRPC over a local SQLite database)"};
  std::string db_path, listen = "127.0.0.1:50051", token_file, tls_cert, tls_key, log_level = "info", spool_dir;
  std::vector<std::string> watch_dirs, allow_roots;
  double quiet_seconds = 5;
  int64_t max_upload_bytes = int64_t{16} << 30, max_upload_files = 100000;
  bool insecure_listen = false;
  service::QueryLimits query_limits;
  int64_t query_max_temp_bytes = int64_t{1} << 30;
  ingest::SourceLimits source_limits;
  app.option_defaults()->always_capture_default();
  app.add_option("--db", db_path,
                 "SQLite database file (created if missing), or a PostgreSQL store: postgresql://user@host/db "
                 "(its schema is created if missing)")->required();
  std::string sql_db;
  app.add_option("--sql-db", sql_db,
                 "PostgreSQL store: the SQL endpoint (Query) connects with this URI, as a role that may only read "
                 "(granted SELECT at start, and refused if it may write); without it, the daemon's own role "
                 "runs queries in a read-only transaction");
  app.add_option("--listen", listen, "Address to serve on (host:port; port 0 picks a free one)");
  int64_t prune_detail_days = -1;
  std::vector<std::string> prune_keep_labels;
  app.add_option("--prune-detail-days", prune_detail_days,
                 "Daily (and at start): runs older than this many days lose their value-level detail (off: -1)");
  app.add_option("--prune-keep-label", prune_keep_labels, "KEY=VALUE: runs with this label keep their detail");
  std::string http_listen;
  app.add_option("--http", http_listen,
                 "Also serve the report pages, read-only, on this host:port (HTTPS with --tls-cert; port 0 picks; "
                 "with a token, browsers log in at /login)");
  std::string home_label;
  app.add_option("--home-label", home_label,
                 "The front page (/ of --http) groups runs by this label's value, e.g. branch (default: every run)");
  app.add_option("--watch", watch_dirs, "Folder whose subfolders (or archives) are runs to ingest (repeatable)");
  app.add_option("--allow-root", allow_roots, "Folder under which IngestPath may read (repeatable)");
  app.add_option("--quiet-seconds", quiet_seconds, "A watched run is ingested after this long without changes");
  app.add_option("--token-file", token_file,
                 "Require 'authorization: Bearer <token>' with the token in this file (with --admin-token-file: "
                 "the read token, for queries, pages and SQL)");
  std::string admin_token_file;
  app.add_option("--admin-token-file", admin_token_file,
                 "The token in this file alone may upload, ingest server paths, label, delete and prune");
  app.add_option("--tls-cert", tls_cert, "Serve TLS with this certificate (PEM); needs --tls-key");
  app.add_option("--tls-key", tls_key, "Private key (PEM) for --tls-cert");
  app.add_option("--spool-dir", spool_dir, "Where uploads are staged (default: <db>.uploads)");
  app.add_option("--max-upload-bytes", max_upload_bytes, "Largest accepted upload");
  app.add_option("--max-upload-files", max_upload_files, "Most files in one upload");
  app.add_flag("--insecure-listen", insecure_listen,
               "Allow a --listen address that is not loopback without TLS and a token (logged as a warning)");
  app.add_option("--query-timeout-ms", query_limits.timeout_ms, "Time limit of one SQL Query");
  app.add_option("--query-max-rows", query_limits.max_rows, "Most rows one SQL Query returns");
  app.add_option("--query-max-bytes", query_limits.max_bytes, "Most bytes one SQL Query returns (all values)");
  app.add_option("--query-max-value-bytes", query_limits.max_value_bytes,
                 "Largest single value an SQL Query may make (refused before it is made)");
  app.add_option("--query-max-row-bytes", query_limits.max_row_bytes,
                 "Most text and blob bytes in one result row (under gRPC's default 4 MiB message limit)");
  app.add_option("--query-max-columns", query_limits.max_columns, "Most columns in one SQL Query's result");
  app.add_option("--query-max-concurrent", query_limits.max_concurrent, "SQL Queries run at once (more wait 5 s)");
  app.add_option("--query-max-temp-bytes", query_max_temp_bytes,
                 "SQLite temp files (sorts, temp tables) of all queries together");
  app.add_option("--archive-max-member-bytes", source_limits.max_member_bytes,
                 "Largest expanded archive member or .gz/.zst file");
  app.add_option("--archive-max-bytes", source_limits.max_archive_bytes, "Most expanded bytes of one archive");
  app.add_option("--archive-max-ratio", source_limits.max_ratio,
                 "Highest expanded/compressed ratio (checked past 64 MiB expanded)");
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
  store::LabelList prune_keep;
  for (const auto& kv : prune_keep_labels) {
    const size_t eq = kv.find('=');
    if (eq == std::string::npos || eq == 0) {
      std::fprintf(stderr, "xladbd: --prune-keep-label %s is not KEY=VALUE\n", kv.c_str());
      return 2;
    }
    prune_keep.emplace_back(kv.substr(0, eq), kv.substr(eq + 1));
  }
  if (tls_cert.empty() != tls_key.empty()) {
    std::fprintf(stderr, "xladbd: --tls-cert and --tls-key go together\n");
    return 2;
  }
  if (Status file = store::CheckDatabaseFile(db_path); !file.ok()) {  // a FIFO would hang the start
    std::fprintf(stderr, "xladbd: --db: %s\n", file.message().c_str());
    return 2;
  }
  if (spool_dir.empty() && store::IsPostgresUri(db_path)) {
    std::fprintf(stderr, "xladbd: --db postgresql://… needs --spool-dir DIR: the folder where uploads are staged "
                         "(on this machine; a restart must find it again)\n");
    return 2;
  }
  if (!sql_db.empty() && !(store::IsPostgresUri(db_path) && store::IsPostgresUri(sql_db))) {
    std::fprintf(stderr, "xladbd: --sql-db is a postgresql:// URI, for a --db postgresql://… store\n");
    return 2;
  }
  if (spool_dir.empty()) spool_dir = db_path + ".uploads";
  {
    // Absolute, so staged paths recorded in ingest_jobs still name the same folder after a restart from
    // another working directory (a resumed upload must find its files, and cleanup must recognise them).
    std::error_code ec;
    spool_dir = std::filesystem::absolute(spool_dir, ec).lexically_normal().string();
  }
  if (query_limits.max_rows <= 0 || query_limits.max_bytes <= 0 || query_limits.max_value_bytes <= 0 ||
      query_limits.max_row_bytes <= 0 || query_limits.max_columns <= 0 ||
      query_limits.timeout_ms <= 0 || query_limits.max_concurrent <= 0 || query_max_temp_bytes <= 0 ||
      max_upload_bytes <= 0 || max_upload_files <= 0 || source_limits.max_member_bytes <= 0 ||
      source_limits.max_archive_bytes <= 0 || source_limits.max_ratio < 1 || quiet_seconds < 0) {
    std::fprintf(stderr, "xladbd: limits must be positive (see xladbd --help)\n");
    return 2;
  }
  const std::string listen_host = listen.substr(0, listen.rfind(':'));
  const std::string listen_port = listen.rfind(':') == std::string::npos ? "" : listen.substr(listen.rfind(':') + 1);
  // An address that is not loopback needs TLS and a token, unless --insecure-listen (a warning then).
  const auto address_allowed = [&](const std::string& address, const char* flag) {
    if (IsLoopbackHost(address.substr(0, address.rfind(':')))) return true;
    const bool protected_listen = !tls_cert.empty() && !token_file.empty();
    if (!protected_listen && !insecure_listen) {
      std::fprintf(stderr,
                   "xladbd: refusing %s %s without TLS and a token: anyone who can reach it could read every run%s. "
                   "Give --tls-cert/--tls-key and --token-file, use 127.0.0.1, or pass --insecure-listen\n",
                   flag, address.c_str(), std::string(flag) == "--listen" ? " and ingest server paths" : "");
      return false;
    }
    if (!protected_listen) {
      Log(LogLevel::kWarn, "%s %s without %s (--insecure-listen): anyone who can reach it can use it", flag,
          address.c_str(), tls_cert.empty() && token_file.empty() ? "TLS or a token" : tls_cert.empty() ? "TLS" : "a token");
    }
    return true;
  };
  if (!address_allowed(listen, "--listen")) return 2;
  // A busy port is one clear line, before anything starts: gRPC reports it only after a multi-line error dump
  // of its own. (A port taken between this check and gRPC's bind still fails below, with the dump.) Only a
  // port in use stops the start here: another failure on one of the host's addresses (::1 where IPv6 is off)
  // is gRPC's to judge, since it listens on whichever of them it can.
  if (!listen_port.empty() && listen.rfind("unix:", 0) != 0) {
    if (const std::string why = BindFailure(listen_host, listen_port); why == kAddressInUse) {
      std::fprintf(stderr, "xladbd: cannot listen on %s: %s\n", listen.c_str(), why.c_str());
      return 1;
    }
  }
  if (!http_listen.empty()) {
    const std::string http_port = http_listen.substr(http_listen.rfind(':') + 1);
    if (http_listen.rfind(':') == std::string::npos || http_port.empty() ||
        http_port.find_first_not_of("0123456789") != std::string::npos || http_port.size() > 5) {
      std::fprintf(stderr, "xladbd: --http wants host:port, not %s\n", http_listen.c_str());
      return 2;
    }
    if (!address_allowed(http_listen, "--http")) return 2;
  }
  source_limits.spool_dir = spool_dir;
  store::SetQueryTempStorageLimit(query_max_temp_bytes);
  // SQLite's temp files (query sorts, within the cap above) go to the daemon's own folder, not /var/tmp. Set
  // before any connection is opened: SQLite reads it when it first needs a temp folder.
  ::setenv("SQLITE_TMPDIR", spool_dir.c_str(), 1);

  // Signals are taken by one thread with sigwait; block them everywhere else before any thread starts.
  sigset_t signals;
  sigemptyset(&signals);
  sigaddset(&signals, SIGTERM);
  sigaddset(&signals, SIGINT);
  pthread_sigmask(SIG_BLOCK, &signals, nullptr);

  // An empty file name: no token of that kind.
  const auto read_token = [](const std::string& file) -> StatusOr<std::string> {
    if (file.empty()) return std::string();
    return service::ReadTokenFile(file);
  };
  auto token = read_token(token_file);
  auto admin_token = token.ok() ? read_token(admin_token_file) : token;
  if (!admin_token.ok()) {
    std::fprintf(stderr, "xladbd: %s\n", admin_token.status().message().c_str());
    return 2;
  }
  auto access = service::AccessPolicy::Create(*token, *admin_token, allow_roots);
  if (!access.ok()) {
    std::fprintf(stderr, "xladbd: %s\n", access.status().message().c_str());
    return 2;
  }
  std::error_code spool_ec;
  std::filesystem::create_directories(spool_dir, spool_ec);
  auto queue = service::IngestQueue::Start(db_path, &access.value(), source_limits, [](const service::JobStatus& job) {
    Log(job.state == service::JobStatus::State::kSucceeded ? LogLevel::kInfo : LogLevel::kWarn, "%s",
        service::JobEndLine(job).c_str());
  });
  if (!queue.ok()) {
    std::fprintf(stderr, "xladbd: %s\n", queue.status().message().c_str());
    return 1;
  }

  for (const std::string& job : queue.value()->left_to_other_daemons()) {
    Log(LogLevel::kInfo, "job %s is an upload another daemon staged: left queued for it", job.c_str());
  }
  if (int removed = service::RemoveAbandonedUploads(spool_dir, *queue.value()); removed > 0) {
    Log(LogLevel::kInfo, "removed %d staged uploads a previous run left unfinished", removed);
  }
  if (!sql_db.empty()) {
    if (Status reader = store::PrepareSqlReader(db_path, sql_db); !reader.ok()) {
      std::fprintf(stderr, "xladbd: --sql-db %s: %s\n", store::WithoutPassword(sql_db).c_str(),
                   reader.message().c_str());
      queue.value()->Shutdown();
      return 1;
    }
  } else if (store::IsPostgresUri(db_path)) {
    Log(LogLevel::kWarn, "the SQL endpoint runs as the daemon's own role, in read-only transactions; give "
                         "--sql-db with a role that may only read (docs/deploy.md)");
  }
  service::QueryServiceImpl query_service(db_path, sql_db.empty() ? db_path : sql_db, &access.value(), query_limits);
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
  builder.AddChannelArgument(GRPC_ARG_ALLOW_REUSEPORT, 0);  // the port is ours or we exit
  builder.AddListeningPort(listen, creds, &port);
  builder.SetMaxReceiveMessageSize(64 << 20);
  builder.RegisterService(&query_service);
  builder.RegisterService(&ingest_service);
  std::unique_ptr<grpc::Server> server = builder.BuildAndStart();
  if (!server || port == 0) {
    std::string why = listen_port.empty() ? "not a host:port" : BindFailure(listen_host, listen_port);
    std::fprintf(stderr, "xladbd: cannot listen on %s: %s\n", listen.c_str(), why.empty() ? "refused" : why.c_str());
    queue.value()->Shutdown();
    return 1;
  }
  std::unique_ptr<service::HttpPages> http;
  if (!http_listen.empty()) {
    service::HttpPagesOptions ho;
    ho.host = http_listen.substr(0, http_listen.rfind(':'));
    if (ho.host.size() >= 2 && ho.host.front() == '[' && ho.host.back() == ']') ho.host = ho.host.substr(1, ho.host.size() - 2);
    ho.port = std::atoi(http_listen.substr(http_listen.rfind(':') + 1).c_str());
    ho.tls_cert_file = tls_cert;
    ho.tls_key_file = tls_key;
    ho.home_label = home_label;
    auto h = service::HttpPages::Start(ho, db_path, &access.value(), query_service.query_gate());
    if (!h.ok()) {
      std::fprintf(stderr, "xladbd: %s\n", h.status().message().c_str());
      server->Shutdown();
      queue.value()->Shutdown();
      return 1;
    }
    http = std::move(h.value());
  }
  std::printf("xladbd listening on %s:%d (database %s)\n", listen_host.c_str(), port,
              store::WithoutPassword(db_path).c_str());
  if (http) {
    std::printf("xladbd pages on %s://%s:%d/\n", tls_cert.empty() ? "http" : "https",
                http_listen.substr(0, http_listen.rfind(':')).c_str(), http->port());
  }
  std::fflush(stdout);

  std::unique_ptr<service::RunFolderWatcher> watcher;
  if (!watch_dirs.empty()) {
    service::WatchOptions wo;
    wo.roots = watch_dirs;
    wo.quiet_period = std::chrono::milliseconds(static_cast<int64_t>(quiet_seconds * 1000));
    auto* q = queue.value().get();
    auto w = service::RunFolderWatcher::Start(wo, [q](const std::string& path, const std::string& name) {
      service::IngestRequest request;
      request.source = "watch";
      request.path = path;
      request.run_name = name;
      auto id = q->Submit(request);
      if (id.ok()) {
        Log(LogLevel::kInfo, "run %s ready: queued %s", ingest::EscapeControlCharacters(name).c_str(),
            id.value().c_str());
      }
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

  // Retention, daily, by the one writer between ingest jobs.
  std::mutex prune_mu;
  std::condition_variable prune_wake;
  bool prune_stop = false;
  std::thread pruner;
  if (prune_detail_days >= 0) {
    auto* q = queue.value().get();
    const store::LabelList keep = prune_keep;
    pruner = std::thread([&, q, keep] {
      std::unique_lock<std::mutex> lock(prune_mu);
      do {
        lock.unlock();
        auto pruned = service::PruneOnWriter(q, prune_detail_days, keep);
        if (pruned.ok()) {
          Log(LogLevel::kInfo, "pruned %lld runs older than %lld days: %lld rows, database %lld -> %lld bytes",
              static_cast<long long>(pruned->runs), static_cast<long long>(prune_detail_days),
              static_cast<long long>(pruned->rows), static_cast<long long>(pruned->bytes_before),
              static_cast<long long>(pruned->bytes_after));
        } else {
          Log(LogLevel::kWarn, "pruning failed: %s", pruned.status().message().c_str());
        }
        lock.lock();
      } while (!prune_wake.wait_for(lock, std::chrono::hours(24), [&] { return prune_stop; }));
    });
  }

  int sig = 0;
  sigwait(&signals, &sig);
  {
    std::lock_guard<std::mutex> lock(prune_mu);
    prune_stop = true;
  }
  prune_wake.notify_all();
  Log(LogLevel::kInfo, "signal %d: shutting down (finishing the file in hand)", sig);
  if (watcher) watcher->Stop();
  if (http) http->Stop();
  queue.value()->Shutdown();  // the writer stops after its current file; unfinished jobs resume on restart
  if (pruner.joinable()) pruner.join();  // a prune waiting for the writer is refused by the shutdown
  server->Shutdown(std::chrono::system_clock::now() + std::chrono::seconds(5));
  Log(LogLevel::kInfo, "stopped");
  return 0;
}
