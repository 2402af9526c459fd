// RunFolderWatcher on real folders in a temp dir: catch-up, quiet periods, markers, nested folders, archives,
// symlinks, vanishing runs and roots, event-queue overflow, and Stop(). Waits are bounded; quiet periods are
// short (200 ms) except where a test must rule a quiet-period report out (then 60 s, never waited for).
#include "service/run_folder_watcher.h"

#include <fcntl.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <filesystem>
#include <fstream>
#include <functional>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include <gtest/gtest.h>

#include "tests/store/test_dirs.h"

namespace xladb::service {
namespace {

namespace fs = std::filesystem;
using Clock = std::chrono::steady_clock;
using std::chrono::milliseconds;
using testing::TempDir;
using testing::WriteFile;

constexpr milliseconds kQuiet{200};
constexpr milliseconds kNever{60000};        // a quiet period no test waits for
constexpr milliseconds kWaitLimit{30000};    // upper bound for something that must happen (slow under ASan and load)

struct Report {
  std::string path;
  std::string name;
  Clock::time_point at;
};

// Collects callbacks; thread-safe. Must outlive the watcher that calls it. Takes every run reported, except
// the first `refuse_first` reports (as a daemon that could not record their jobs).
class Recorder {
 public:
  explicit Recorder(size_t refuse_first = 0) : refuse_first_(refuse_first) {}
  RunReadyCallback Callback() {
    return [this](const std::string& path, const std::string& name) {
      std::lock_guard<std::mutex> lock(mu_);
      reports_.push_back({path, name, Clock::now()});
      cv_.notify_all();
      return reports_.size() > refuse_first_;
    };
  }
  // True once `done` holds for the reports, false if it does not within kWaitLimit.
  bool WaitUntil(const std::function<bool(const std::vector<Report>&)>& done) {
    std::unique_lock<std::mutex> lock(mu_);
    return cv_.wait_for(lock, kWaitLimit, [&] { return done(reports_); });
  }
  bool WaitForCount(size_t n) {
    return WaitUntil([n](const std::vector<Report>& r) { return r.size() >= n; });
  }
  std::vector<Report> Reports() {
    std::lock_guard<std::mutex> lock(mu_);
    return reports_;
  }
  size_t Count() { return Reports().size(); }
  static size_t CountFor(const std::vector<Report>& reports, const std::string& path) {
    size_t n = 0;
    for (const Report& r : reports) n += r.path == path;
    return n;
  }

