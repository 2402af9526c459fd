// HttpConnectionLoop: the accept layer in front of cpp-httplib for `xladbd --http`, so that slow or idle
// clients cannot starve the pages.
//
// cpp-httplib 0.11 gives each connection a worker thread from accept to close, and bounds reads only per
// recv(): a client that sends one header line every two seconds holds a worker forever, and eight of them
// take every page down. Here one thread owns every socket (epoll, non-blocking, TLS included) and hands the
// worker pool only COMPLETE requests, already in memory; the response comes back as bytes that the same
// thread writes out. A worker therefore never waits on a client.
//
// Contract
//   * Deadlines: a connection must deliver a complete request (TLS handshake, request line, headers and any
//     allowed body) within `request_deadline` of its accept, or of the first byte after a response; it may
//     sit idle between requests for `idle_timeout`; a response must be written within `write_deadline`.
//     A connection past its deadline is closed without an answer.
//   * At most `max_connections` open. A new connection is never refused: at the cap the oldest idle
//     connection is closed to make room, else the one whose unfinished request began first, else the oldest
//     still writing. Connections whose request is being served are never closed.
//   * Headers are capped (`max_header_bytes`: 431 and close). GET and HEAD have no body; a POST is accepted
//     only on `form_paths`, with a Content-Length of at most `max_form_bytes` (413 past it, 411 without
//     one); every other method, and POST elsewhere, is 405 and close, whatever its body. None of them is read.
//   * At most `max_queued` complete requests wait for a worker; past that, 503 and close.
//   * The routes are an HttpRoutes (an httplib::Server whose handlers are registered and whose own listen is
//     never called); its handlers run on the worker threads, `workers` at once.
//   * TLS when `tls_cert_file`/`tls_key_file` are set: handshake, reads and writes are non-blocking OpenSSL
//     calls on the loop thread. Start ignores SIGPIPE for the process (a peer that closes mid-write must not
//     kill the daemon; OpenSSL writes with write(2)).
//   * Start binds before returning (port 0 picks a free one: port() says which) and returns kIoError naming
//     the address when it cannot listen or the certificate cannot be loaded. Stop (or destruction) closes
//     every connection and joins the threads; it is safe to call twice. Thread-safe.
#ifndef XLADB_SERVICE_HTTP_CONNECTION_LOOP_H_
#define XLADB_SERVICE_HTTP_CONNECTION_LOOP_H_

#include <httplib.h>

#include <chrono>
#include <memory>
#include <string>
#include <vector>

#include "base/status.h"

namespace xladb::service {

// An httplib::Server that serves one complete request from a Stream; the loop calls it from its workers.
class HttpRoutes : public httplib::Server {
 public:
  // Returns false when the response could not be written; `connection_closed` is set when the request
  // asked to close.
  bool Serve(httplib::Stream& stream, bool close_connection, bool& connection_closed) {
    return process_request(stream, close_connection, connection_closed, nullptr);
  }
};

struct HttpLoopOptions {
  std::string host = "127.0.0.1";
  int port = 0;
  std::string tls_cert_file, tls_key_file;  // both set: HTTPS
  size_t max_connections = 512;
  std::chrono::milliseconds request_deadline{5000};
  std::chrono::milliseconds idle_timeout{5000};
  std::chrono::milliseconds write_deadline{10000};
  size_t max_header_bytes = 16 << 10;
  size_t max_form_bytes = 4 << 10;
  std::vector<std::string> form_paths;  // paths that accept a POST with a small form body
  size_t workers = 8;
  size_t max_queued = 256;
  size_t max_requests_per_connection = 100;
};

class HttpConnectionLoop {
 public:
  // `routes` must outlive the loop.
  [[nodiscard]] static StatusOr<std::unique_ptr<HttpConnectionLoop>> Start(const HttpLoopOptions& options,
                                                                           HttpRoutes* routes);
  ~HttpConnectionLoop();
  HttpConnectionLoop(const HttpConnectionLoop&) = delete;
  HttpConnectionLoop& operator=(const HttpConnectionLoop&) = delete;

  int port() const;
  void Stop();

  struct State;  // http_connection_loop.cc

 private:
  explicit HttpConnectionLoop(std::unique_ptr<State> state);
  std::unique_ptr<State> state_;
};

}  // namespace xladb::service

#endif  // XLADB_SERVICE_HTTP_CONNECTION_LOOP_H_
