// Crash safety: a child process ingesting a folder is killed with SIGKILL at 20 seeded random moments. The
// writer commits files in groups (store/write/run_writer.h), here of about 10 files, so most kills land in the
// middle of a group. After each kill the database passes PRAGMA integrity_check, holds no partial file (whole
// groups only), and a rerun ends with exactly the rows of a clean ingest.
#include <SQLiteCpp/SQLiteCpp.h>
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <random>
#include <string>
#include <thread>

#include "ingest/dump_ingester.h"
#include "store/backend/database.h"
#include "store/write/run_writer.h"
#include "tests/store/test_dirs.h"

namespace xladb {
namespace {

using testing::TempDir;

// 3 seeds × kCopies modules, each with its own file name so every file is new work.
constexpr int kCopies = 40;

void MakeBigRun(const std::string& dir) {
  const std::string s000 = testing::ReadFile(testing::SeedFile("000"));
  const std::string s002 = testing::ReadFile(testing::SeedFile("002"));
  const std::string s004 = testing::ReadFile(testing::SeedFile("004"));
  for (int i = 0; i < kCopies; ++i) {
    char id[16];
    std::snprintf(id, sizeof id, "%04d", 3 * i + 1);
    testing::WriteFile(dir + "/module_" + id + ".tpu_kernel_" + std::to_string(i) +
                           ".after_optimizations-buffer-assignment.txt",
                       s000);
    std::snprintf(id, sizeof id, "%04d", 3 * i + 2);
    testing::WriteFile(dir + "/module_" + id + ".train_step_" + std::to_string(i) +
                           ".after_optimizations-buffer-assignment.txt",
                       s002);
    std::snprintf(id, sizeof id, "%04d", 3 * i + 3);
    testing::WriteFile(dir + "/module_" + id + ".SyncTensorsGraph." + std::to_string(i) +
                           ".sm_8.0_gpu_after_optimizations-buffer-assignment.txt",
                       s004);
  }
}

// About 10 files per group: a group is committed once its files hold this many bytes.
int64_t TenFilesOfBytes() {
  return 10 * static_cast<int64_t>(testing::ReadFile(testing::SeedFile("002")).size());
}

bool Ingest(const std::string& db_path, const std::string& dir) {
  auto db = store::Database::Open(db_path);
  if (!db.ok()) return false;
  store::RunWriter writer(db.value().get(), store::GroupCommit{60, TenFilesOfBytes()});
  ingest::DumpIngester ingester(&writer);
  ingest::IngestOptions options;
  options.time_us = 1;  // a fixed run time, so a rerun and a clean ingest store identical rows
  return ingester.Ingest(dir, options).ok();
}

int64_t Scalar(SQLite::Database& db, const std::string& sql) {
  SQLite::Statement q(db, sql);
  q.executeStep();
  return q.getColumn(0).getInt64();
}

// Row counts of every data table, as one comparable string.
std::string RowCounts(const std::string& db_path) {
  SQLite::Database db(db_path, SQLite::OPEN_READONLY);
  std::string out;
  for (const char* t : {"runs", "dump_files", "modules", "module_summary", "allocations", "buffer_values",
                        "instructions", "peak_buffers", "shapes", "names", "long_texts", "ingest_issues"}) {
    out += std::string(t) + "=" + std::to_string(Scalar(db, std::string("SELECT COUNT(*) FROM ") + t)) + " ";
  }
  return out;
}

TEST(CrashSafety, SigkillMidIngestLeavesNoPartialFileAndARerunCompletes) {
  TempDir tmp;
  std::string run = tmp / "big_run";
  MakeBigRun(run);
  std::string clean_db = tmp / "clean.db";
  ASSERT_TRUE(Ingest(clean_db, run));
  const std::string clean = RowCounts(clean_db);

  // How long a whole ingest takes here, to spread the kills over it: timed as the killed ingests run, in a
  // child forked after the schema exists (a forked child copies each page it writes first; under ASan on a
  // machine whose page faults are dear, a child took several times the parent's time, and every kill landed
  // before the first group's commit). The fastest of three, so that a slow timing run (ctest runs other tests
  // beside this one) does not push the kills past the children's end.
  int64_t full_us = INT64_MAX;
  for (int t = 0; t < 3; ++t) {
    const std::string timing_db = tmp / ("timing" + std::to_string(t) + ".db");
    ASSERT_TRUE(store::Database::Open(timing_db).ok());
    auto t0 = std::chrono::steady_clock::now();
    pid_t pid = ::fork();
    ASSERT_GE(pid, 0);
    if (pid == 0) ::_exit(Ingest(timing_db, run) ? 0 : 3);
    int status = 0;
    ::waitpid(pid, &status, 0);
    ASSERT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0) << "timing ingest " << t;
    full_us = std::min<int64_t>(
        full_us,
        std::chrono::duration_cast<std::chrono::microseconds>(std::chrono::steady_clock::now() - t0).count());
  }

