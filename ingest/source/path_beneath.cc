#include "ingest/source/path_beneath.h"

#include <fcntl.h>
#include <linux/openat2.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <string>

namespace xladb::ingest {

UniqueFd& UniqueFd::operator=(UniqueFd&& other) noexcept {
  if (this != &other) {
    if (fd_ >= 0) ::close(fd_);
    fd_ = other.Release();
  }
  return *this;
}

UniqueFd::~UniqueFd() {
  if (fd_ >= 0) ::close(fd_);
}

namespace {

// openat() that reports a symlink met where a folder was expected as ELOOP, like openat2 does, rather than
// the ENOTDIR that O_DIRECTORY | O_NOFOLLOW gives for it.
int OpenComponent(int dir_fd, const std::string& name, int flags) {
  int fd = ::openat(dir_fd, name.c_str(), flags | O_NOFOLLOW | O_CLOEXEC);
  if (fd >= 0) return fd;
  int error = errno;
  struct stat st;
  if (error == ENOTDIR && ::fstatat(dir_fd, name.c_str(), &st, AT_SYMLINK_NOFOLLOW) == 0 && S_ISLNK(st.st_mode)) {
    error = ELOOP;
  }
  return -error;
}

}  // namespace

int OpenFdBeneathByWalk(int dir_fd, std::string_view relative, int flags) {
  if (relative.find('\0') != std::string_view::npos) return -EINVAL;
  if (!relative.empty() && relative.front() == '/') return -EXDEV;
  UniqueFd held;  // the folder reached so far, when it is not dir_fd
  int current = dir_fd;
  std::string pending;  // the last component seen, opened once the next one shows it is a folder
  size_t start = 0;
  while (start <= relative.size()) {
    size_t end = relative.find('/', start);
    if (end == std::string_view::npos) end = relative.size();
    std::string_view part = relative.substr(start, end - start);
    start = end + 1;
    if (part.empty() || part == ".") continue;
    if (part == "..") return -EXDEV;
    if (!pending.empty()) {
      int fd = OpenComponent(current, pending, O_PATH | O_DIRECTORY);
      if (fd < 0) return fd;
      held = UniqueFd(fd);
      current = fd;
    }
    pending = std::string(part);
  }
  return OpenComponent(current, pending.empty() ? std::string(".") : pending, flags);
}

int OpenFdBeneath(int dir_fd, std::string_view relative, int flags) {
  static std::atomic<bool> no_openat2{false};
  if (!no_openat2.load(std::memory_order_relaxed)) {
    if (relative.find('\0') != std::string_view::npos) return -EINVAL;
    std::string path = relative.empty() ? std::string(".") : std::string(relative);
    struct open_how how = {};
    how.flags = static_cast<uint64_t>(flags | O_CLOEXEC);
    how.resolve = RESOLVE_BENEATH | RESOLVE_NO_SYMLINKS;
    // EAGAIN: a rename somewhere in the file system raced with the RESOLVE_BENEATH check; the kernel asks
    // for a retry.
    for (int attempt = 0; attempt < 16; ++attempt) {
      long fd = ::syscall(SYS_openat2, dir_fd, path.c_str(), &how, sizeof how);
      if (fd >= 0) return static_cast<int>(fd);
      if (errno == EAGAIN || errno == EINTR) continue;
      if (errno != ENOSYS) return -errno;
      no_openat2.store(true, std::memory_order_relaxed);
      break;
    }
    if (!no_openat2.load(std::memory_order_relaxed)) return -EAGAIN;
  }
  return OpenFdBeneathByWalk(dir_fd, relative, flags);
}

}  // namespace xladb::ingest
