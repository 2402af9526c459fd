#include "service/http_sockets.h"

#include <arpa/inet.h>
#include <netdb.h>
#include <netinet/in.h>
#include <openssl/err.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>

namespace xladb::service::http_sockets {
namespace {

ssize_t TlsResult(SSL* ssl, int r) {
  if (r > 0) return r;
  switch (SSL_get_error(ssl, r)) {
    case SSL_ERROR_WANT_READ:
      return kWaitReadable;
    case SSL_ERROR_WANT_WRITE:
      return kWaitWritable;
    case SSL_ERROR_ZERO_RETURN:
      return 0;
    default:
      ERR_clear_error();
      return kBroken;
  }
}

Status ListenError(const std::string& host, int port, const std::string& why) {
  return Status::IoError("cannot listen for HTTP on " + host + ":" + std::to_string(port) + " (" + why + ")");
}

}  // namespace

StatusOr<int> ListenNonBlocking(const std::string& host, int port) {
  addrinfo hints{};
  hints.ai_family = AF_UNSPEC;
  hints.ai_socktype = SOCK_STREAM;
  hints.ai_flags = AI_PASSIVE | AI_NUMERICSERV;
  addrinfo* found = nullptr;
  if (const int r = getaddrinfo(host.c_str(), std::to_string(port).c_str(), &hints, &found); r != 0) {
    return ListenError(host, port, gai_strerror(r));
  }
  int listen_fd = -1;
  std::string why = "no address";
  for (addrinfo* a = found; a != nullptr && listen_fd < 0; a = a->ai_next) {
    const int fd = socket(a->ai_family, a->ai_socktype | SOCK_NONBLOCK | SOCK_CLOEXEC, a->ai_protocol);
    if (fd < 0) continue;
    const int one = 1;
    setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
    if (bind(fd, a->ai_addr, a->ai_addrlen) == 0 && listen(fd, SOMAXCONN) == 0) {
      listen_fd = fd;
    } else {
      why = std::strerror(errno);
      close(fd);
    }
  }
  freeaddrinfo(found);
  if (listen_fd < 0) return ListenError(host, port, why);
  return listen_fd;
}

StatusOr<SSL_CTX*> ServerTlsContext(const std::string& cert_file, const std::string& key_file) {
  SSL_CTX* tls = SSL_CTX_new(TLS_server_method());
  if (tls == nullptr || SSL_CTX_set_min_proto_version(tls, TLS1_2_VERSION) != 1 ||
      SSL_CTX_use_certificate_chain_file(tls, cert_file.c_str()) != 1 ||
      SSL_CTX_use_PrivateKey_file(tls, key_file.c_str(), SSL_FILETYPE_PEM) != 1 ||
      SSL_CTX_check_private_key(tls) != 1) {
    if (tls != nullptr) SSL_CTX_free(tls);
    ERR_clear_error();
    return Status::IoError("cannot serve HTTPS with " + cert_file);
  }
  // The loop retries a write with the rest of its buffer, which may have moved; partial writes keep a
  // large response from waiting on one big record.
  SSL_CTX_set_mode(tls, SSL_MODE_ENABLE_PARTIAL_WRITE | SSL_MODE_ACCEPT_MOVING_WRITE_BUFFER);
  // A client-initiated renegotiation costs the one loop thread a handshake per request: refused.
  SSL_CTX_set_options(tls, SSL_OP_NO_RENEGOTIATION);
  return tls;
}

ssize_t Receive(int fd, SSL* ssl, char* buffer, size_t size) {
  if (ssl != nullptr) return TlsResult(ssl, SSL_read(ssl, buffer, static_cast<int>(size)));
  for (;;) {
    const ssize_t n = recv(fd, buffer, size, 0);
    if (n >= 0) return n;
    if (errno == EINTR) continue;
    return errno == EAGAIN || errno == EWOULDBLOCK ? kWaitReadable : kBroken;
  }
}

ssize_t Send(int fd, SSL* ssl, const char* data, size_t size) {
  if (ssl != nullptr) return TlsResult(ssl, SSL_write(ssl, data, static_cast<int>(std::min<size_t>(size, 1 << 20))));
  for (;;) {
    const ssize_t n = send(fd, data, size, MSG_NOSIGNAL);
    if (n > 0) return n;
    if (n < 0 && errno == EINTR) continue;
    return n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK) ? kWaitWritable : kBroken;
  }
}

void AddressText(const sockaddr_storage& a, std::string* ip, int* port) {
  char text[INET6_ADDRSTRLEN] = "";
  if (a.ss_family == AF_INET) {
    const auto* v4 = reinterpret_cast<const sockaddr_in*>(&a);
    inet_ntop(AF_INET, &v4->sin_addr, text, sizeof text);
    *port = ntohs(v4->sin_port);
  } else if (a.ss_family == AF_INET6) {
    const auto* v6 = reinterpret_cast<const sockaddr_in6*>(&a);
    inet_ntop(AF_INET6, &v6->sin6_addr, text, sizeof text);
    *port = ntohs(v6->sin6_port);
  }
  *ip = text;
}

}  // namespace xladb::service::http_sockets