  std::mt19937 rng(20261122);
  constexpr int kKills = 20;
  int killed_mid_ingest = 0;
  int partial_states = 0;  // kills after which some, but not all, files were stored
  for (int k = 0; k < kKills; ++k) {
    std::string db_path = tmp / ("crash" + std::to_string(k) + ".db");
    std::uniform_int_distribution<int64_t> when(full_us / 20, full_us * 9 / 10);
    int64_t delay_us = when(rng);
    ASSERT_TRUE(store::Database::Open(db_path).ok());  // the schema exists before the child starts
    pid_t pid = ::fork();
    ASSERT_GE(pid, 0);
    if (pid == 0) {
      bool ok = Ingest(db_path, run);
      ::_exit(ok ? 0 : 3);
    }
    std::this_thread::sleep_for(std::chrono::microseconds(delay_us));
    ::kill(pid, SIGKILL);
    int status = 0;
    ::waitpid(pid, &status, 0);
    if (WIFSIGNALED(status)) ++killed_mid_ingest;

    {
      SQLite::Database db(db_path, SQLite::OPEN_READWRITE);
      SQLite::Statement check(db, "PRAGMA integrity_check");
      ASSERT_TRUE(check.executeStep());
      EXPECT_EQ(check.getColumn(0).getString(), "ok") << "kill " << k;
      // No file is half there: every stored module is whole, and no file row is left as its ingest began
      // (rows_written NULL until its commit).
      EXPECT_EQ(Scalar(db, "SELECT COUNT(*) FROM dump_files WHERE verdict <> 'ingested'"), 0) << "kill " << k;
      EXPECT_EQ(Scalar(db, "SELECT COUNT(*) FROM dump_files WHERE rows_written IS NULL"), 0) << "kill " << k;
      EXPECT_EQ(Scalar(db, "SELECT COUNT(*) FROM module_summary s JOIN modules m USING(module_id) "
                           "WHERE NOT ((m.name LIKE 'tpu_kernel_%' AND s.allocation_count = 8 AND s.value_count = 11)"
                           " OR (m.name LIKE 'train_step_%' AND s.allocation_count = 14 AND s.value_count = 24)"
                           " OR (m.name LIKE 'SyncTensorsGraph.%' AND s.allocation_count = 26 AND s.value_count = 49))"),
                0)
          << "kill " << k;
      EXPECT_EQ(Scalar(db, "SELECT COUNT(*) FROM allocations WHERE file_id NOT IN (SELECT file_id FROM dump_files)"), 0);
      int64_t stored = Scalar(db, "SELECT COUNT(*) FROM dump_files");
      if (stored > 0 && stored < 3 * kCopies) ++partial_states;
    }
    ASSERT_TRUE(Ingest(db_path, run)) << "rerun after kill " << k;
    EXPECT_EQ(RowCounts(db_path), clean) << "kill " << k << " at " << delay_us << " us";
  }
  // The kills must have landed mid-ingest at least sometimes, or the test proves nothing.
  EXPECT_GE(killed_mid_ingest, kKills / 2);
  EXPECT_GE(partial_states, kKills / 4);
}

}  // namespace
}  // namespace xladb
