// The shared corpus of real XLA dumps (../shared/corpus), ingested whole. Skips when it is absent (it is not
// on users' machines).
#include <SQLiteCpp/SQLiteCpp.h>
#include <gtest/gtest.h>

#include <filesystem>
#include <string>

#include "ingest/dump_ingester.h"
#include "store/backend/database.h"
#include "store/write/run_writer.h"
#include "tests/store/sqlite_scalar.h"
#include "tests/store/test_dirs.h"

namespace xladb {
namespace {

using testing::Scalar;
using testing::TempDir;

ingest::IngestSummary Ingest(const std::string& db_path, const std::string& path) {
  auto db = store::Database::Open(db_path);
  EXPECT_TRUE(db.ok());
  store::RunWriter writer(db.value().get());
  ingest::DumpIngester ingester(&writer);
  auto summary = ingester.Ingest(path, {});
  EXPECT_TRUE(summary.ok()) << summary.status().ToString();
  return summary.ok() ? summary.value() : ingest::IngestSummary{};
}

int64_t CountFilesEndingWith(const std::string& dir, const std::string& suffix) {
  int64_t n = 0;
  for (const auto& e : std::filesystem::recursive_directory_iterator(dir)) {
    const std::string name = e.path().filename().string();
    if (e.is_regular_file() && name.size() >= suffix.size() &&
        name.compare(name.size() - suffix.size(), suffix.size(), suffix) == 0) {
      ++n;
    }
  }
  return n;
}

TEST(CorpusIngest, PublicFilesAllGetAKindAndNoneFails) {
  if (!testing::HaveCorpus()) GTEST_SKIP() << "shared corpus not found at " << testing::CorpusDir();
  TempDir tmp;
  std::string db = tmp / "public.db";
  auto summary = Ingest(db, testing::CorpusDir() + "/public");
  EXPECT_EQ(summary.files, 708);  // 707 dumps + SOURCES.md
  EXPECT_EQ(summary.files_by_verdict["error"], 0);
  for (const auto& e : summary.errors) ADD_FAILURE() << e.path << ": " << e.reason;
  // SOURCES.md is the only file that is not a dump; every dump has a supported kind.
  EXPECT_EQ(Scalar(db, "SELECT COUNT(*) FROM dump_files WHERE verdict = 'ingested'"), 707);
  EXPECT_EQ(Scalar(db, "SELECT COUNT(*) FROM dump_files WHERE kind = 'unknown' AND path <> 'SOURCES.md'"), 0);
  EXPECT_EQ(Scalar(db, "SELECT COUNT(*) FROM dump_files WHERE kind = 'buffer_assignment'"), 258);
  EXPECT_EQ(Scalar(db, "SELECT COUNT(*) FROM dump_files WHERE kind = 'memory_usage_report'"), 275);
  EXPECT_EQ(Scalar(db, "SELECT COUNT(*) FROM dump_files WHERE kind = 'hlo_module'"), 140);
  EXPECT_EQ(Scalar(db, "SELECT COUNT(*) FROM dump_files WHERE kind = 'tpu_bundle_profile'"), 30);
  EXPECT_EQ(Scalar(db, "SELECT COUNT(*) FROM dump_files WHERE kind = 'tpu_per_bundle_utilization'"), 2);
  EXPECT_EQ(Scalar(db, "SELECT COUNT(*) FROM dump_files WHERE kind = 'oom_report'"), 2);
  // Invariants hold everywhere except in the two truncated OOM excerpts from issue threads.
  EXPECT_EQ(Scalar(db, "SELECT COUNT(*) FROM ingest_issues i JOIN dump_files f USING(file_id) "
                       "WHERE i.severity IN ('invariant', 'error') AND f.kind <> 'oom_report'"),
            0);
  EXPECT_EQ(Scalar(db, "SELECT COALESCE(SUM(unknown_lines), 0) FROM dump_files WHERE kind <> 'oom_report'"), 0);
  // Every buffer assignment became a module with its allocations.
  EXPECT_EQ(Scalar(db, "SELECT COUNT(*) FROM module_memory"), 258);
  EXPECT_EQ(Scalar(db, "SELECT COUNT(*) FROM module_memory WHERE allocations = 0"), 0);
}

TEST(CorpusIngest, TwoRunFoldersBecomeTwoRunsWithOneModulePerBufferAssignment) {
  if (!testing::HaveCorpus()) GTEST_SKIP() << "shared corpus not found at " << testing::CorpusDir();
  TempDir tmp;
  std::string db = tmp / "runs.db";
  for (const char* run : {"21_lorrax_scan_C", "22_lorrax_scan_cached_C"}) {
    std::string dir = testing::CorpusDir() + "/runs/" + run;
    auto summary = Ingest(db, dir);
    EXPECT_EQ(summary.run_name, run);
    EXPECT_EQ(summary.files_by_verdict["error"], 0) << run;
    int64_t ba_files = CountFilesEndingWith(dir, "-buffer-assignment.txt");
    EXPECT_GT(ba_files, 0);
    EXPECT_EQ(Scalar(db, std::string("SELECT COUNT(*) FROM module_memory WHERE run_name = '") + run + "'"), ba_files)
        << run;
    EXPECT_EQ(Scalar(db, std::string("SELECT COUNT(*) FROM dump_files f JOIN runs r USING(run_id) WHERE r.name = '") +
                             run + "' AND f.verdict = 'not_ingested' AND f.reason IS NULL"),
              0)
        << "every file that is not ingested says why";
  }
  EXPECT_EQ(Scalar(db, "SELECT COUNT(*) FROM runs"), 2);
  EXPECT_EQ(Scalar(db, "SELECT COUNT(*) FROM ingest_issues WHERE severity IN ('invariant', 'error')"), 0);
  // The same module names appear in both runs, so trends have two points.
  EXPECT_GT(Scalar(db, "SELECT COUNT(*) FROM (SELECT module_name FROM module_memory GROUP BY module_name "
                       "HAVING COUNT(DISTINCT run_name) = 2)"),
            0);
}

}  // namespace
}  // namespace xladb
