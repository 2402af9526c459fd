#include "service/run_folder_watcher.h"

#include <dirent.h>
#include <poll.h>
#include <sys/eventfd.h>
#include <sys/inotify.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <climits>
#include <cstring>
#include <filesystem>
#include <map>
#include <set>
#include <string_view>
#include <unordered_map>
#include <utility>

#include "ingest/source/dump_source.h"

namespace xladb::service {
namespace {

namespace fs = std::filesystem;
using Clock = std::chrono::steady_clock;

// One mask for every folder: the roots (whose file children may be archives being written) and the folders
// of runs. IN_ONLYDIR | IN_DONT_FOLLOW make a symlink unwatchable, so no watch ever leaves the roots.
constexpr uint32_t kWatchMask = IN_CREATE | IN_MOVED_TO | IN_MODIFY | IN_CLOSE_WRITE | IN_DELETE | IN_MOVED_FROM |
                                IN_DELETE_SELF | IN_MOVE_SELF | IN_ONLYDIR | IN_DONT_FOLLOW | IN_EXCL_UNLINK;
constexpr uint32_t kAppeared = IN_CREATE | IN_MOVED_TO;
constexpr uint32_t kGone = IN_DELETE | IN_MOVED_FROM;
constexpr uint32_t kChanged = kAppeared | kGone | IN_MODIFY | IN_CLOSE_WRITE;

std::string JoinPath(const std::string& dir, std::string_view name) {
  std::string path = dir;
  path += '/';
  path += name;
  return path;
}

bool StartsWith(std::string_view s, std::string_view prefix) {
  return s.size() >= prefix.size() && s.substr(0, prefix.size()) == prefix;
}

// True when `path` is `dir` or lies below it (both normalized, without a trailing '/').
bool IsSameOrUnder(const std::string& path, const std::string& dir) {
  return path == dir || (dir == "/" ? true : StartsWith(path, dir + "/"));
}

Status WatchLimitReached(const std::string& dir) {
  return Status::ResourceExhausted("cannot watch " + dir +
                                   ": the inotify watch limit is reached (raise the sysctl "
                                   "fs.inotify.max_user_watches)");
}

// The absolute, normalized form of a root the user named, checked to be an existing folder.
StatusOr<std::string> NormalizeRoot(const std::string& root) {
  if (root.empty()) return Status::InvalidArgument("a watch root is the empty string");
  std::error_code ec;
  fs::path absolute = fs::absolute(root, ec);
  if (ec) return Status::IoError("cannot resolve watch root " + root + ": " + ec.message());
  std::string path = absolute.lexically_normal().string();
  while (path.size() > 1 && path.back() == '/') path.pop_back();
  struct stat st;
  if (::stat(path.c_str(), &st) != 0) {
    if (errno == ENOENT || errno == ENOTDIR) return Status::NotFound("watch root " + root + " does not exist");
    return Status::IoError("cannot read watch root " + root + ": " + std::strerror(errno));
  }
  if (!S_ISDIR(st.st_mode)) return Status::InvalidArgument("watch root " + root + " is not a folder");
  return path;
}

}  // namespace

// Everything the watcher's thread owns: the inotify descriptor, which folder each watch is, the runs and their
// quiet-period deadlines. Start() fills it (Setup) before the thread exists; afterwards only the thread
// touches it, except for the two atomic counters.
class RunFolderWatcher::Loop {
 public:
  Loop(WatchOptions options, RunReadyCallback on_ready, int inotify_fd)
      : options_(std::move(options)), on_ready_(std::move(on_ready)), inotify_fd_(inotify_fd) {
    for (const std::string& path : options_.roots) roots_.push_back(Root{path, false});
  }
  ~Loop() { ::close(inotify_fd_); }

  // Watches every root and every folder of every run; every run found is due at once (catch-up).
  Status Setup() {
    for (size_t i = 0; i < roots_.size(); ++i) {
      if (Status s = WatchRoot(i); !s.ok()) return s;
    }
    for (size_t i = 0; i < roots_.size(); ++i) {
      if (Status s = ScanRoot(i, Arrival::kCatchUp); !s.ok()) return s;
    }
    setup_done_ = true;
    return Status::Ok();
  }

  int inotify_fd() const { return inotify_fd_; }

  // Reads one buffer of events (more wait for the next poll) and applies them.
  void ReadEvents() {
    ssize_t n = ::read(inotify_fd_, event_buffer_, sizeof(event_buffer_));
    if (n <= 0) return;  // EAGAIN or EINTR: nothing to read now
    for (ssize_t at = 0; at < n;) {
      const auto* event = reinterpret_cast<const struct inotify_event*>(event_buffer_ + at);
      HandleEvent(*event);
      at += static_cast<ssize_t>(sizeof(struct inotify_event) + event->len);
    }
  }