 private:
  const size_t refuse_first_;
  std::mutex mu_;
  std::condition_variable cv_;
  std::vector<Report> reports_;
};

std::unique_ptr<RunFolderWatcher> StartOrDie(std::vector<std::string> roots, milliseconds quiet, Recorder* recorder,
                                             std::vector<std::string> markers = {".xladb-complete", "_SUCCESS"}) {
  WatchOptions options;
  options.roots = std::move(roots);
  options.quiet_period = quiet;
  options.marker_names = std::move(markers);
  auto watcher = RunFolderWatcher::Start(std::move(options), recorder->Callback());
  EXPECT_TRUE(watcher.ok()) << watcher.status().ToString();
  return watcher.ok() ? std::move(watcher).value() : nullptr;
}

// Nothing is expected to happen: give the watcher three quiet periods to prove it.
void SleepThreeQuietPeriods() { std::this_thread::sleep_for(3 * kQuiet); }

TEST(RunFolderWatcherTest, MissingRootIsAnErrorNamingIt) {
  TempDir tmp;
  Recorder recorder;
  std::string missing = tmp / "no_such_folder";
  WatchOptions options;
  options.roots = {tmp.path().string(), missing};
  auto watcher = RunFolderWatcher::Start(options, recorder.Callback());
  ASSERT_FALSE(watcher.ok());
  EXPECT_EQ(watcher.status().code(), Status::Code::kNotFound);
  EXPECT_NE(watcher.status().message().find(missing), std::string::npos) << watcher.status().message();
}

TEST(RunFolderWatcherTest, BadOptionsAreErrors) {
  TempDir tmp;
  Recorder recorder;
  WriteFile(tmp / "a_file", "x");
  fs::create_directories(tmp / "inner/run");
  auto start = [&](std::vector<std::string> roots, std::vector<std::string> markers = {"_SUCCESS"}) {
    WatchOptions options;
    options.roots = std::move(roots);
    options.marker_names = std::move(markers);
    return RunFolderWatcher::Start(options, recorder.Callback()).status();
  };
  Status no_roots = start({});
  EXPECT_EQ(no_roots.code(), Status::Code::kInvalidArgument);
  Status file_root = start({tmp / "a_file"});
  EXPECT_EQ(file_root.code(), Status::Code::kInvalidArgument);
  EXPECT_NE(file_root.message().find(tmp / "a_file"), std::string::npos) << file_root.message();
  Status nested = start({tmp.path().string(), tmp / "inner"});
  EXPECT_EQ(nested.code(), Status::Code::kInvalidArgument);
  EXPECT_NE(nested.message().find("overlap"), std::string::npos) << nested.message();
  Status twice = start({tmp / "inner", tmp / "inner/"});
  EXPECT_EQ(twice.code(), Status::Code::kInvalidArgument);
  Status bad_marker = start({tmp / "inner"}, {"sub/_SUCCESS"});
  EXPECT_EQ(bad_marker.code(), Status::Code::kInvalidArgument);
  EXPECT_EQ(recorder.Count(), 0u);
}

// A run the callback did not take (the daemon could not record its job: its store locked past the busy
// timeout by a long write) is reported again after retry_after until it is taken, then no more. (It was
// forgotten until its folder changed again.)
TEST(RunFolderWatcherTest, ARunNotTakenIsReportedAgainAfterTheRetryDelay) {
  TempDir root;
  Recorder recorder(/*refuse_first=*/2);
  WriteFile(root / "run_a/_SUCCESS", "");
  WatchOptions options;
  options.roots = {root.path().string()};
  options.quiet_period = kNever;
  options.retry_after = milliseconds(200);
  auto watcher = RunFolderWatcher::Start(options, recorder.Callback());
  ASSERT_TRUE(watcher.ok()) << watcher.status().ToString();
  ASSERT_TRUE(recorder.WaitForCount(3));
  std::this_thread::sleep_for(3 * options.retry_after);
  const std::vector<Report> reports = recorder.Reports();
  ASSERT_EQ(reports.size(), 3u);  // refused, refused, taken
  for (const Report& r : reports) EXPECT_EQ(r.path, root / "run_a");
  EXPECT_GE(reports[1].at - reports[0].at, options.retry_after);
  EXPECT_GE(reports[2].at - reports[1].at, options.retry_after);
  EXPECT_EQ((*watcher)->runs_reported(), 3);
}

TEST(RunFolderWatcherTest, CatchUpReportsExistingRunsAtStart) {
  TempDir root;
  Recorder recorder;
  testing::MakeSeedRun(root / "run_a");
  WriteFile(root / "run_b/xla_dump/module_0001.jit_f.after_optimizations.txt", "HloModule jit_f\n");
  WriteFile(root / "ci-7.tar.gz", "archive bytes");
  WriteFile(root / "notes.txt", "not a run");
  WriteFile(root / "module_0002.jit_g.after_optimizations.txt.gz", "a single dump file is not a run");
  fs::create_directory_symlink(root / "run_a", root / "link_to_run_a");  // never followed

  auto watcher = StartOrDie({root.path().string()}, kNever, &recorder);
  ASSERT_NE(watcher, nullptr);
  ASSERT_TRUE(recorder.WaitForCount(3));
  SleepThreeQuietPeriods();
  std::vector<Report> reports = recorder.Reports();
  ASSERT_EQ(reports.size(), 3u);  // in path order
  EXPECT_EQ(reports[0].path, root / "ci-7.tar.gz");
  EXPECT_EQ(reports[0].name, "ci-7");
  EXPECT_EQ(reports[1].path, root / "run_a");
  EXPECT_EQ(reports[1].name, "run_a");
  EXPECT_EQ(reports[2].path, root / "run_b");
  EXPECT_EQ(reports[2].name, "run_b");
  EXPECT_EQ(watcher->runs_reported(), 3);
  EXPECT_EQ(watcher->watch_failures(), 0);
}

// One try of NewRunIsReportedOnceAfterItGoesQuiet: files keep arriving every 50 ms for 500 ms, never quiet for
// 200 ms, so the run must not be reported meanwhile, and once after. Returns the longest gap between two
// writes; when that reached the quiet period this machine stalled the writer, a report meanwhile would be
// legitimate, and the try stops there without checking: the caller tries again.
milliseconds WriteARunSlowlyAndExpectOneReport() {
  TempDir root;
  Recorder recorder;
  auto watcher = StartOrDie({root.path().string()}, kQuiet, &recorder);
  if (watcher == nullptr) return milliseconds(0);  // StartOrDie reported the failure

  fs::create_directory(root / "run_1");
  Clock::time_point last_write = Clock::now();
  milliseconds longest_gap{0};
  for (int i = 0; i < 10; ++i) {
    std::this_thread::sleep_for(milliseconds(50));
    WriteFile(root / ("run_1/module_" + std::to_string(i) + ".txt"), "HloModule m\n");
    Clock::time_point now = Clock::now();
    longest_gap = std::max(longest_gap, std::chrono::duration_cast<milliseconds>(now - last_write));
    last_write = now;
    if (longest_gap >= kQuiet) return longest_gap;
    EXPECT_EQ(recorder.Count(), 0u) << "reported while files kept arriving, after file " << i;
  }

  EXPECT_TRUE(recorder.WaitForCount(1)) << "the run was not reported within " << kWaitLimit.count() << " ms";
  std::vector<Report> reports = recorder.Reports();
  if (reports.empty()) return longest_gap;
  EXPECT_EQ(reports.back().path, root / "run_1");
  EXPECT_EQ(reports.back().name, "run_1");
  EXPECT_GE(reports.back().at - last_write, kQuiet);
  SleepThreeQuietPeriods();
  EXPECT_EQ(recorder.Count(), 1u);
  return longest_gap;
}

TEST(RunFolderWatcherTest, NewRunIsReportedOnceAfterItGoesQuiet) {
  constexpr int kTries = 3;
  std::string stalls;
  for (int t = 0; t < kTries; ++t) {
    const milliseconds gap = WriteARunSlowlyAndExpectOneReport();
    if (gap < kQuiet) return;  // checked, whatever the outcome
    stalls += " " + std::to_string(gap.count()) + " ms";
  }
  FAIL() << "the writer stalled for a whole quiet period (" << kQuiet.count() << " ms) in each of " << kTries
         << " tries (longest gaps:" << stalls << "): nothing could be checked";
}

TEST(RunFolderWatcherTest, MarkerFileReportsAtOnce) {
  TempDir root;
  Recorder recorder;
  auto watcher = StartOrDie({root.path().string()}, kNever, &recorder);
  ASSERT_NE(watcher, nullptr);

  WriteFile(root / "run_m/module_0001.jit_f.after_optimizations.txt", "HloModule jit_f\n");
  WriteFile(root / "run_m/.xladb-complete", "");
  ASSERT_TRUE(recorder.WaitForCount(1));
  WriteFile(root / "run_s/xla_dump/module_0001.jit_f.after_optimizations.txt", "HloModule jit_f\n");
  WriteFile(root / "run_s/_SUCCESS", "");
  ASSERT_TRUE(recorder.WaitForCount(2));

  // Not markers: one in a subfolder, and writing again to a marker that is already there.
  WriteFile(root / "run_n/xla_dump/_SUCCESS", "");
  WriteFile(root / "run_m/.xladb-complete", "rewritten");
  SleepThreeQuietPeriods();

  std::vector<Report> reports = recorder.Reports();
  ASSERT_EQ(reports.size(), 2u);
  EXPECT_EQ(reports[0].path, root / "run_m");
  EXPECT_EQ(reports[0].name, "run_m");
  EXPECT_EQ(reports[1].path, root / "run_s");
  EXPECT_EQ(reports[1].name, "run_s");
}

TEST(RunFolderWatcherTest, MarkerNamesAreConfigurable) {
  TempDir root;
  Recorder recorder;
  auto watcher = StartOrDie({root.path().string()}, kNever, &recorder, {"DONE"});
  ASSERT_NE(watcher, nullptr);
  WriteFile(root / "run_x/.xladb-complete", "");  // not a marker with these options
  WriteFile(root / "run_y/DONE", "");
  ASSERT_TRUE(recorder.WaitForCount(1));
  SleepThreeQuietPeriods();
  std::vector<Report> reports = recorder.Reports();
  ASSERT_EQ(reports.size(), 1u);
  EXPECT_EQ(reports[0].path, root / "run_y");
}

TEST(RunFolderWatcherTest, RunMovedInWithMarkerReportsAtOnce) {
  TempDir tmp;  // staging and root on one file system, so the move is a rename
  fs::create_directory(tmp / "root");
  Recorder recorder;
  auto watcher = StartOrDie({tmp / "root"}, kNever, &recorder);
  ASSERT_NE(watcher, nullptr);
  testing::MakeSeedRun(tmp / "staging/run_7/xla_dump");
  WriteFile(tmp / "staging/run_7/_SUCCESS", "");
  fs::rename(tmp / "staging/run_7", tmp / "root/run_7");
  ASSERT_TRUE(recorder.WaitForCount(1));
  std::vector<Report> reports = recorder.Reports();
  EXPECT_EQ(reports[0].path, tmp / "root/run_7");
  EXPECT_EQ(reports[0].name, "run_7");
}

TEST(RunFolderWatcherTest, NestedSubfoldersCountForTheirRun) {
  TempDir root;
  Recorder recorder;
  auto watcher = StartOrDie({root.path().string()}, kQuiet, &recorder);
  ASSERT_NE(watcher, nullptr);
  // Created in one go, faster than the watcher can add watches: the scan after each watch catches up.
  WriteFile(root / "run_n/xla_dump/module_0001/deep/module_0001.jit_f.after_optimizations.txt", "HloModule jit_f\n");
  ASSERT_TRUE(recorder.WaitForCount(1));

  // The deepest folder is watched: a late file there reports the run again.
  WriteFile(root / "run_n/xla_dump/module_0001/deep/late.txt", "late");
  ASSERT_TRUE(recorder.WaitForCount(2));
  // So is a subfolder that appears after the run was reported.
  WriteFile(root / "run_n/xla_dump/tpu/1766453541-jit_f-00-hlo-static-bundle-profile.txt", "profile");
  ASSERT_TRUE(recorder.WaitForCount(3));

  SleepThreeQuietPeriods();
  std::vector<Report> reports = recorder.Reports();
  ASSERT_EQ(reports.size(), 3u);
  for (const Report& r : reports) {
    EXPECT_EQ(r.path, root / "run_n");
    EXPECT_EQ(r.name, "run_n");
  }
}

TEST(RunFolderWatcherTest, MoreFilesLaterReportTheRunAgain) {
  TempDir root;
  Recorder recorder;
  testing::MakeSeedRun(root / "run_r");
  auto watcher = StartOrDie({root.path().string()}, kQuiet, &recorder);
  ASSERT_NE(watcher, nullptr);
  ASSERT_TRUE(recorder.WaitForCount(1));  // catch-up

  Clock::time_point wrote = Clock::now();
  WriteFile(root / "run_r/module_0009.jit_late.after_optimizations-memory-usage-report.txt", "late file");
  ASSERT_TRUE(recorder.WaitForCount(2));
  SleepThreeQuietPeriods();
  std::vector<Report> reports = recorder.Reports();
  ASSERT_EQ(reports.size(), 2u);
  EXPECT_EQ(reports[1].path, root / "run_r");
  EXPECT_EQ(reports[1].name, "run_r");
  EXPECT_GE(reports[1].at - wrote, kQuiet);
  EXPECT_EQ(watcher->runs_reported(), 2);
}

TEST(RunFolderWatcherTest, ArchiveDroppedInRootIsReportedWithItsRunName) {
  TempDir root;
  Recorder recorder;
  auto watcher = StartOrDie({root.path().string()}, kQuiet, &recorder);
  ASSERT_NE(watcher, nullptr);

  Clock::time_point written;
  {  // written in chunks through one open file, like a slow copy
    std::ofstream out(root / "ci-run-42.tar.gz", std::ios::binary);
    for (int i = 0; i < 4; ++i) {
      out << std::string(4096, static_cast<char>('a' + i)) << std::flush;
      std::this_thread::sleep_for(milliseconds(50));
    }
    // Before the close, the file's last change: the quiet period may start at the close, and taking the time
    // after it let a busy machine see the report 1.6 ms "early".
    written = Clock::now();
  }
  // A download under a temporary name is not a run until it is renamed to an archive name.
  WriteFile(root / "nightly.tar.zst.part", "partial");
  WriteFile(root / "notes.txt", "not a run");
  ASSERT_TRUE(recorder.WaitForCount(1));
  EXPECT_EQ(recorder.Count(), 1u);
  fs::rename(root / "nightly.tar.zst.part", root / "nightly.tar.zst");
  ASSERT_TRUE(recorder.WaitForCount(2));
  SleepThreeQuietPeriods();

  std::vector<Report> reports = recorder.Reports();
  ASSERT_EQ(reports.size(), 2u);
  EXPECT_EQ(reports[0].path, root / "ci-run-42.tar.gz");
  EXPECT_EQ(reports[0].name, "ci-run-42");
  EXPECT_GE(reports[0].at - written, kQuiet);
  EXPECT_EQ(reports[1].path, root / "nightly.tar.zst");
  EXPECT_EQ(reports[1].name, "nightly");
}

TEST(RunFolderWatcherTest, StopIsPromptAndNoCallbackRunsAfterIt) {
  TempDir root;
  Recorder recorder;
  auto watcher = StartOrDie({root.path().string()}, milliseconds(1000), &recorder);
  ASSERT_NE(watcher, nullptr);
  WriteFile(root / "run_p/module_0001.txt", "pending: due in 1 s");
  std::this_thread::sleep_for(milliseconds(50));  // let the watcher see it and arm its timer

  Clock::time_point before = Clock::now();
  watcher->Stop();
  EXPECT_LT(Clock::now() - before, milliseconds(500)) << "Stop() waited for the quiet period";
  watcher->Stop();  // idempotent

  WriteFile(root / "run_q/_SUCCESS", "");
  std::this_thread::sleep_for(milliseconds(1300));  // past the pending run's deadline
  EXPECT_EQ(recorder.Count(), 0u);
  EXPECT_EQ(watcher->runs_reported(), 0);
}

TEST(RunFolderWatcherTest, StopWaitsForARunningCallbackAndStartsNoOther) {
  TempDir root;
  WriteFile(root / "run_1/a.txt", "a");
  WriteFile(root / "run_2/b.txt", "b");
  std::atomic<int> started{0};
  std::atomic<int> finished{0};
  auto slow = [&](const std::string&, const std::string&) {
    ++started;
    std::this_thread::sleep_for(milliseconds(300));
    ++finished;
    return true;
  };
  WatchOptions options;
  options.roots = {root.path().string()};
  options.quiet_period = kQuiet;
  auto watcher = RunFolderWatcher::Start(options, slow);
  ASSERT_TRUE(watcher.ok()) << watcher.status().ToString();
  Clock::time_point limit = Clock::now() + kWaitLimit;
  while (started.load() == 0 && Clock::now() < limit) std::this_thread::sleep_for(milliseconds(5));
  ASSERT_EQ(started.load(), 1);  // the first catch-up callback is running

  (*watcher)->Stop();
  EXPECT_EQ(finished.load(), 1);  // Stop() returned after the running callback, not during it
  std::this_thread::sleep_for(milliseconds(500));
  EXPECT_EQ(started.load(), 1);  // and the second catch-up run was never reported
}

TEST(RunFolderWatcherTest, StopFromTheCallbackEndsReporting) {
  TempDir root;
  std::atomic<RunFolderWatcher*> self{nullptr};
  std::atomic<int> calls{0};
  auto stop_on_first = [&](const std::string&, const std::string&) {
    ++calls;
    if (RunFolderWatcher* w = self.load()) w->Stop();
    return true;
  };
  WatchOptions options;
  options.roots = {root.path().string()};
  options.quiet_period = kNever;
  auto watcher = RunFolderWatcher::Start(options, stop_on_first);
  ASSERT_TRUE(watcher.ok()) << watcher.status().ToString();
  self = watcher->get();
  WriteFile(root / "run_1/_SUCCESS", "");
  WriteFile(root / "run_2/_SUCCESS", "");
  Clock::time_point limit = Clock::now() + kWaitLimit;
  while (calls.load() == 0 && Clock::now() < limit) std::this_thread::sleep_for(milliseconds(5));
  std::this_thread::sleep_for(milliseconds(300));
  EXPECT_EQ(calls.load(), 1);
  watcher->reset();  // joins the thread that stopped itself
}

TEST(RunFolderWatcherTest, SymlinksAreNotFollowedOutOfTheRoot) {
  TempDir root;
  TempDir outside;
  Recorder recorder;
  fs::create_directories(outside / "sub");
  WriteFile(root / "run_s/module_0001.txt", "inside");
  fs::create_directory_symlink(outside.path(), root / "run_s/ext");  // link inside a run
  fs::create_directory_symlink(outside.path(), root / "linked_run");  // link as a run
  auto watcher = StartOrDie({root.path().string()}, kQuiet, &recorder);
  ASSERT_NE(watcher, nullptr);
  ASSERT_TRUE(recorder.WaitForCount(1));  // catch-up: run_s only

  WriteFile(outside / "new.txt", "outside");
  WriteFile(outside / "sub/_SUCCESS", "");
  WriteFile(outside / "_SUCCESS", "");
  SleepThreeQuietPeriods();
  std::vector<Report> reports = recorder.Reports();
  ASSERT_EQ(reports.size(), 1u);
  EXPECT_EQ(reports[0].path, root / "run_s");
}

TEST(RunFolderWatcherTest, RunRemovedBeforeItGoesQuietIsNotReported) {
  TempDir root;
  Recorder recorder;
  auto watcher = StartOrDie({root.path().string()}, kQuiet, &recorder);
  ASSERT_NE(watcher, nullptr);
  WriteFile(root / "run_gone/xla_dump/module_0001.txt", "soon removed");
  fs::remove_all(root / "run_gone");
  WriteFile(root / "run_kept/module_0001.txt", "kept");
  ASSERT_TRUE(recorder.WaitForCount(1));
  SleepThreeQuietPeriods();
  std::vector<Report> reports = recorder.Reports();
  ASSERT_EQ(reports.size(), 1u);
  EXPECT_EQ(reports[0].path, root / "run_kept");
}

TEST(RunFolderWatcherTest, VanishedRootIsDroppedAndTheOthersAreStillWatched) {
  TempDir tmp;
  fs::create_directories(tmp / "root_a");
  fs::create_directories(tmp / "root_b");
  Recorder recorder;
  auto watcher = StartOrDie({tmp / "root_a", tmp / "root_b"}, kQuiet, &recorder);
  ASSERT_NE(watcher, nullptr);

  fs::remove_all(tmp / "root_a");
  std::this_thread::sleep_for(milliseconds(50));
  WriteFile(tmp / "root_a/run_1/module_0001.txt", "a root recreated under the old name is not watched");
  WriteFile(tmp / "root_b/run_2/module_0001.txt", "still watched");
  ASSERT_TRUE(recorder.WaitForCount(1));
  SleepThreeQuietPeriods();
  std::vector<Report> reports = recorder.Reports();
  ASSERT_EQ(reports.size(), 1u);
  EXPECT_EQ(reports[0].path, tmp / "root_b/run_2");
}

// The watcher's thread is held inside the first catch-up callback while more events than the kernel queues
// arrive, so the queue overflows and later events (the creation of run_late) are lost. The watcher must
// rescan: every run is reported again, run_late included, and run_late's folder is watched from then on.
TEST(RunFolderWatcherTest, QueueOverflowRescansAndReportsEveryRun) {
  long max_queued = 0;
  {
    std::ifstream in("/proc/sys/fs/inotify/max_queued_events");
    in >> max_queued;
  }
  if (max_queued <= 0 || max_queued > 200000) {
    GTEST_SKIP() << "fs.inotify.max_queued_events is " << max_queued << "; overflowing it would take too long";
  }
  TempDir root;
  WriteFile(root / "run_busy/a.txt", "a");
  WriteFile(root / "run_idle/a.txt", "a");
  Recorder recorder;
  RunReadyCallback record = recorder.Callback();
  std::mutex gate_mu;
  std::condition_variable gate_cv;
  bool held = false;
  bool released = false;
  auto release = [&] {
    std::lock_guard<std::mutex> lock(gate_mu);
    released = true;
    gate_cv.notify_all();
  };
  auto hold_first = [&](const std::string& path, const std::string& name) {
    std::unique_lock<std::mutex> lock(gate_mu);
    if (!held) {
      held = true;
      gate_cv.notify_all();
      gate_cv.wait(lock, [&] { return released; });  // however slow this machine is at creating files
    }
    lock.unlock();
    return record(path, name);
  };
  WatchOptions options;
  options.roots = {root.path().string()};
  options.quiet_period = kQuiet;
  auto watcher = RunFolderWatcher::Start(options, hold_first);
  ASSERT_TRUE(watcher.ok()) << watcher.status().ToString();
  // Destroyed before the watcher: a failed ASSERT below cannot leave its thread held (and Stop() waiting).
  std::unique_ptr<void, std::function<void(void*)>> release_on_exit(&gate_mu, [&](void*) { release(); });
  {
    std::unique_lock<std::mutex> lock(gate_mu);
    ASSERT_TRUE(gate_cv.wait_for(lock, kWaitLimit, [&] { return held; }));
  }
  // Each new file queues IN_CREATE and IN_CLOSE_WRITE (distinct names are never merged): this overflows.
  for (long i = 0; i < max_queued / 2 + 1024; ++i) {
    std::string path = root / ("run_busy/f" + std::to_string(i));
    int fd = ::open(path.c_str(), O_CREAT | O_WRONLY | O_CLOEXEC, 0644);
    ASSERT_GE(fd, 0) << path;
    ::close(fd);
  }
  WriteFile(root / "run_late/module_0001.txt", "created while events were being lost");
  release();

  const std::string busy = root / "run_busy", idle = root / "run_idle", late = root / "run_late";
  ASSERT_TRUE(recorder.WaitUntil([&](const std::vector<Report>& r) {
    return Recorder::CountFor(r, busy) >= 2 && Recorder::CountFor(r, idle) >= 2 && Recorder::CountFor(r, late) >= 1;
  })) << "no rescan after the overflow";

  // run_late's folder is watched since the rescan.
  WriteFile(root / "run_late/module_0002.txt", "late file");
  ASSERT_TRUE(recorder.WaitUntil(
      [&](const std::vector<Report>& r) { return Recorder::CountFor(r, late) >= 2; }));
  SleepThreeQuietPeriods();
  std::vector<Report> reports = recorder.Reports();
  EXPECT_EQ(Recorder::CountFor(reports, busy), 2u);  // catch-up, rescan
  EXPECT_EQ(Recorder::CountFor(reports, idle), 2u);  // catch-up, rescan
  EXPECT_EQ(Recorder::CountFor(reports, late), 2u);  // rescan, late file
  EXPECT_EQ((*watcher)->watch_failures(), 0);
}

}  // namespace
}  // namespace xladb::service
