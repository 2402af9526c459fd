#include "service/http_connection_loop.h"

#include <netinet/in.h>
#include <netinet/tcp.h>
#include <openssl/err.h>
#include <openssl/ssl.h>
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cctype>
#include <cerrno>
#include <condition_variable>
#include <csignal>
#include <cstring>
#include <deque>
#include <mutex>
#include <optional>
#include <string_view>
#include <thread>
#include <unordered_map>

#include "service/http_request_head.h"
#include "service/http_sockets.h"
#include "service/metrics/service_events.h"

namespace xladb::service {
namespace {

using Clock = std::chrono::steady_clock;

enum class Phase { kHandshake, kReading, kWorking, kWriting };

// Owned by the loop thread, except while kWorking: then one worker reads `request` and sets `out` and
// `close_after_write`, and the loop touches nothing but `phase` until the worker hands it back.
struct Connection {
  int fd = -1;
  SSL* ssl = nullptr;
  Phase phase = Phase::kReading;
  std::string in;       // received, not yet served (pipelined requests stay here)
  std::string request;  // the complete request a worker serves
  std::string out;      // the response being written
  size_t written = 0;
  bool close_after_write = false;
  bool peer_closed = false;
  bool awaiting_first_byte = false;  // idle after a response: the first byte starts the request deadline
  Clock::time_point deadline;
  Clock::time_point since;  // when it went idle or its request began: the eviction order
  size_t served = 0;
  uint32_t events = 0;  // registered epoll interest; 0: not registered
  std::string remote_ip, local_ip;
  int remote_port = 0, local_port = 0;
};

// A complete request, in memory, for httplib to read; what httplib writes is collected for the loop.
class BufferedStream final : public httplib::Stream {
 public:
  BufferedStream(const Connection& connection, std::string* out) : c_(connection), out_(out) {}
  bool is_readable() const override { return pos_ < c_.request.size(); }
  bool is_writable() const override { return true; }
  ssize_t read(char* ptr, size_t size) override {
    const size_t n = std::min(size, c_.request.size() - pos_);
    std::memcpy(ptr, c_.request.data() + pos_, n);
    pos_ += n;
    return static_cast<ssize_t>(n);
  }
  ssize_t write(const char* ptr, size_t size) override {
    out_->append(ptr, size);
    return static_cast<ssize_t>(size);
  }
  void get_remote_ip_and_port(std::string& ip, int& port) const override {
    ip = c_.remote_ip;
    port = c_.remote_port;
  }
  void get_local_ip_and_port(std::string& ip, int& port) const override {
    ip = c_.local_ip;
    port = c_.local_port;
  }
  socket_t socket() const override { return c_.fd; }

 private:
  const Connection& c_;
  std::string* out_;
  size_t pos_ = 0;
};

// A response the loop gives itself, without a worker; the connection is closed after it.
std::string LoopResponse(int status, std::string_view reason, std::string_view extra_headers, std::string_view text) {
  std::string r = "HTTP/1.1 " + std::to_string(status) + " " + std::string(reason) +
                  "\r\nContent-Type: text/plain; charset=utf-8\r\nX-Content-Type-Options: nosniff\r\n"
                  "Cache-Control: no-store\r\nConnection: close\r\nContent-Length: " +
                  std::to_string(text.size()) + "\r\n";
  r += extra_headers;
  r += "\r\n";
  r += text;
  return r;
}

}  // namespace

struct HttpConnectionLoop::State {
  HttpLoopOptions options;
  HttpRoutes* routes = nullptr;
  SSL_CTX* tls = nullptr;
  int listen_fd = -1, epoll_fd = -1, wake_fd = -1, port = 0;
  std::unordered_map<int, std::unique_ptr<Connection>> connections;  // loop thread only
  size_t dispatched = 0;                                             // loop thread only: queued or serving
  std::optional<Clock::time_point> accept_resumes;  // loop thread only: set while accepting is paused
  std::thread loop;
  std::vector<std::thread> workers;
  std::atomic<bool> stop_loop{false};
  bool stopped = false;

  std::mutex mu;
  std::condition_variable work_ready;
  std::deque<Connection*> work;   // guarded by mu
  std::vector<Connection*> done;  // guarded by mu
  bool stop_workers = false;      // guarded by mu