  // The poll() timeout until the earliest deadline: -1 when no run is pending, rounded up so that the
  // thread never wakes before a deadline (no spinning).
  int PollTimeoutMs() const {
    if (pending_.empty()) return -1;
    Clock::time_point now = Clock::now();
    Clock::time_point earliest = Clock::time_point::max();
    for (const std::string& path : pending_) {
      const RunState& run = runs_.at(path);
      if (run.ready_now) return 0;
      earliest = std::min(earliest, run.deadline);
    }
    if (earliest <= now) return 0;
    auto ms = std::chrono::ceil<std::chrono::milliseconds>(earliest - now).count();
    return static_cast<int>(std::min<int64_t>(ms, INT_MAX));
  }

  // Calls back for every run whose time has come, in path order, checking `stop` before each call.
  void ReportDue(const std::atomic<bool>& stop) {
    Clock::time_point now = Clock::now();
    std::vector<std::string> due;
    for (const std::string& path : pending_) {
      const RunState& run = runs_.at(path);
      if (run.ready_now || run.deadline <= now) due.push_back(path);
    }
    for (const std::string& path : due) {
      if (stop.load()) return;
      auto it = runs_.find(path);
      if (it == runs_.end()) continue;
      RunState& run = it->second;
      if (run.is_archive && !run.ready_now) {
        // Size must have held still over the quiet period, also for writes inotify does not see.
        struct stat st;
        if (::lstat(path.c_str(), &st) != 0 || !S_ISREG(st.st_mode)) {
          ForgetRun(path);
          continue;
        }
        if (st.st_size != run.archive_size) {
          run.archive_size = st.st_size;
          run.deadline = now + options_.quiet_period;
          continue;
        }
      }
      run.ready_now = false;
      pending_.erase(path);
      std::string name = run.name;
      runs_reported_.fetch_add(1, std::memory_order_relaxed);
      if (!on_ready_(path, name)) {
        // Not taken: again after retry_after (a change meanwhile sets its deadline anew, as for any run).
        auto still = runs_.find(path);
        if (still != runs_.end()) {
          still->second.deadline = Clock::now() + options_.retry_after;
          pending_.insert(path);
        }
      }
    }
  }

  int64_t runs_reported() const { return runs_reported_.load(std::memory_order_relaxed); }
  int64_t watch_failures() const { return watch_failures_.load(std::memory_order_relaxed); }

 private:
  struct Root {
    std::string path;
    bool watched = false;
  };
  struct WatchedFolder {
    std::string path;
    size_t root = 0;
    std::string run;  // the path of the run this folder belongs to; empty for a root
  };
  struct RunState {
    std::string name;
    bool is_archive = false;
    bool ready_now = false;        // due regardless of the deadline (catch-up, marker)
    Clock::time_point deadline{};  // when pending: the end of the quiet period
    int64_t archive_size = -1;     // archives: the size seen at the last change
    std::set<std::string> markers;  // folders: the marker files known to be there, so that one marker seen
                                    // both by a scan and by its creation event reports the run only once
  };
  // How a run came to our attention, which decides when it is due.
  enum class Arrival {
    kCatchUp,  // existed at start: due at once
    kNew,      // appeared while watching: due after the quiet period, or at once when it holds a marker
    kRescan,   // found again after an event overflow: due after the quiet period
  };

  Status WatchRoot(size_t index) {
    const std::string& path = roots_[index].path;
    int wd = ::inotify_add_watch(inotify_fd_, path.c_str(), kWatchMask);
    if (wd < 0) {
      if (errno == ENOSPC) return WatchLimitReached(path);
      if (errno == ENOENT) return Status::NotFound("watch root " + path + " does not exist");
      return Status::IoError("cannot watch root " + path + ": " + std::strerror(errno));
    }
    auto [it, inserted] = folders_.try_emplace(wd, WatchedFolder{path, index, ""});
    if (!inserted) {
      return Status::InvalidArgument("watch roots " + it->second.path + " and " + path + " are the same folder");
    }
    wd_by_path_[path] = wd;
    roots_[index].watched = true;
    return Status::Ok();
  }

