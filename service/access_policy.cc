#include "service/access_policy.h"

#include <fcntl.h>
#include <linux/openat2.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <cctype>
#include <cerrno>
#include <climits>
#include <cstdio>
#include <filesystem>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <optional>
#include <string_view>

namespace xladb::service {
namespace {

// One answer for "outside the roots" and "does not exist there": no oracle for files outside, and no
// resolved path echoed.
Status OutsideTheRoots(const std::string& path) {
  return Status::PermissionDenied(path + " is not under an allowed root (--allow-root), or does not exist");
}

StatusOr<std::string> RealPath(const std::string& path) {
  char buf[PATH_MAX];
  if (::realpath(path.c_str(), buf) == nullptr) {
    return Status::NotFound("cannot resolve " + path + ": " + std::strerror(errno));
  }
  return std::string(buf);
}

bool ConstantTimeEquals(std::string_view a, std::string_view b) {
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

// The credentials of `Bearer <credentials>`: the scheme in any case (RFC 9110 11.1), then one or more spaces.
std::optional<std::string_view> BearerCredentials(std::string_view header) {
  constexpr std::string_view kScheme = "bearer";
  if (header.size() <= kScheme.size()) return std::nullopt;
  for (size_t i = 0; i < kScheme.size(); ++i) {
    if (std::tolower(static_cast<unsigned char>(header[i])) != kScheme[i]) return std::nullopt;
  }
  size_t start = kScheme.size();
  if (header[start] != ' ') return std::nullopt;
  while (start < header.size() && header[start] == ' ') ++start;
  return header.substr(start);
}

}  // namespace

StatusOr<AccessPolicy> AccessPolicy::Create(std::string read_token, std::string admin_token,
                                            const std::vector<std::string>& allowed_roots) {
  if (!read_token.empty() && read_token == admin_token) {
    return Status::InvalidArgument("--token-file and --admin-token-file hold the same token: give readers another");
  }
  AccessPolicy p;
  p.read_token_ = std::move(read_token);
  p.admin_token_ = std::move(admin_token);
  for (const auto& root : allowed_roots) {
    auto real = RealPath(root);
    if (!real.ok()) return Status::InvalidArgument("--allow-root " + root + ": " + real.status().message());
    std::string r = real.value();
    while (r.size() > 1 && r.back() == '/') r.pop_back();
    p.roots_.push_back(r);
  }
  return p;
}

Status AccessPolicy::Authorize(const std::string& authorization_header, Right right) const {
  const bool open_for_this = right == Right::kRead ? read_token_.empty() : read_token_.empty() && admin_token_.empty();
  if (open_for_this) return Status::Ok();
  // Without an admin token the read token keeps every right.
  const std::string& write_token = admin_token_.empty() ? read_token_ : admin_token_;
  const std::optional<std::string_view> presented = BearerCredentials(authorization_header);
  // Both comparisons always run, so the time says nothing about which token (if any) came close.
  const bool is_read = presented && !read_token_.empty() && ConstantTimeEquals(*presented, read_token_);
  const bool is_write = presented && ConstantTimeEquals(*presented, write_token);
  if (is_write || (right == Right::kRead && is_read)) return Status::Ok();
  if (right == Right::kWrite && is_read) {
    return Status::PermissionDenied(
        "this call changes the store (upload, ingest, label, delete, prune) and needs the admin token; "
        "the read token may only read");
  }
  return Status::PermissionDenied(right == Right::kWrite && !admin_token_.empty()
                                      ? "missing or wrong bearer token: this call needs the admin token "
                                        "(send 'authorization: Bearer <token>')"
                                      : "missing or wrong bearer token (send 'authorization: Bearer <token>')");
}

StatusOr<AllowedPath> AccessPolicy::FindRoot(const std::string& path) const {
  if (roots_.empty()) return Status::PermissionDenied("IngestPath is disabled: the server has no --allow-root");
  if (path.empty() || path.front() != '/') return Status::InvalidArgument("path must be absolute: " + path);
  // Lexically first: `..` cannot climb out, and nothing outside the roots is ever looked at.
  std::string normal = std::filesystem::path(path).lexically_normal().string();
  while (normal.size() > 1 && normal.back() == '/') normal.pop_back();
  for (const auto& root : roots_) {
    if (normal == root) return AllowedPath{root, ""};
    if (normal.size() > root.size() && normal.compare(0, root.size(), root) == 0 &&
        (root == "/" || normal[root.size()] == '/')) {
      return AllowedPath{root, normal.substr(root == "/" ? 1 : root.size() + 1)};
    }
  }
  return OutsideTheRoots(path);
}

StatusOr<std::string> AccessPolicy::ResolveAllowedPath(const std::string& path) const {
  auto found = FindRoot(path);
  if (!found.ok()) return found.status();
  const AllowedPath& allowed = found.value();
  int root_fd = ::open(allowed.root.c_str(), O_PATH | O_DIRECTORY | O_CLOEXEC);
  if (root_fd < 0) return OutsideTheRoots(path);
  // Symlinks inside the root may be followed while they stay beneath it; one that leads out (EXDEV) reads
  // the same as a path outside the roots, whether its target exists or not.
  open_how how{};
  how.flags = O_PATH | O_CLOEXEC;
  how.resolve = RESOLVE_BENEATH | RESOLVE_NO_MAGICLINKS;
  int fd = allowed.relative.empty() ? ::dup(root_fd)
                                    : static_cast<int>(::syscall(SYS_openat2, root_fd, allowed.relative.c_str(),
                                                                 &how, sizeof how));
  const int open_errno = errno;
  ::close(root_fd);
  if (fd < 0 && open_errno == ENOSYS) {
    // A kernel without openat2 (before 5.6): resolve with realpath and check the result lexically. The job
    // still opens the path beneath its root without following symlinks (ingest/source/path_beneath.h walks then).
    auto real = RealPath(path);
    if (!real.ok()) return OutsideTheRoots(path);
    auto again = FindRoot(real.value());
    if (!again.ok() || again->root != allowed.root) return OutsideTheRoots(path);
    return real.value();
  }
  if (fd < 0) {
    if (open_errno == ENOENT || open_errno == ENOTDIR) return Status::NotFound(path + " does not exist");
    return OutsideTheRoots(path);
  }
  char link[64], target[PATH_MAX];
  std::snprintf(link, sizeof link, "/proc/self/fd/%d", fd);
  ssize_t n = ::readlink(link, target, sizeof target - 1);
  ::close(fd);
  if (n <= 0) return OutsideTheRoots(path);
  return std::string(target, static_cast<size_t>(n));
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
