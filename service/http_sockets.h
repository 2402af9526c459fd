// Non-blocking socket I/O for HttpConnectionLoop (service/http_connection_loop.h), plain or TLS.
//
//   * ListenNonBlocking: a non-blocking listening socket on host:port (port 0: the kernel picks), with
//     SO_REUSEADDR (rebinding past TIME_WAIT) but never SO_REUSEPORT: a busy port is an error, not shared.
//   * ServerTlsContext: an OpenSSL server context (TLS 1.2 at least) for a PEM certificate chain and key,
//     with partial writes enabled and renegotiation refused; the caller frees it with SSL_CTX_free.
//   * Receive / Send: one recv/send (or SSL_read/SSL_write when `ssl` is set) on a non-blocking socket.
//     They return the bytes moved (> 0), 0 at the end of the stream (Receive), kBroken, or which readiness
//     to wait for before calling again: kWaitReadable or kWaitWritable. TLS may want the other direction
//     (SSL_write can need to read a record first); waiting for exactly the one asked keeps a loop from
//     spinning on readiness it does not consume. Send never raises SIGPIPE for a plain socket.
//
// Errors are values (the listening and TLS errors say why); no exceptions. Thread-compatible: one thread per
// socket at a time.
#ifndef XLADB_SERVICE_HTTP_SOCKETS_H_
#define XLADB_SERVICE_HTTP_SOCKETS_H_

#include <openssl/ssl.h>
#include <sys/socket.h>
#include <sys/types.h>

#include <string>

#include "base/status.h"

namespace xladb::service::http_sockets {

constexpr ssize_t kWaitReadable = -1;
constexpr ssize_t kBroken = -2;
constexpr ssize_t kWaitWritable = -3;

// kIoError "cannot listen for HTTP on HOST:PORT (why)".
[[nodiscard]] StatusOr<int> ListenNonBlocking(const std::string& host, int port);
// kIoError "cannot serve HTTPS with CERT".
[[nodiscard]] StatusOr<SSL_CTX*> ServerTlsContext(const std::string& cert_file, const std::string& key_file);

ssize_t Receive(int fd, SSL* ssl, char* buffer, size_t size);
ssize_t Send(int fd, SSL* ssl, const char* data, size_t size);

// The numeric address and port of `address` (IPv4 or IPv6); "" and 0 for another family.
void AddressText(const sockaddr_storage& address, std::string* ip, int* port);

}  // namespace xladb::service::http_sockets

#endif  // XLADB_SERVICE_HTTP_SOCKETS_H_