  // Adds every child of a root as a run, in name order.
  Status ScanRoot(size_t index, Arrival arrival) {
    const std::string& root = roots_[index].path;
    DIR* dir = ::opendir(root.c_str());
    if (dir == nullptr) {
      return Status::IoError("cannot list watch root " + root + ": " + std::strerror(errno));
    }
    std::vector<std::string> names;
    while (const struct dirent* entry = ::readdir(dir)) {
      std::string_view name = entry->d_name;
      if (name != "." && name != "..") names.emplace_back(name);
    }
    ::closedir(dir);
    std::sort(names.begin(), names.end());
    for (const std::string& name : names) {
      if (Status s = AddRun(index, JoinPath(root, name), arrival); !s.ok()) return s;
    }
    return Status::Ok();
  }

  // `path` (a child of root `index`) becomes a run if it is a folder or an archive file; a folder is watched
  // with everything below it. Anything else (a symlink, a plain dump file, a partial download) is ignored.
  Status AddRun(size_t index, const std::string& path, Arrival arrival) {
    struct stat st;
    if (::lstat(path.c_str(), &st) != 0) return Status::Ok();  // gone already
    bool is_folder = S_ISDIR(st.st_mode);
    if (!is_folder && !S_ISREG(st.st_mode)) return Status::Ok();
    auto source = ingest::DumpSource::Open(path);  // stat only: decides the type and the run name
    if (!source.ok()) return Status::Ok();
    if (!is_folder && (*source)->type() != ingest::DumpSource::Type::kArchive) return Status::Ok();
    if (is_folder) {
      if (Status s = WatchTree(path, index, path); !s.ok()) return s;
      if (wd_by_path_.count(path) == 0) return Status::Ok();  // vanished, or unreadable: not a run we can use
    }
    RunState& run = runs_[path];
    run.name = (*source)->DefaultRunName();
    run.is_archive = !is_folder;
    if (is_folder) run.markers = MarkersIn(path);
    switch (arrival) {
      case Arrival::kCatchUp:
        MarkReadyNow(path);
        break;
      case Arrival::kNew:
        if (!run.markers.empty()) {
          MarkReadyNow(path);
        } else {
          MarkChanged(path);
        }
        break;
      case Arrival::kRescan:
        MarkChanged(path);
        break;
    }
    return Status::Ok();
  }

  // Watches `top` and every folder below it (not through symlinks), listing each folder right after its
  // watch exists so that a subfolder created before the watch is not missed. Only the watch limit is an error.
  Status WatchTree(const std::string& top, size_t root, const std::string& run) {
    std::vector<std::string> stack{top};
    while (!stack.empty()) {
      std::string path = std::move(stack.back());
      stack.pop_back();
      int wd = ::inotify_add_watch(inotify_fd_, path.c_str(), kWatchMask);
      if (wd < 0) {
        if (errno != ENOSPC) continue;  // vanished, a symlink (IN_DONT_FOLLOW), or no permission
        if (setup_done_) {
          watch_failures_.fetch_add(1, std::memory_order_relaxed);
          continue;
        }
        return WatchLimitReached(path);
      }
      // A folder already watched: seen through another path (a bind mount: do not loop), or listed already
      // by the scan of its parent before its own creation event arrived.
      if (!folders_.try_emplace(wd, WatchedFolder{path, root, run}).second) continue;
      wd_by_path_[path] = wd;
      DIR* dir = ::opendir(path.c_str());
      if (dir == nullptr) continue;
      while (const struct dirent* entry = ::readdir(dir)) {
        std::string_view name = entry->d_name;
        if (name == "." || name == "..") continue;
        std::string child = JoinPath(path, name);
        bool is_folder = entry->d_type == DT_DIR;
        if (entry->d_type == DT_UNKNOWN) {
          struct stat st;
          is_folder = ::lstat(child.c_str(), &st) == 0 && S_ISDIR(st.st_mode);
        }
        if (is_folder) stack.push_back(std::move(child));
      }
      ::closedir(dir);
    }
    return Status::Ok();
  }

  // Removes the watches of `path` and of every folder below it.
  void UnwatchTree(const std::string& path) {
    auto remove = [this](std::map<std::string, int>::iterator it) {
      ::inotify_rm_watch(inotify_fd_, it->second);  // may fail when the kernel dropped it already: fine
      folders_.erase(it->second);
      return wd_by_path_.erase(it);
    };
    if (auto it = wd_by_path_.find(path); it != wd_by_path_.end()) remove(it);
    const std::string prefix = path + "/";
    for (auto it = wd_by_path_.lower_bound(prefix); it != wd_by_path_.end() && StartsWith(it->first, prefix);) {
      it = remove(it);
    }
  }

  void ForgetRun(const std::string& path) {
    UnwatchTree(path);
    runs_.erase(path);
    pending_.erase(path);
  }