  ~State() {
    for (auto& [fd, c] : connections) {
      if (c->ssl != nullptr) SSL_free(c->ssl);
      close(fd);
    }
    for (int fd : {listen_fd, epoll_fd, wake_fd}) {
      if (fd >= 0) close(fd);
    }
    if (tls != nullptr) SSL_CTX_free(tls);
  }

  void Watch(Connection& c, uint32_t events) {
    if (c.events == events) return;
    epoll_event ev{};
    ev.events = events;
    ev.data.fd = c.fd;
    if (events == 0) {
      epoll_ctl(epoll_fd, EPOLL_CTL_DEL, c.fd, nullptr);
    } else {
      epoll_ctl(epoll_fd, c.events == 0 ? EPOLL_CTL_ADD : EPOLL_CTL_MOD, c.fd, &ev);
    }
    c.events = events;
  }

  // Callers return right after: `c` is gone.
  void Close(Connection& c) {
    Watch(c, 0);
    if (c.ssl != nullptr) {
      SSL_shutdown(c.ssl);  // one try, never waited for
      SSL_free(c.ssl);
      ERR_clear_error();
    }
    const int fd = c.fd;
    close(fd);
    connections.erase(fd);
  }

  // At the cap: closes the oldest idle connection, else the unfinished request that began first, else the
  // oldest one still writing. Connections being served are kept. False when there was none to close.
  bool MakeRoom() {
    Connection* victim = nullptr;
    int victim_rank = 3;
    for (auto& [fd, c] : connections) {
      const int rank = c->phase == Phase::kWorking                    ? 3
                       : c->phase == Phase::kReading && c->in.empty() ? 0
                       : c->phase == Phase::kWriting                  ? 2
                                                                      : 1;
      if (rank < victim_rank || (rank == victim_rank && rank < 3 && c->since < victim->since)) {
        victim = c.get();
        victim_rank = rank;
      }
    }
    if (victim == nullptr) return false;
    Close(*victim);
    return true;
  }

  void AcceptAll() {
    for (int i = 0; i < 256; ++i) {
      sockaddr_storage addr{};
      socklen_t len = sizeof addr;
      const int fd = accept4(listen_fd, reinterpret_cast<sockaddr*>(&addr), &len, SOCK_NONBLOCK | SOCK_CLOEXEC);
      if (fd < 0) {
        if (errno == EINTR) continue;
        if ((errno == EMFILE || errno == ENFILE) && MakeRoom()) {
          metrics::CountRefusal(metrics::RefusalCap::kHttpConnections);
          continue;
        }
        // Out of descriptors with none of ours to give back: the listening socket stays readable, so stop
        // watching it for a moment instead of spinning on it; the listen queue holds the rest.
        if (errno == EMFILE || errno == ENFILE) PauseAccepting();
        return;  // EAGAIN, or paused
      }
      if (connections.size() >= options.max_connections) {
        metrics::CountRefusal(metrics::RefusalCap::kHttpConnections);  // one goes: the oldest idle, or this one
        if (!MakeRoom()) {
          close(fd);
          continue;
        }
      }
      auto c = std::make_unique<Connection>();
      c->fd = fd;
      http_sockets::AddressText(addr, &c->remote_ip, &c->remote_port);
      sockaddr_storage local{};
      socklen_t local_len = sizeof local;
      if (getsockname(fd, reinterpret_cast<sockaddr*>(&local), &local_len) == 0) {
        http_sockets::AddressText(local, &c->local_ip, &c->local_port);
      }
      const int one = 1;
      setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
      c->since = Clock::now();
      c->deadline = c->since + options.request_deadline;  // the handshake and the first request together
      if (tls != nullptr) {
        c->ssl = SSL_new(tls);
        if (c->ssl == nullptr || SSL_set_fd(c->ssl, fd) != 1) {
          if (c->ssl != nullptr) SSL_free(c->ssl);
          close(fd);
          continue;
        }
        c->phase = Phase::kHandshake;
      }
      Connection& ref = *c;
      connections.emplace(fd, std::move(c));
      Watch(ref, EPOLLIN);
    }
  }

  void PauseAccepting() {
    epoll_ctl(epoll_fd, EPOLL_CTL_DEL, listen_fd, nullptr);
    accept_resumes = Clock::now() + std::chrono::milliseconds(100);
  }

