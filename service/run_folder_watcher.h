// RunFolderWatcher: the daemon's eyes on shared artifact folders. It tells the daemon when a run placed in a
// watched folder is ready to ingest.
//
// What a run is
//   * Each direct child of a root that is a folder is one run; everything below it (xla_dump/..., any depth)
//     belongs to that run.
//   * A regular file directly in a root that DumpSource opens as an archive (.tar, .tar.gz, .tgz, .tar.zst,
//     .zip) is one run too. Other files in a root (notes, a half-downloaded `run.tar.gz.part`) are not runs;
//     renaming one to an archive name makes it one.
//   * The run name is DumpSource::DefaultRunName(): the folder name, or the archive name without extensions.
//   * Symbolic links are never followed: a link in a root is not a run, and a link to a folder inside a run
//     is not descended into, so nothing outside the roots is watched or reported.
//
// When a run is reported ("ready")
//   * At start, every run that already exists, at once (catch-up after downtime: the ingester skips files it
//     already holds, so reporting too much is harmless).
//   * After `quiet_period` without changes (a file created, written, closed, renamed or removed anywhere in
//     the run; for an archive, its size must also be unchanged over the quiet period).
//   * At once when a file named in `marker_names` appears (is created or renamed into place) directly in the
//     run folder, or when a run folder arrives that already holds one (once per marker: a marker seen both
//     by the scan of a new folder and by its own creation event reports once). Markers in subfolders do not
//     count; writes to an existing marker are not changes.
//   * Again after the next quiet period when a reported run changes (late files: the daemon adds them).
//   * Again after `retry_after` when the callback did not take it (returned false: the daemon could not
//     record the job, say its store was locked past its busy timeout by a long write), until it does.
//   * After the kernel's event queue overflowed (IN_Q_OVERFLOW: events were lost), every folder is watched
//     anew and every run is reported once it has been quiet for `quiet_period`.
//   A run removed (or renamed away) before it was reported is not reported. A root that is removed or
//   renamed is silently dropped; the other roots are still watched.
//
// Contract
//   * Start() validates everything and sets up every watch before it returns, so a change made after Start()
//     returns is seen. Errors are returned (a root that is missing or not a folder, roots that overlap, the
//     kernel's inotify limits), naming the root or the limit to raise.
//   * The callback runs on the watcher's own thread, one call at a time, never under a lock of the watcher.
//     It must not block for long (enqueue and return) and must not throw. It may call Stop().
//   * Stop() is idempotent and prompt (it does not wait for quiet periods, only for a callback in progress);
//     once it returns, no callback runs (called from the callback itself it cannot wait for that callback,
//     but no further one starts). The
//     destructor calls Stop() and must not run on the watcher's thread.
//   * Resources: one inotify descriptor, one eventfd, one watch per folder in the roots (counted against
//     fs.inotify.max_user_watches), one thread that sleeps in poll() between events and quiet-period
//     deadlines (no busy loop). Memory is proportional to the number of folders and runs.
//   * Linux only (inotify). Changes made on another host of a network file system are not seen by inotify.
#ifndef XLADB_SERVICE_RUN_FOLDER_WATCHER_H_
#define XLADB_SERVICE_RUN_FOLDER_WATCHER_H_

#include <atomic>
#include <chrono>
#include <cstdint>
#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "base/status.h"

namespace xladb::service {

struct WatchOptions {
  std::vector<std::string> roots;                      // folders to watch; each direct child is one run
  std::chrono::milliseconds quiet_period{5000};        // a run is ready after this long without changes
  std::vector<std::string> marker_names{".xladb-complete", "_SUCCESS"};  // or at once when one of these appears
  std::chrono::milliseconds retry_after{5000};         // a run the callback did not take is reported again
};

// Called on the watcher's thread with the absolute path of a ready run (a folder, or an archive file such as
// run.tar.gz placed directly in a root, ready once its size has been stable for the quiet period) and the run
// name (folder name / archive name without extensions). Must not block for long: enqueue and return. Returns
// whether it took the run; false: report it again after WatchOptions::retry_after (it is not forgotten).
using RunReadyCallback = std::function<bool(const std::string& run_path, const std::string& run_name)>;

class RunFolderWatcher {
 public:
  // Validates the roots (they must exist and be folders, and must not overlap), sets up inotify, reports
  // every run that already exists (catch-up after downtime), then watches. Starts one thread.
  // Errors: kInvalidArgument (no roots, a root that is not a folder, overlapping roots, a negative quiet
  // period, a marker name with '/'), kNotFound (a root that does not exist), kResourceExhausted (inotify
  // limits), kIoError (other system errors).
  static StatusOr<std::unique_ptr<RunFolderWatcher>> Start(WatchOptions options, RunReadyCallback on_ready);

  RunFolderWatcher(const RunFolderWatcher&) = delete;
  RunFolderWatcher& operator=(const RunFolderWatcher&) = delete;

  void Stop();          // idempotent; joins the thread; no callback runs after it returns
  ~RunFolderWatcher();  // calls Stop()

  // Counters for tests and logs; safe to read from any thread.
  int64_t runs_reported() const;   // callbacks made (counted just before each call)
  int64_t watch_failures() const;  // folders left unwatched after Start() because the inotify watch limit
                                   // (fs.inotify.max_user_watches) was reached; their changes go unseen

 private:
  class Loop;  // the state owned by the watcher's thread (watches, runs, timers); run_folder_watcher.cc

  RunFolderWatcher(std::unique_ptr<Loop> loop, int stop_fd);
  void Run();

  std::unique_ptr<Loop> loop_;
  int stop_fd_ = -1;  // eventfd: written by Stop() to wake the thread
  std::atomic<bool> stop_requested_{false};
  std::atomic<std::thread::id> watcher_thread_id_{};  // set by the thread itself, so Stop() can tell
  std::mutex stop_mu_;  // serializes Stop() callers around join()
  std::thread thread_;
};

}  // namespace xladb::service

#endif  // XLADB_SERVICE_RUN_FOLDER_WATCHER_H_