  void ForgetRoot(size_t index) {
    Root& root = roots_[index];
    if (!root.watched) return;
    root.watched = false;
    UnwatchTree(root.path);
    for (auto it = runs_.begin(); it != runs_.end();) {
      if (IsSameOrUnder(it->first, root.path)) {
        pending_.erase(it->first);
        it = runs_.erase(it);
      } else {
        ++it;
      }
    }
  }

  // A change: the run is due once it has been quiet for the quiet period from now.
  void MarkChanged(const std::string& path) {
    auto it = runs_.find(path);
    if (it == runs_.end()) return;
    RunState& run = it->second;
    run.deadline = Clock::now() + options_.quiet_period;
    if (run.is_archive) {
      struct stat st;
      if (::lstat(path.c_str(), &st) == 0) run.archive_size = st.st_size;
    }
    pending_.insert(path);
  }

  void MarkReadyNow(const std::string& path) {
    auto it = runs_.find(path);
    if (it == runs_.end()) return;
    it->second.ready_now = true;
    pending_.insert(path);
  }

  bool IsMarker(std::string_view name) const {
    return std::find(options_.marker_names.begin(), options_.marker_names.end(), name) !=
           options_.marker_names.end();
  }

  std::set<std::string> MarkersIn(const std::string& run_folder) const {
    std::set<std::string> found;
    for (const std::string& marker : options_.marker_names) {
      struct stat st;
      if (::lstat(JoinPath(run_folder, marker).c_str(), &st) == 0 && !S_ISDIR(st.st_mode)) found.insert(marker);
    }
    return found;
  }

  // Events were lost: drop every watch and every run, then watch and scan everything again. Every run found
  // is due after the quiet period (it may have changed unseen, or may still be being written).
  void Rebuild() {
    for (const auto& [wd, folder] : folders_) ::inotify_rm_watch(inotify_fd_, wd);
    folders_.clear();
    wd_by_path_.clear();
    runs_.clear();
    pending_.clear();
    for (size_t i = 0; i < roots_.size(); ++i) {
      if (!roots_[i].watched) continue;
      roots_[i].watched = false;
      if (!WatchRoot(i).ok()) continue;  // the root is gone: drop it
      ScanRoot(i, Arrival::kRescan).IgnoreError();  // only the watch limit fails here, and it is counted
    }
  }

  void HandleEvent(const struct inotify_event& event) {
    if (event.mask & IN_Q_OVERFLOW) {
      Rebuild();
      return;
    }
    auto it = folders_.find(event.wd);
    if (it == folders_.end()) return;  // a watch removed since the event was queued
    const WatchedFolder folder = it->second;
    const bool is_root = folder.run.empty();

    if (event.mask & IN_IGNORED) {  // the kernel dropped the watch: the folder is gone, or was unmounted
      folders_.erase(it);
      if (auto p = wd_by_path_.find(folder.path); p != wd_by_path_.end() && p->second == event.wd) {
        wd_by_path_.erase(p);
      }
      if (is_root) ForgetRoot(folder.root);
      else if (folder.path == folder.run) ForgetRun(folder.run);
      return;
    }
    if (event.mask & (IN_DELETE_SELF | IN_MOVE_SELF)) {
      // A root that vanished or moved is dropped. Other folders are handled by their parent's event.
      if (is_root) ForgetRoot(folder.root);
      return;
    }
    if (event.len == 0 || !(event.mask & kChanged)) return;

    const std::string_view name(event.name, ::strnlen(event.name, event.len));
    const std::string child = JoinPath(folder.path, name);
    const bool child_is_folder = (event.mask & IN_ISDIR) != 0;

    if (is_root) {  // the children of a root are runs
      if (event.mask & kGone) {
        ForgetRun(child);
      } else if (runs_.count(child) != 0) {
        if (!child_is_folder) MarkChanged(child);  // an archive being written or replaced
      } else {
        AddRun(folder.root, child, Arrival::kNew).IgnoreError();  // errors are counted in watch_failures_
      }
      return;
    }

    auto run = runs_.find(folder.run);
    if (run == runs_.end()) return;
    if (child_is_folder) {
      if (event.mask & kAppeared) WatchTree(child, folder.root, folder.run).IgnoreError();  // counted in watch_failures_
      if (event.mask & kGone) UnwatchTree(child);
    } else if (folder.path == folder.run && IsMarker(name)) {
      std::set<std::string>& markers = run->second.markers;
      if (event.mask & kGone) {
        markers.erase(std::string(name));
      } else if ((event.mask & kAppeared) && markers.insert(std::string(name)).second) {
        MarkReadyNow(folder.run);
      }
      return;  // writing to a marker is not a change of the run
    }
    MarkChanged(folder.run);
  }

