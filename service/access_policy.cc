#include "service/access_policy.h"

#include <climits>
#include <cstdlib>
#include <cstring>
#include <fstream>

namespace xladb::service {
namespace {

StatusOr<std::string> RealPath(const std::string& path) {
  char buf[PATH_MAX];
  if (::realpath(path.c_str(), buf) == nullptr) {
    return Status::NotFound("cannot resolve " + path + ": " + std::strerror(errno));
  }
  return std::string(buf);
}

bool ConstantTimeEquals(const std::string& a, const std::string& b) {
  // Compare over the longer length so the time depends on neither the content nor a common prefix.
  size_t n = std::max(a.size(), b.size());
  unsigned char diff = static_cast<unsigned char>(a.size() != b.size());
  for (size_t i = 0; i < n; ++i) {
    unsigned char x = i < a.size() ? static_cast<unsigned char>(a[i]) : 0;
    unsigned char y = i < b.size() ? static_cast<unsigned char>(b[i]) : 0;
    diff |= static_cast<unsigned char>(x ^ y);
  }
  return diff == 0;
}

}  // namespace

StatusOr<AccessPolicy> AccessPolicy::Create(std::string token, const std::vector<std::string>& allowed_roots) {
  AccessPolicy p;
  p.token_ = std::move(token);
  for (const auto& root : allowed_roots) {
    auto real = RealPath(root);
    if (!real.ok()) return Status::InvalidArgument("--allow-root " + root + ": " + real.status().message());
    std::string r = real.value();
    while (r.size() > 1 && r.back() == '/') r.pop_back();
    p.roots_.push_back(r);
  }
  return p;
}

Status AccessPolicy::CheckToken(const std::string& authorization_header) const {
  if (token_.empty()) return Status::Ok();
  static const std::string kBearer = "Bearer ";
  if (authorization_header.compare(0, kBearer.size(), kBearer) != 0 ||
      !ConstantTimeEquals(authorization_header.substr(kBearer.size()), token_)) {
    return Status::PermissionDenied("missing or wrong bearer token (send 'authorization: Bearer <token>')");
  }
  return Status::Ok();
}

StatusOr<std::string> AccessPolicy::ResolveAllowedPath(const std::string& path) const {
  if (roots_.empty()) {
    return Status::PermissionDenied("IngestPath is disabled: the server has no --allow-root");
  }
  auto real = RealPath(path);
  if (!real.ok()) return real.status();
  const std::string& r = real.value();
  for (const auto& root : roots_) {
    if (r == root || (r.size() > root.size() && r.compare(0, root.size(), root) == 0 &&
                      (root == "/" || r[root.size()] == '/'))) {
      return r;
    }
  }
  return Status::PermissionDenied(path + " (resolved to " + r + ") is outside the allowed roots");
}

StatusOr<std::string> ReadTokenFile(const std::string& path) {
  std::ifstream in(path);
  if (!in) return Status::NotFound("cannot read token file " + path);
  std::string line;
  std::getline(in, line);
  while (!line.empty() && (line.back() == '\r' || line.back() == ' ' || line.back() == '\t')) line.pop_back();
  size_t start = line.find_first_not_of(" \t");
  if (start == std::string::npos) return Status::InvalidArgument("token file " + path + " is empty");
  return line.substr(start);
}

}  // namespace xladb::service
