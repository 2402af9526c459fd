#include "service/page_sessions.h"

#include <openssl/rand.h>

#include <algorithm>
#include <vector>

namespace xladb::service {

StatusOr<std::string> PageSessions::Create() {
  unsigned char random[32];
  if (RAND_bytes(random, sizeof random) != 1) return Status::Internal("no randomness for a session id");
  static constexpr char kHex[] = "0123456789abcdef";
  std::string id;
  for (unsigned char b : random) {
    id += kHex[b >> 4];
    id += kHex[b & 15];
  }
  const Clock::time_point now = Clock::now();
  std::lock_guard<std::mutex> lock(mu_);
  std::erase_if(expiry_, [&](const auto& entry) { return entry.second <= now; });
  if (expiry_.size() >= max_sessions_) {
    expiry_.erase(std::min_element(expiry_.begin(), expiry_.end(),
                                   [](const auto& a, const auto& b) { return a.second < b.second; }));
  }
  expiry_[id] = now + lifetime_;
  return id;
}

bool PageSessions::Valid(std::string_view cookie_header) {
  // `Cookie: a=1; xladb_session=ID; b=2`: every pair is looked at, so a second cookie of the same name
  // cannot hide a valid one or smuggle an invalid one through.
  std::vector<std::string_view> ids;
  while (!cookie_header.empty()) {
    const size_t end = cookie_header.find(';');
    std::string_view pair = cookie_header.substr(0, end);
    cookie_header = end == std::string_view::npos ? std::string_view() : cookie_header.substr(end + 1);
    while (!pair.empty() && pair.front() == ' ') pair.remove_prefix(1);
    constexpr std::string_view prefix = kCookieName;
    if (pair.size() > prefix.size() && pair.substr(0, prefix.size()) == prefix && pair[prefix.size()] == '=') {
      ids.push_back(pair.substr(prefix.size() + 1));
    }
  }
  const Clock::time_point now = Clock::now();
  std::lock_guard<std::mutex> lock(mu_);
  for (std::string_view id : ids) {
    const auto it = expiry_.find(std::string(id));
    if (it != expiry_.end() && it->second > now) return true;
  }
  return false;
}

std::string PageSessions::SetCookie(const std::string& id, bool tls) const {
  return std::string(kCookieName) + "=" + id + "; Path=/; Max-Age=" + std::to_string(lifetime_.count()) +
         "; HttpOnly; SameSite=Strict" + (tls ? "; Secure" : "");
}

}  // namespace xladb::service