  const WatchOptions options_;
  const RunReadyCallback on_ready_;
  const int inotify_fd_;
  bool setup_done_ = false;  // after Setup(), hitting the watch limit is counted instead of returned

  std::vector<Root> roots_;
  std::unordered_map<int, WatchedFolder> folders_;  // by watch descriptor
  std::map<std::string, int> wd_by_path_;           // ordered, so a subtree is one range
  std::map<std::string, RunState> runs_;            // by run path
  std::set<std::string> pending_;                   // runs waiting for their deadline or due now

  std::atomic<int64_t> runs_reported_{0};
  std::atomic<int64_t> watch_failures_{0};

  alignas(struct inotify_event) char event_buffer_[64 * 1024];
};

StatusOr<std::unique_ptr<RunFolderWatcher>> RunFolderWatcher::Start(WatchOptions options,
                                                                     RunReadyCallback on_ready) {
  if (!on_ready) return Status::InvalidArgument("RunFolderWatcher needs a callback");
  if (options.roots.empty()) return Status::InvalidArgument("no folders to watch");
  if (options.quiet_period.count() < 0) return Status::InvalidArgument("the quiet period is negative");
  for (const std::string& marker : options.marker_names) {
    if (marker.empty() || marker.find('/') != std::string::npos || marker == "." || marker == "..") {
      return Status::InvalidArgument("marker name '" + marker + "' is not a file name");
    }
  }
  std::vector<std::string> roots;
  for (const std::string& root : options.roots) {
    StatusOr<std::string> path = NormalizeRoot(root);
    if (!path.ok()) return path.status();
    for (const std::string& other : roots) {
      if (IsSameOrUnder(*path, other) || IsSameOrUnder(other, *path)) {
        return Status::InvalidArgument("watch roots " + other + " and " + *path +
                                       " overlap; name each folder once, and no folder inside another");
      }
    }
    roots.push_back(std::move(path.value()));
  }
  options.roots = std::move(roots);

  int inotify_fd = ::inotify_init1(IN_NONBLOCK | IN_CLOEXEC);
  if (inotify_fd < 0) {
    if (errno == EMFILE) {
      return Status::ResourceExhausted(
          "cannot start watching: too many inotify instances (raise the sysctl fs.inotify.max_user_instances)");
    }
    return Status::IoError(std::string("inotify_init1: ") + std::strerror(errno));
  }
  auto loop = std::make_unique<Loop>(std::move(options), std::move(on_ready), inotify_fd);  // owns the fd
  if (Status s = loop->Setup(); !s.ok()) return s;
  int stop_fd = ::eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
  if (stop_fd < 0) return Status::IoError(std::string("eventfd: ") + std::strerror(errno));
  return std::unique_ptr<RunFolderWatcher>(new RunFolderWatcher(std::move(loop), stop_fd));
}

RunFolderWatcher::RunFolderWatcher(std::unique_ptr<Loop> loop, int stop_fd)
    : loop_(std::move(loop)), stop_fd_(stop_fd) {
  thread_ = std::thread([this] { Run(); });
}

RunFolderWatcher::~RunFolderWatcher() {
  Stop();
  ::close(stop_fd_);
}

void RunFolderWatcher::Stop() {
  stop_requested_.store(true);
  uint64_t one = 1;
  [[maybe_unused]] ssize_t written = ::write(stop_fd_, &one, sizeof(one));  // fails only if already signalled
  if (std::this_thread::get_id() == watcher_thread_id_.load()) return;    // from the callback: cannot join
  std::lock_guard<std::mutex> lock(stop_mu_);
  if (thread_.joinable()) thread_.join();
}

int64_t RunFolderWatcher::runs_reported() const { return loop_->runs_reported(); }
int64_t RunFolderWatcher::watch_failures() const { return loop_->watch_failures(); }

void RunFolderWatcher::Run() {
  watcher_thread_id_.store(std::this_thread::get_id());
  loop_->ReportDue(stop_requested_);  // catch-up
  while (!stop_requested_.load()) {
    struct pollfd fds[2] = {{loop_->inotify_fd(), POLLIN, 0}, {stop_fd_, POLLIN, 0}};
    int ready = ::poll(fds, 2, loop_->PollTimeoutMs());
    if (ready < 0) {
      if (errno != EINTR) std::this_thread::sleep_for(std::chrono::milliseconds(100));  // ENOMEM: retry later
      continue;
    }
    if (fds[1].revents != 0 || (fds[0].revents & POLLNVAL)) break;
    if (fds[0].revents & POLLIN) loop_->ReadEvents();
    loop_->ReportDue(stop_requested_);
  }
}

}  // namespace xladb::service
