// PageSessions: the browser sessions of the pages' login form (`xladbd --http` with --token-file).
//
// A browser following a link sends no `Authorization` header, so the login form trades the read token for a
// session cookie. The cookie holds a random session id (256 bits from OpenSSL's RAND_bytes, hex), never the
// token: a leaked cookie expires, and nothing in it can be replayed against gRPC. Sessions live in memory
// only (a restart logs everyone out) and expire `lifetime` after login; at most `max_sessions` are kept, the
// one nearest its expiry dropped first to make room, so a flood of logins costs bounded memory.
//
// Thread-safe.
#ifndef XLADB_SERVICE_PAGE_SESSIONS_H_
#define XLADB_SERVICE_PAGE_SESSIONS_H_

#include <chrono>
#include <map>
#include <mutex>
#include <string>
#include <string_view>

#include "base/status.h"

namespace xladb::service {

class PageSessions {
 public:
  static constexpr const char kCookieName[] = "xladb_session";

  explicit PageSessions(std::chrono::seconds lifetime = std::chrono::hours(12), size_t max_sessions = 10000)
      : lifetime_(lifetime), max_sessions_(max_sessions) {}

  // A new session id; kInternal only when the system has no randomness to give.
  [[nodiscard]] StatusOr<std::string> Create();

  // Whether the `Cookie:` header value carries a live session.
  bool Valid(std::string_view cookie_header);

  // The `Set-Cookie` value for `id`: HttpOnly, SameSite=Strict, Path=/, Max-Age, and Secure when `tls`.
  std::string SetCookie(const std::string& id, bool tls) const;

 private:
  using Clock = std::chrono::steady_clock;
  const std::chrono::seconds lifetime_;
  const size_t max_sessions_;
  std::mutex mu_;
  std::map<std::string, Clock::time_point> expiry_;  // guarded by mu_
};

}  // namespace xladb::service

#endif  // XLADB_SERVICE_PAGE_SESSIONS_H_
