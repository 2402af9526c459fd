#include "service/http_pages.h"

#include <chrono>
#include <cstdlib>

#include "service/http_connection_loop.h"
#include "service/metrics/exposition_text.h"
#include "service/metrics/service_events.h"
#include "service/page_sessions.h"
#include "service/pages/html_text.h"
#include "service/pages/page_frame.h"
#include "service/pages/report_pages.h"

namespace xladb::service {

struct HttpPages::Server {
  HttpRoutes routes;
  std::string db_path;
  std::string home_label;
  const AccessPolicy* access = nullptr;
  ConcurrencyGate* gate = nullptr;
  PageSessions sessions;
  std::function<std::string()> metrics;
  bool tls = false;
  // Last, so destroyed first: its workers call the routes, which read everything above.
  std::unique_ptr<HttpConnectionLoop> loop;
};

namespace {

void SendPage(httplib::Response& res, int status, const std::string& html) {
  res.status = status;
  // frame-ancestors works only as a header: a <meta> policy ignores it.
  static const std::string policy = pages::ContentSecurityPolicy() + "; frame-ancestors 'none'";
  res.set_header("Content-Security-Policy", policy);
  res.set_header("X-Content-Type-Options", "nosniff");
  res.set_header("Cache-Control", "no-store");
  res.set_content(html, "text/html; charset=utf-8");
}

void SendError(httplib::Response& res, const Status& st) {
  const int status = st.code() == Status::Code::kNotFound          ? 404
                     : st.code() == Status::Code::kInvalidArgument  ? 400
                     : st.code() == Status::Code::kPermissionDenied ? 401
                     : st.code() == Status::Code::kResourceExhausted ? 503
                                                                     : 500;
  SendPage(res, status,
           pages::PageFrame("xladb · error", "<h1>" + std::to_string(status) + "</h1>\n<p id=\"error\">" +
                                                 pages::Html(st.message()) + "</p>\n<p><a href=\"/\">home</a> · <a href=\"/runs\">runs</a></p>"));
}

// Where to go after logging in: a path on this server, else the runs page. "//host" and "/\host" would
// leave the server, and control or non-ASCII bytes could split the Location header.
std::string LocalTarget(const std::string& next) {
  const bool local = !next.empty() && next.size() <= 2000 && next[0] == '/' && next.find('\\') == std::string::npos &&
                     (next.size() == 1 || next[1] != '/');
  if (!local) return "/";
  for (char ch : next) {
    if (ch <= ' ' || ch >= 0x7f) return "/";  // char is signed: bytes past 0x7f are negative
  }
  return next;
}

void Redirect(httplib::Response& res, const std::string& local_target) {
  res.status = 303;
  res.set_header("Location", local_target);
}

// The login form: the read token in, a session cookie out (POST /login). `next` is where to go after.
void SendLoginPage(httplib::Response& res, int status, std::string_view message, const std::string& next) {
  if (status == 401) res.set_header("WWW-Authenticate", "Bearer");
  SendPage(res, status,
           pages::PageFrame("xladb · log in",
                            "<h1>Log in</h1>\n<p id=\"error\">" + pages::Html(message) +
                                "</p>\n<form id=\"login\" method=\"post\" action=\"/login\">\n"
                                "<input type=\"hidden\" name=\"next\" value=\"" + pages::Html(LocalTarget(next)) +
                                "\">\n<label>Read token <input type=\"password\" name=\"token\" "
                                "autocomplete=\"current-password\" required autofocus></label>\n"
                                "<button type=\"submit\">Log in</button>\n</form>"));
}

// POST /login: a right token gets a session cookie and a redirect to `next`; a wrong one the form again, 401,
// and no cookie. The body is a small urlencoded form (the connection loop caps it).
void LogIn(HttpPages::Server& s, const httplib::Request& req, httplib::Response& res) {
  httplib::Params form;
  httplib::detail::parse_query_text(req.body, form);
  const auto field = [&](const std::string& name) {
    const auto it = form.find(name);
    return it == form.end() ? std::string() : it->second;
  };
  const std::string token = field("token"), next = LocalTarget(field("next"));
  if (!s.access->token_required()) return Redirect(res, next);
  if (token.empty() || !s.access->CheckToken("Bearer " + token).ok()) {
    SendLoginPage(res, 401, "Wrong token.", next);
    return;
  }
  StatusOr<std::string> session = s.sessions.Create();
  if (!session.ok()) {
    SendError(res, session.status());
    return;
  }
  Redirect(res, next);
  res.set_header("Set-Cookie", s.sessions.SetCookie(*session, s.tls));
  res.set_header("Cache-Control", "no-store");
}

// Whether the request carries the read token: in its Authorization header, or as the login form's cookie.
bool MayRead(HttpPages::Server& s, const httplib::Request& req) {
  return s.access->CheckToken(req.get_header_value("Authorization")).ok() ||
         s.sessions.Valid(req.get_header_value("Cookie"));
}

// GET /metrics: the metrics text, to a caller with the read token.
void SendMetrics(HttpPages::Server& s, const httplib::Request& req, httplib::Response& res) {
  res.set_header("Cache-Control", "no-store");
  if (!MayRead(s, req)) {
    res.status = 401;
    res.set_header("WWW-Authenticate", "Bearer");
    res.set_content("this server needs its read token: send 'Authorization: Bearer <token>'\n", "text/plain");
    return;
  }
  res.set_content(s.metrics(), metrics::kExpositionContentType);
}

// Checks the token, takes a gate slot and a read-only connection, renders, and sends.
template <typename Render>
void Serve(HttpPages::Server& s, const httplib::Request& req, httplib::Response& res, Render&& render) {
  if (!MayRead(s, req)) {
    SendLoginPage(res, 401, "This server needs its read token: log in, or send 'Authorization: Bearer <token>'.",
                  req.target);
    return;
  }
  const std::optional<ConcurrencyGate::Slot> slot = s.gate->Enter(std::chrono::milliseconds(5000));
  if (!slot) {
    metrics::CountRefusal(metrics::RefusalCap::kQueryConcurrency);
    SendError(res, Status::ResourceExhausted("too many pages and queries at once; retry shortly"));
    return;
  }
  auto db = ThreadReadConnection(s.db_path);
  if (!db.ok()) {
    SendError(res, db.status());
    return;
  }
  const pages::PageLinks links(pages::PageLinks::Mode::kLive);
  StatusOr<std::string> page = render(**db, links);
  if (!page.ok()) {
    SendError(res, page.status());
    return;
  }
  SendPage(res, 200, *page);
}

pages::ReportRequest ModuleRequest(const httplib::Request& req, Status* error) {
  pages::ReportRequest r;
  r.run = req.get_param_value("run");
  r.module = req.get_param_value("name");
  r.stage = req.get_param_value("stage");
  r.has_folder = req.has_param("folder");
  r.folder = req.get_param_value("folder");
  if (req.has_param("xla_id")) {
    const std::string id = req.get_param_value("xla_id");
    char* end = nullptr;
    const long long v = std::strtoll(id.c_str(), &end, 10);
    if (id.empty() || *end != '\0' || v < 0) *error = Status::InvalidArgument("xla_id must be a number >= 0");
    r.xla_module_id = v;
  }
  if (r.run.empty() || r.module.empty()) *error = Status::InvalidArgument("a module page needs run= and name=");
  return r;
}

// The pages' routes: /, /runs, /run, /module, /diff and the login form.
void AddPageRoutes(HttpPages::Server& s) {
  httplib::Server& http = s.routes;
  http.Get("/", [&s](const httplib::Request& req, httplib::Response& res) {
    pages::HomeRequest home;
    home.label_key = req.has_param("label") ? req.get_param_value("label") : s.home_label;
    Serve(s, req, res, [&home](store::Database& db, const pages::PageLinks& links) {
      return pages::RenderHomePage(db, home, links);
    });
  });
  http.Get("/runs", [&s](const httplib::Request& req, httplib::Response& res) {
    Serve(s, req, res, [](store::Database& db, const pages::PageLinks& links) {
      return pages::RenderRunsPage(db, links);
    });
  });
  http.Get("/run", [&s](const httplib::Request& req, httplib::Response& res) {
    const std::string run = req.get_param_value("name");
    Serve(s, req, res, [&](store::Database& db, const pages::PageLinks& links) -> StatusOr<std::string> {
      if (run.empty()) return Status::InvalidArgument("a run page needs name=");
      return pages::RenderRunPage(db, run, links);
    });
  });
  http.Get("/module", [&s](const httplib::Request& req, httplib::Response& res) {
    Status error;
    const pages::ReportRequest r = ModuleRequest(req, &error);
    Serve(s, req, res, [&](store::Database& db, const pages::PageLinks& links) -> StatusOr<std::string> {
      if (!error.ok()) return error;
      return pages::RenderModulePage(db, r, links);
    });
  });
  http.Get("/diff", [&s](const httplib::Request& req, httplib::Response& res) {
    pages::ReportRequest r;
    r.run = req.get_param_value("run");
    r.baseline = req.get_param_value("baseline");
    Serve(s, req, res, [&](store::Database& db, const pages::PageLinks& links) -> StatusOr<std::string> {
      if (r.run.empty() || r.baseline.empty()) return Status::InvalidArgument("a diff page needs run= and baseline=");
      return pages::RenderDiffPage(db, r, links);
    });
  });
  http.Get("/login", [&s](const httplib::Request& req, httplib::Response& res) {
    const std::string next = LocalTarget(req.get_param_value("next"));
    if (!s.access->token_required()) return Redirect(res, next);
    SendLoginPage(res, 200, "This server needs its read token.", next);
  });
  http.Post("/login", [&s](const httplib::Request& req, httplib::Response& res) { LogIn(s, req, res); });
}

}  // namespace

StatusOr<std::unique_ptr<HttpPages>> HttpPages::Start(const HttpPagesOptions& options, std::string db_path,
                                                      const AccessPolicy* access, ConcurrencyGate* gate) {
  auto server = std::make_unique<Server>();
  server->db_path = std::move(db_path);
  server->home_label = options.home_label;
  server->access = access;
  server->gate = gate;
  server->metrics = options.metrics;
  Server& s = *server;
  httplib::Server& http = s.routes;
  if (s.metrics) {
    http.Get("/metrics", [&s](const httplib::Request& req, httplib::Response& res) { SendMetrics(s, req, res); });
  }
  if (options.serve_pages) AddPageRoutes(s);
  http.Get("/healthz", [](const httplib::Request&, httplib::Response& res) { res.set_content("ok\n", "text/plain"); });
  // Methods other than GET and HEAD never reach the routes: the loop answers them 405.
  HttpLoopOptions loop_options;
  loop_options.host = options.host;
  loop_options.port = options.port;
  loop_options.tls_cert_file = options.tls_cert_file;
  loop_options.tls_key_file = options.tls_key_file;
  if (options.serve_pages) loop_options.form_paths = {"/login"};
  s.tls = !options.tls_cert_file.empty();
  auto loop = HttpConnectionLoop::Start(loop_options, &s.routes);
  if (!loop.ok()) return loop.status();
  std::unique_ptr<HttpPages> pages_server(new HttpPages());
  pages_server->port_ = (*loop)->port();
  s.loop = std::move(*loop);
  pages_server->server_ = std::move(server);
  return pages_server;
}

void HttpPages::Stop() {
  if (!server_) return;
  server_->loop->Stop();
  server_.reset();
}

HttpPages::~HttpPages() { Stop(); }

}  // namespace xladb::service