  void ResumeAcceptingWhenDue(Clock::time_point now) {
    if (!accept_resumes || now < *accept_resumes) return;
    accept_resumes.reset();
    epoll_event ev{};
    ev.events = EPOLLIN;
    ev.data.fd = listen_fd;
    epoll_ctl(epoll_fd, EPOLL_CTL_ADD, listen_fd, &ev);
  }

  void Handshake(Connection& c) {
    const int r = SSL_accept(c.ssl);
    if (r == 1) {
      c.phase = Phase::kReading;
      Watch(c, EPOLLIN);
      ReadMore(c);
      return;
    }
    const int error = SSL_get_error(c.ssl, r);
    if (error == SSL_ERROR_WANT_READ || error == SSL_ERROR_WANT_WRITE) {
      Watch(c, error == SSL_ERROR_WANT_READ ? EPOLLIN : EPOLLOUT);
      return;
    }
    Close(c);
  }

  void ReadMore(Connection& c) {
    const size_t cap = options.max_header_bytes + options.max_form_bytes;
    char buffer[16384];
    uint32_t wait_for = EPOLLIN;
    while (c.in.size() < cap && !c.peer_closed) {
      const ssize_t n = http_sockets::Receive(c.fd, c.ssl, buffer, std::min(sizeof buffer, cap - c.in.size()));
      if (n == http_sockets::kBroken) return Close(c);
      if (n == http_sockets::kWaitReadable) break;
      if (n == http_sockets::kWaitWritable) {  // TLS must write before it can read on
        wait_for = EPOLLOUT;
        break;
      }
      if (n == 0) {
        c.peer_closed = true;
        break;
      }
      if (c.awaiting_first_byte) {
        c.awaiting_first_byte = false;
        c.since = Clock::now();
        c.deadline = c.since + options.request_deadline;
      }
      c.in.append(buffer, static_cast<size_t>(n));
    }
    Watch(c, wait_for);  // TryDispatch changes it when it dispatches or answers
    TryDispatch(c);
  }

  // Answers without a worker and closes after writing.
  void Reply(Connection& c, std::string response) {
    c.out = std::move(response);
    c.close_after_write = true;
    StartWriting(c);
  }

  // Hands a complete request to the workers; answers a refused one itself; waits for more bytes otherwise.
  void TryDispatch(Connection& c) {
    const size_t head_end = c.in.find("\r\n\r\n");
    if (head_end == std::string::npos || head_end + 4 > options.max_header_bytes) {
      if (c.in.size() >= options.max_header_bytes) {
        metrics::CountRefusal(metrics::RefusalCap::kHttpRequestSize);
        return Reply(c, LoopResponse(431, "Request Header Fields Too Large", "", "request headers too large\n"));
      }
      if (c.peer_closed) return Close(c);
      return;
    }
    const std::string_view head(c.in.data(), head_end + 2);
    if (const auto problem = HeaderProblem(head)) {
      return Reply(c, LoopResponse(400, "Bad Request", "", "malformed request: " + std::string(*problem) + "\n"));
    }
    const size_t method_end = head.find(' ');
    const std::string_view method = head.substr(0, method_end);
    std::string_view target = method_end == std::string_view::npos ? "" : head.substr(method_end + 1);
    target = target.substr(0, std::min(target.find(' '), target.find("\r\n")));
    const std::string_view path = target.substr(0, target.find('?'));
    const bool form = method == "POST" &&
                      std::find(options.form_paths.begin(), options.form_paths.end(), path) != options.form_paths.end();
    if (method != "GET" && method != "HEAD" && !form) {
      return Reply(c,
                   LoopResponse(405, "Method Not Allowed", "Allow: GET, HEAD\r\n", "read-only: GET and HEAD only\n"));
    }
    size_t length = head_end + 4;
    const auto transfer_encoding = HeaderValue(head, "Transfer-Encoding");
    const auto content_length = HeaderValue(head, "Content-Length");
    if (form) {
      if (transfer_encoding || !content_length) {
        return Reply(c, LoopResponse(411, "Length Required", "", "a form needs a Content-Length\n"));
      }
      if (content_length->empty() || content_length->size() > 9 ||
          content_length->find_first_not_of("0123456789") != std::string_view::npos) {
        return Reply(c, LoopResponse(400, "Bad Request", "", "bad Content-Length\n"));
      }
      const size_t body = std::stoul(std::string(*content_length));
      if (body > options.max_form_bytes) {
        metrics::CountRefusal(metrics::RefusalCap::kHttpRequestSize);
        return Reply(c, LoopResponse(413, "Payload Too Large", "", "the form is too large\n"));
      }
      length += body;
      if (c.in.size() < length) {
        if (c.peer_closed) return Close(c);
        return;
      }
    } else if (transfer_encoding || (content_length && *content_length != "0")) {
      // A body on GET or HEAD is never read: serve the request, then close rather than parse the body as
      // the next request.
      c.close_after_write = true;
      c.in.resize(length);
    }
    if (dispatched >= options.workers + options.max_queued) {
      metrics::CountRefusal(metrics::RefusalCap::kHttpQueue);
      return Reply(c, LoopResponse(503, "Service Unavailable", "Retry-After: 1\r\n", "too many requests at once\n"));
    }
    c.request = c.in.substr(0, length);
    c.in.erase(0, length);
    if (c.peer_closed || c.served + 1 >= options.max_requests_per_connection) c.close_after_write = true;
    Watch(c, 0);
    c.phase = Phase::kWorking;
    ++dispatched;
    {
      std::lock_guard<std::mutex> lock(mu);
      work.push_back(&c);
    }
    work_ready.notify_one();
  }

