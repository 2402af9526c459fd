// A database on a full disk: the group of files that does not fit fails cleanly, the database stays intact
// and holds only whole files (whole groups). Needs a small tmpfs, which only root can mount; skips with a message otherwise.
#include <SQLiteCpp/SQLiteCpp.h>
#include <fcntl.h>
#include <gtest/gtest.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <unistd.h>

#include <filesystem>

#include "ingest/dump_ingester.h"
#include "store/backend/database.h"
#include "store/write/run_writer.h"
#include "tests/store/test_dirs.h"

namespace xladb {
namespace {

class SmallTmpfs {
 public:
  explicit SmallTmpfs(const std::string& dir, const char* size) : dir_(dir) {
    std::filesystem::create_directories(dir_);
    mounted_ = ::mount("tmpfs", dir_.c_str(), "tmpfs", 0, (std::string("size=") + size).c_str()) == 0;
  }
  ~SmallTmpfs() {
    if (mounted_) ::umount2(dir_.c_str(), MNT_DETACH);
  }
  bool mounted() const { return mounted_; }

 private:
  std::string dir_;
  bool mounted_ = false;
};

// 2026-01-02 00:00:00 UTC (Unix seconds), the first file's modification time.
constexpr int64_t kFirstMtime = 1767312000;

void SetMtime(const std::string& path, int64_t seconds) {
  const timespec times[2] = {{seconds, 0}, {seconds, 0}};
  ASSERT_EQ(::utimensat(AT_FDCWD, path.c_str(), times, 0), 0) << path;
}

int64_t Scalar(SQLite::Database& db, const std::string& sql) {
  SQLite::Statement q(db, sql);
  q.executeStep();
  return q.getColumn(0).getInt64();
}

TEST(FullDisk, TheFileThatDoesNotFitFailsCleanlyAndTheDatabaseStaysIntact) {
  testing::TempDir tmp;
  SmallTmpfs disk(tmp / "disk", "1m");
  if (!disk.mounted()) GTEST_SKIP() << "cannot mount a tmpfs here (needs root); the full-disk case is untested";
  // 150 buffer-assignment files: far more rows than fit in 1 MiB.
  std::string run = tmp / "run";
  const std::string s002 = testing::ReadFile(testing::SeedFile("002"));
  for (int i = 0; i < 150; ++i) {
    char name[96];
    std::snprintf(name, sizeof name, "/module_%04d.step_%d.after_optimizations-buffer-assignment.txt", i + 1, i);
    testing::WriteFile(run + name, s002);
    // Each file a second newer than the one before: the run's time is the last file's, which never fits.
    SetMtime(run + name, kFirstMtime + i);
  }
  std::string db_path = tmp / "disk/x.db";
  {
    auto db = store::Database::Open(db_path);
    ASSERT_TRUE(db.ok()) << db.status().ToString();
    // Groups of 3 files: the first groups fit; the one that does not is rolled back whole.
    store::RunWriter writer(db.value().get(), store::GroupCommit{60, 3 * static_cast<int64_t>(s002.size())});
    ingest::DumpIngester ingester(&writer);
    auto summary = ingester.Ingest(run, {});
    ASSERT_FALSE(summary.ok()) << "1 MiB cannot hold 150 modules";
    EXPECT_EQ(summary.status().code(), Status::Code::kIoError) << summary.status().ToString();
    EXPECT_NE(summary.status().message().find("full"), std::string::npos) << summary.status().message();
  }
  SQLite::Database db(db_path, SQLite::OPEN_READONLY);
  SQLite::Statement check(db, "PRAGMA integrity_check");
  ASSERT_TRUE(check.executeStep());
  EXPECT_EQ(check.getColumn(0).getString(), "ok");
  int64_t files = Scalar(db, "SELECT COUNT(*) FROM dump_files WHERE verdict = 'ingested'");
  EXPECT_GT(files, 0) << "some files fitted before the disk filled";
  EXPECT_LT(files, 150);
  EXPECT_EQ(Scalar(db, "SELECT COUNT(*) FROM dump_files WHERE rows_written IS NULL"), 0);  // none half written
  // Every stored module is whole: seed 002's 14 allocations and 24 values.
  EXPECT_EQ(Scalar(db, "SELECT COUNT(*) FROM module_summary WHERE allocation_count <> 14 OR value_count <> 24"), 0);
  EXPECT_EQ(Scalar(db, "SELECT COUNT(*) FROM modules"), files);
  EXPECT_EQ(files % 3, 0) << "whole groups of 3 files only";
  // The run keeps the time it would have had: its newest file's, not the time of the ingest.
  SQLite::Statement run_time(db, "SELECT run_time_us, run_time_source FROM runs");
  ASSERT_TRUE(run_time.executeStep());
  EXPECT_EQ(run_time.getColumn(0).getInt64(), (kFirstMtime + 149) * 1000000);
  EXPECT_EQ(run_time.getColumn(1).getString(), "newest_file_mtime");
}

}  // namespace
}  // namespace xladb
