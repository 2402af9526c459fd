// HttpPages: `xladbd --http ADDR`, the report pages live (service/pages/report_pages.h), rendered by the same
// code as `xladb report`. cpp-httplib (Debian's libcpp-httplib) parses requests and routes them; the sockets
// belong to HttpConnectionLoop (service/http_connection_loop.h), which bounds slow and idle clients.
//
//   GET /[?label=KEY]                             the front page: runs grouped by the label (default
//                                                 HttpPagesOptions::home_label), recent changes, a chart
//   GET /runs                                     every run
//   GET /run?name=R                               a run
//   GET /module?run=R&name=M[&stage=S][&xla_id=N][&folder=F]   a module
//   GET /diff?run=R&baseline=B                    the gate's page: R against B (a run, label:K=V, commit:SHA)
//   GET /healthz                                  "ok"
//   GET /metrics                                  Prometheus metrics (HttpPagesOptions::metrics; 404 without)
//   GET /login[?next=PATH], POST /login           the login form (below)
//
// Contract
//   * Read-only: every page reads through the calling thread's read-only connection (ThreadReadConnection);
//     no route writes. Methods other than GET and HEAD get 405, whatever their body (POST /login aside).
//   * The same access rules as gRPC: with a token configured, every request needs `Authorization: Bearer
//     <token>` (the scheme in any case), or the session cookie of the login form (service/page_sessions.h):
//     POST /login with the form fields token= and next= answers 303 to `next` (a local path) with an HttpOnly,
//     SameSite=Strict cookie (Secure under TLS), or 401 and the form again for a wrong token. Without a token
//     a page is 401 with that form. TLS with the daemon's certificate when one is given. The caller checks
//     the address (loopback, or TLS and a token, as for --listen).
//   * Pages are rendered under the gRPC query gate (at most QueryLimits::max_concurrent at once, then 503).
//   * Errors: 404 for an unknown run or module, 400 for a bad request, 500 otherwise, as a small page that
//     escapes the message. Every response has a Content-Security-Policy that forbids network requests.
//   * Slow clients: a request must arrive whole within a few seconds, at most 512 connections are open (the
//     oldest idle one is closed to make room), and workers serve only complete requests (see the loop).
//   * /metrics answers HttpPagesOptions::metrics() as the text exposition format 0.0.4, outside the query gate
//     (it must be cheap: it reads counters), under the same token rules (401 and WWW-Authenticate: Bearer).
//     With `serve_pages` false only /metrics and /healthz are served: `xladbd --metrics-listen`.
//   * Start binds before returning (port 0 picks a free port, port() says which) and serves on its own
//     threads until Stop (or destruction). Thread-safe.
#ifndef XLADB_SERVICE_HTTP_PAGES_H_
#define XLADB_SERVICE_HTTP_PAGES_H_

#include <functional>
#include <memory>
#include <string>

#include "base/status.h"
#include "service/access_policy.h"
#include "service/query_service.h"

namespace xladb::service {

struct HttpPagesOptions {
  std::string host = "127.0.0.1";
  int port = 0;
  std::string tls_cert_file, tls_key_file;  // both set: HTTPS
  std::string home_label;                   // the front page groups runs by this label ("" = every run)
  bool serve_pages = true;                  // false: /metrics and /healthz only
  std::function<std::string()> metrics;     // GET /metrics's text; unset: no /metrics
};

class HttpPages {
 public:
  // kIoError naming the address and the reason when it cannot listen.
  static StatusOr<std::unique_ptr<HttpPages>> Start(const HttpPagesOptions& options, std::string db_path,
                                                    const AccessPolicy* access, ConcurrencyGate* gate);
  ~HttpPages();
  HttpPages(const HttpPages&) = delete;
  HttpPages& operator=(const HttpPages&) = delete;

  int port() const { return port_; }
  void Stop();

  struct Server;  // http_pages.cc

 private:
  HttpPages() = default;
  std::unique_ptr<Server> server_;
  int port_ = 0;
};

}  // namespace xladb::service

#endif  // XLADB_SERVICE_HTTP_PAGES_H_