  void StartWriting(Connection& c) {
    c.phase = Phase::kWriting;
    c.written = 0;
    c.deadline = Clock::now() + options.write_deadline;
    Watch(c, EPOLLOUT);
    WriteMore(c);
  }

  void WriteMore(Connection& c) {
    while (c.written < c.out.size()) {
      const ssize_t n = http_sockets::Send(c.fd, c.ssl, c.out.data() + c.written, c.out.size() - c.written);
      // Wait for exactly what the socket asked for: TLS may need to read a record before it can write, and
      // watching both would spin on a client's unread bytes for the whole write deadline.
      if (n == http_sockets::kWaitWritable || n == http_sockets::kWaitReadable) {
        Watch(c, n == http_sockets::kWaitWritable ? EPOLLOUT : EPOLLIN);
        return;
      }
      if (n <= 0) return Close(c);
      c.written += static_cast<size_t>(n);
    }
    std::string().swap(c.out);
    if (c.close_after_write) return Close(c);
    c.phase = Phase::kReading;
    c.since = Clock::now();
    c.awaiting_first_byte = c.in.empty();
    c.deadline = c.since + (c.in.empty() ? options.idle_timeout : options.request_deadline);
    Watch(c, EPOLLIN);
    ReadMore(c);  // a pipelined request, or bytes OpenSSL already holds
  }

  void TakeServed() {
    uint64_t count = 0;
    [[maybe_unused]] ssize_t ignored = read(wake_fd, &count, sizeof count);
    std::vector<Connection*> served;
    {
      std::lock_guard<std::mutex> lock(mu);
      served.swap(done);
    }
    for (Connection* c : served) {
      --dispatched;
      ++c->served;
      std::string().swap(c->request);
      if (c->out.empty()) {
        Close(*c);
        continue;
      }
      StartWriting(*c);
    }
  }

  void CloseExpired() {
    const Clock::time_point now = Clock::now();
    std::vector<Connection*> expired;
    for (auto& [fd, c] : connections) {
      if (c->phase != Phase::kWorking && c->deadline <= now) expired.push_back(c.get());
    }
    for (Connection* c : expired) {  // counted: a request (or handshake) too slow, not an idle keep-alive
      const bool idle = c->phase == Phase::kReading && c->in.empty() && c->awaiting_first_byte;
      if (c->phase != Phase::kWriting && !idle) metrics::CountRefusal(metrics::RefusalCap::kHttpDeadline);
      Close(*c);
    }
  }

  void Run() {
    epoll_event events[256];
    Clock::time_point next_sweep = Clock::now();
    while (!stop_loop.load()) {
      const int n = epoll_wait(epoll_fd, events, 256, 100);
      for (int i = 0; i < n; ++i) {
        const int fd = events[i].data.fd;
        if (fd == listen_fd) {
          AcceptAll();
          continue;
        }
        if (fd == wake_fd) {
          TakeServed();
          continue;
        }
        const auto it = connections.find(fd);
        if (it == connections.end()) continue;
        Connection& c = *it->second;
        switch (c.phase) {
          case Phase::kHandshake:
            Handshake(c);
            break;
          case Phase::kReading:
            ReadMore(c);
            break;
          case Phase::kWriting:
            WriteMore(c);
            break;
          case Phase::kWorking:
            break;
        }
      }
      if (Clock::now() >= next_sweep) {
        CloseExpired();
        ResumeAcceptingWhenDue(Clock::now());
        next_sweep = Clock::now() + std::chrono::milliseconds(100);
      }
    }
  }

