// Opening paths beneath a folder's file descriptor, never through a symlink and never outside it, at the
// moment of use: a path checked earlier and swapped for a symlink since is refused, not followed.
//
// Contract
//   * OpenFdBeneath() resolves `relative` ('/'-separated, below `dir_fd`; "" is `dir_fd` itself, opened
//     again) with openat2(RESOLVE_BENEATH | RESOLVE_NO_SYMLINKS). Where the kernel has no openat2 (ENOSYS) it
//     walks one component at a time with O_NOFOLLOW, refusing every ".." component.
//   * Returns a new file descriptor (opened with `flags` | O_CLOEXEC), or -errno: -ELOOP when a component is
//     a symlink, -EXDEV when the path leaves `dir_fd` (absolute, or ".." past it), else the open's own error.
//   * Thread-safe; no state besides the file descriptors it returns, which the caller owns.
#ifndef XLADB_INGEST_SOURCE_PATH_BENEATH_H_
#define XLADB_INGEST_SOURCE_PATH_BENEATH_H_

#include <string_view>

namespace xladb::ingest {

// Owns one file descriptor; closes it when destroyed. -1 holds none.
class UniqueFd {
 public:
  UniqueFd() = default;
  explicit UniqueFd(int fd) : fd_(fd) {}
  UniqueFd(UniqueFd&& other) noexcept : fd_(other.Release()) {}
  UniqueFd& operator=(UniqueFd&& other) noexcept;
  UniqueFd(const UniqueFd&) = delete;
  UniqueFd& operator=(const UniqueFd&) = delete;
  ~UniqueFd();

  int get() const { return fd_; }
  bool valid() const { return fd_ >= 0; }
  int Release() {
    int fd = fd_;
    fd_ = -1;
    return fd;
  }

 private:
  int fd_ = -1;
};

int OpenFdBeneath(int dir_fd, std::string_view relative, int flags);

// The O_NOFOLLOW walk OpenFdBeneath() falls back to; public so that its test runs on kernels with openat2.
int OpenFdBeneathByWalk(int dir_fd, std::string_view relative, int flags);

}  // namespace xladb::ingest

#endif  // XLADB_INGEST_SOURCE_PATH_BENEATH_H_