  void Work() {
    for (;;) {
      Connection* c = nullptr;
      {
        std::unique_lock<std::mutex> lock(mu);
        work_ready.wait(lock, [&] { return stop_workers || !work.empty(); });
        if (stop_workers) return;
        c = work.front();
        work.pop_front();
      }
      std::string out;
      BufferedStream stream(*c, &out);
      bool connection_closed = false;
      const bool written = routes->Serve(stream, c->close_after_write, connection_closed);
      c->out = written ? std::move(out) : std::string();
      c->close_after_write = c->close_after_write || connection_closed;
      {
        std::lock_guard<std::mutex> lock(mu);
        done.push_back(c);
      }
      const uint64_t one = 1;
      [[maybe_unused]] ssize_t ignored = write(wake_fd, &one, sizeof one);
    }
  }
};

StatusOr<std::unique_ptr<HttpConnectionLoop>> HttpConnectionLoop::Start(const HttpLoopOptions& options,
                                                                        HttpRoutes* routes) {
  std::signal(SIGPIPE, SIG_IGN);
  auto s = std::make_unique<State>();
  s->options = options;
  s->routes = routes;
  if (!options.tls_cert_file.empty()) {
    StatusOr<SSL_CTX*> tls = http_sockets::ServerTlsContext(options.tls_cert_file, options.tls_key_file);
    if (!tls.ok()) return tls.status();
    s->tls = *tls;
  }
  StatusOr<int> listen_fd = http_sockets::ListenNonBlocking(options.host, options.port);
  if (!listen_fd.ok()) return listen_fd.status();
  s->listen_fd = *listen_fd;
  sockaddr_storage bound{};
  socklen_t bound_len = sizeof bound;
  getsockname(s->listen_fd, reinterpret_cast<sockaddr*>(&bound), &bound_len);
  std::string ip;
  http_sockets::AddressText(bound, &ip, &s->port);
  s->epoll_fd = epoll_create1(EPOLL_CLOEXEC);
  s->wake_fd = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
  if (s->epoll_fd < 0 || s->wake_fd < 0) {
    return Status::IoError(std::string("cannot start the HTTP loop: ") + std::strerror(errno));
  }
  for (int fd : {s->listen_fd, s->wake_fd}) {
    epoll_event ev{};
    ev.events = EPOLLIN;
    ev.data.fd = fd;
    epoll_ctl(s->epoll_fd, EPOLL_CTL_ADD, fd, &ev);
  }
  routes->set_keep_alive_timeout(std::chrono::duration_cast<std::chrono::seconds>(options.idle_timeout).count());
  routes->set_keep_alive_max_count(options.max_requests_per_connection);
  State& state = *s;
  for (size_t i = 0; i < options.workers; ++i) state.workers.emplace_back([&state] { state.Work(); });
  state.loop = std::thread([&state] { state.Run(); });
  return std::unique_ptr<HttpConnectionLoop>(new HttpConnectionLoop(std::move(s)));
}

HttpConnectionLoop::HttpConnectionLoop(std::unique_ptr<State> state) : state_(std::move(state)) {}

HttpConnectionLoop::~HttpConnectionLoop() { Stop(); }

int HttpConnectionLoop::port() const { return state_->port; }

void HttpConnectionLoop::Stop() {
  State& s = *state_;
  if (s.stopped) return;
  s.stopped = true;
  // The loop first, so that nothing new is dispatched; then the workers finish what they hold. Connections
  // are closed only after both, since a worker may still read one.
  s.stop_loop = true;
  const uint64_t one = 1;
  [[maybe_unused]] ssize_t ignored = write(s.wake_fd, &one, sizeof one);
  if (s.loop.joinable()) s.loop.join();
  {
    std::lock_guard<std::mutex> lock(s.mu);
    s.stop_workers = true;
  }
  s.work_ready.notify_all();
  for (std::thread& t : s.workers) t.join();
}

}  // namespace xladb::service
