// End-to-end ingest into a real SQLite file: seeds laid out as a dump folder, exact values from the dumps,
// idempotence, replacement of a changed file, bad files that lose nothing, archives and compressed files.
#include <SQLiteCpp/SQLiteCpp.h>
#include <gtest/gtest.h>

#include <fcntl.h>
#include <sys/stat.h>

#include <cstdlib>
#include <filesystem>
#include <string>

#include "ingest/dump_ingester.h"
#include "store/backend/database.h"
#include "store/write/run_writer.h"
#include "tests/store/sqlite_scalar.h"
#include "tests/store/test_dirs.h"

namespace xladb {
namespace {

using testing::MakeSeedRun;
using testing::Scalar;
using testing::TempDir;
using testing::WriteFile;

std::string Text(const std::string& db_path, const std::string& sql) {
  SQLite::Database db(db_path, SQLite::OPEN_READONLY);
  SQLite::Statement q(db, sql);
  if (!q.executeStep() || q.getColumn(0).isNull()) return "<null>";
  return q.getColumn(0).getString();
}

// Total data rows over every table that ingest writes.
int64_t TotalRows(const std::string& db_path) {
  int64_t total = 0;
  for (const char* t : {"runs", "dump_files", "modules", "module_summary", "allocations", "buffer_values",
                        "instructions", "computations", "peak_buffers", "stack_trace_nodes", "memory_report_rows",
                        "memory_report_totals", "utilization_counters", "oom_stats", "oom_buffers", "ingest_issues",
                        "shapes", "names", "long_texts"}) {
    total += Scalar(db_path, std::string("SELECT COUNT(*) FROM ") + t);
  }
  return total;
}

ingest::IngestSummary IngestOrDie(const std::string& db_path, const std::string& path,
                                  ingest::IngestOptions options = {}) {
  auto db = store::Database::Open(db_path);
  EXPECT_TRUE(db.ok()) << db.status().ToString();
  store::RunWriter writer(db.value().get());
  ingest::DumpIngester ingester(&writer);
  auto summary = ingester.Ingest(path, options);
  EXPECT_TRUE(summary.ok()) << summary.status().ToString();
  return summary.ok() ? summary.value() : ingest::IngestSummary{};
}

class SeedRunIngest : public ::testing::Test {
 protected:
  void SetUp() override {
    run_dir_ = tmp_ / "nightly-2026-11-01";
    MakeSeedRun(run_dir_);
    db_ = tmp_ / "xladb.db";
    summary_ = IngestOrDie(db_, run_dir_);
  }
  TempDir tmp_;
  std::string run_dir_, db_;
  ingest::IngestSummary summary_;
};

TEST_F(SeedRunIngest, EveryFileGetsAVerdict) {
  EXPECT_EQ(summary_.run_name, "nightly-2026-11-01");
  EXPECT_EQ(summary_.files, 6);
  EXPECT_EQ(summary_.files_by_verdict["ingested"], 5);
  EXPECT_EQ(summary_.files_by_verdict["not_ingested"], 1);
  EXPECT_TRUE(summary_.errors.empty());
  EXPECT_EQ(Scalar(db_, "SELECT COUNT(*) FROM dump_files"), 6);
  EXPECT_EQ(Text(db_, "SELECT kind FROM dump_files WHERE path LIKE '%thunk_sequence.txt'"), "not_ingested");
  EXPECT_EQ(Scalar(db_, "SELECT COUNT(*) FROM dump_files WHERE rows_written IS NULL"), 0);  // none half written
}

TEST_F(SeedRunIngest, Seed000ModuleMemoryMatchesTheDump) {
  const std::string where = " FROM module_memory WHERE module_name = 'jit_splash_attention_kernel'";
  EXPECT_EQ(Scalar(db_, "SELECT COUNT(*)" + where), 1);
  EXPECT_EQ(Scalar(db_, "SELECT allocations" + where), 8);
  EXPECT_EQ(Scalar(db_, "SELECT value_count" + where), 11);
  EXPECT_EQ(Scalar(db_, "SELECT total_bytes" + where), 18629632);
  EXPECT_EQ(Scalar(db_, "SELECT peak_bytes" + where), 18612288);
  EXPECT_EQ(Scalar(db_, "SELECT peak_time" + where), 6);
  EXPECT_EQ(Scalar(db_, "SELECT xla_module_id" + where), 1);
  EXPECT_EQ(Text(db_, "SELECT stage" + where), "after_optimizations");
  EXPECT_EQ(Text(db_, "SELECT backend" + where), "tpu");
  // The allocation sizes add up to the printed total.
  EXPECT_EQ(Scalar(db_, "SELECT SUM(a.size_bytes) FROM allocations a JOIN modules m USING(module_id) "
                        "WHERE m.name = 'jit_splash_attention_kernel' AND m.stage = 'after_optimizations'"),
            18629632);
  EXPECT_EQ(Scalar(db_, "SELECT COUNT(*) FROM peak_buffers p JOIN modules m USING(module_id) "
                        "WHERE m.name = 'jit_splash_attention_kernel' AND m.stage = 'after_optimizations'"),
            11);
}

TEST_F(SeedRunIngest, Seed002And004SummariesMatchTheDumps) {
  EXPECT_EQ(Scalar(db_, "SELECT allocations FROM module_memory WHERE module_name = 'jit_train_step'"), 14);
  EXPECT_EQ(Scalar(db_, "SELECT value_count FROM module_memory WHERE module_name = 'jit_train_step'"), 24);
  EXPECT_EQ(Scalar(db_, "SELECT peak_bytes FROM module_memory WHERE module_name = 'jit_train_step'"), 184680476);
  EXPECT_EQ(Scalar(db_, "SELECT peak_time FROM module_memory WHERE module_name = 'jit_train_step'"), 12);
  EXPECT_EQ(Scalar(db_, "SELECT COUNT(*) FROM live_ranges l JOIN modules m USING(module_id) "
                        "WHERE m.name = 'jit_train_step'"),
            18);
  const std::string gpu = " FROM module_memory WHERE module_name = 'SyncTensorsGraph.105'";
  EXPECT_EQ(Scalar(db_, "SELECT allocations" + gpu), 26);
  EXPECT_EQ(Scalar(db_, "SELECT value_count" + gpu), 49);
  EXPECT_EQ(Scalar(db_, "SELECT peak_bytes" + gpu), 931536164);
  EXPECT_EQ(Scalar(db_, "SELECT peak_time" + gpu), 58);
  EXPECT_EQ(Text(db_, "SELECT backend" + gpu), "cuda");
  EXPECT_EQ(Text(db_, "SELECT stage" + gpu), "sm_8.0_gpu_after_optimizations");
  // V1 peak lines are re-keyed to their values: every one of the 22 resolves to a stored value.
  EXPECT_EQ(Scalar(db_, "SELECT COUNT(*) FROM peak_buffers p JOIN modules m USING(module_id) "
                        "WHERE m.name = 'SyncTensorsGraph.105' AND p.value_id IS NOT NULL"),
            22);
}

TEST_F(SeedRunIngest, UtilizationCountersAndSpills) {
  EXPECT_EQ(Scalar(db_, "SELECT COUNT(*) FROM kernel_counters"), 134);
  EXPECT_EQ(Scalar(db_, "SELECT COUNT(DISTINCT block_ordinal) FROM kernel_counters"), 4);
  EXPECT_EQ(Scalar(db_, "SELECT COUNT(DISTINCT block_ordinal) FROM kernel_counters "
                        "WHERE kernel = '<no-hlo-instruction>'"),
            2);
  EXPECT_EQ(Scalar(db_, "SELECT COUNT(*) FROM kernel_counters WHERE numerator > denominator"), 0);
  EXPECT_GT(Scalar(db_, "SELECT COUNT(*) FROM kernel_spills"), 0);
}

TEST_F(SeedRunIngest, HloTextInstructionsAndComputations) {
  // Seed 003 holds 79 instructions (counted from the file: lines of the form `  [ROOT ]%name = …`).
  EXPECT_EQ(Scalar(db_, "SELECT s.instruction_count FROM module_summary s JOIN modules m USING(module_id) "
                        "WHERE m.xla_module_id = 4"),
            79);
  EXPECT_EQ(Scalar(db_, "SELECT COUNT(*) FROM computations c JOIN modules m USING(module_id) "
                        "WHERE m.xla_module_id = 4 AND c.is_entry = 1"),
            1);
  EXPECT_EQ(Text(db_, "SELECT fingerprint_source FROM modules WHERE xla_module_id = 4"), "hlo_text");
}

TEST_F(SeedRunIngest, SecondIngestAddsNothingAndSaysUnchanged) {
  int64_t before = TotalRows(db_);
  auto again = IngestOrDie(db_, run_dir_);
  EXPECT_EQ(again.files_by_verdict["unchanged"], 6);
  EXPECT_EQ(again.rows, 0);
  EXPECT_EQ(TotalRows(db_), before);
}

TEST_F(SeedRunIngest, ChangedFileReplacesItsRows) {
  // Replace seed 000 by seed 002 under the same name: the module's rows become seed 002's.
  std::string path = run_dir_ + "/" + testing::kSeed000FileName;
  WriteFile(path, testing::ReadFile(testing::SeedFile("002")));
  auto again = IngestOrDie(db_, run_dir_);
  EXPECT_EQ(again.files_by_verdict["ingested"], 1);
  EXPECT_EQ(again.files_by_verdict["unchanged"], 5);
  EXPECT_EQ(Scalar(db_, "SELECT allocations FROM module_memory WHERE module_name = 'jit_splash_attention_kernel'"),
            14);
  EXPECT_EQ(Scalar(db_, "SELECT COUNT(*) FROM dump_files"), 6);
}

TEST_F(SeedRunIngest, RunLabelsAndTimeFlag) {
  ingest::IngestOptions options;
  options.run_name = "labelled";
  options.labels = {{"commit", "abc123"}, {"branch", "main"}};
  options.time_us = int64_t{1767225600} * 1000000;  // 2026-01-01
  IngestOrDie(db_, run_dir_, options);
  EXPECT_EQ(Text(db_, "SELECT value FROM run_labels l JOIN runs r USING(run_id) WHERE r.name = 'labelled' "
                      "AND key = 'commit'"),
            "abc123");
  EXPECT_EQ(Scalar(db_, "SELECT run_time_us FROM runs WHERE name = 'labelled'"), int64_t{1767225600} * 1000000);
  // Without --time, the run time is the newest file's mtime, not the ingest time.
  EXPECT_EQ(Text(db_, "SELECT run_time_source FROM runs WHERE name = 'nightly-2026-11-01'"), "newest_file_mtime");
}

// A file dated outside 1970 .. 2200 (a copied archive member dated 9999) does not set its run's time: it
// would sort the run newest forever. The run takes the newest of its other files' times.
TEST(IngestRunTime, AFileDatedOutsideTheRunTimeRangeDoesNotSetTheRunsTime) {
  TempDir tmp;
  const std::string run = tmp / "dated";
  MakeSeedRun(run);
  const int64_t kept_s = 1767225600;  // 2026-01-01
  int files = 0;
  for (const auto& entry : std::filesystem::recursive_directory_iterator(run)) {
    if (!entry.is_regular_file()) continue;
    const bool far_future = files++ == 0;
    const timespec times[2] = {{kept_s, 0}, {far_future ? int64_t{253402300799} : kept_s, 0}};  // 9999-12-31
    ASSERT_EQ(::utimensat(AT_FDCWD, entry.path().c_str(), times, 0), 0) << entry.path();
  }
  ASSERT_GT(files, 1);
  const std::string db = tmp / "xladb.db";
  IngestOrDie(db, run);
  EXPECT_EQ(Scalar(db, "SELECT run_time_us FROM runs WHERE name = 'dated'"), kept_s * 1000000);
  EXPECT_EQ(Text(db, "SELECT run_time_source FROM runs WHERE name = 'dated'"), "newest_file_mtime");
}

TEST(IngestBadInput, ABadFileIsRecordedAndTheRestIsIngested) {
  TempDir tmp;
  std::string run = tmp / "run";
  MakeSeedRun(run);
  // A file that claims to be a buffer assignment but holds garbage, and an empty one.
  WriteFile(run + "/module_0009.broken.after_optimizations-buffer-assignment.txt", "this is not XLA output\n\x01\x02");
  WriteFile(run + "/module_0010.empty.after_optimizations-buffer-assignment.txt", "");
  std::string db = tmp / "x.db";
  auto summary = IngestOrDie(db, run);
  EXPECT_EQ(summary.files_by_verdict["ingested"], 5);
  // Garbage under a buffer-assignment name is an error; an empty file holds nothing and is catalogued.
  EXPECT_EQ(summary.files_by_verdict["error"], 1);
  EXPECT_EQ(summary.files_by_verdict["not_ingested"], 2);
  ASSERT_EQ(summary.errors.size(), 1u);
  EXPECT_NE(summary.errors[0].path.find("broken"), std::string::npos);
  EXPECT_EQ(Scalar(db, "SELECT COUNT(*) FROM dump_files WHERE verdict = 'error' AND reason IS NOT NULL"), 1);
  EXPECT_EQ(Text(db, "SELECT reason FROM dump_files WHERE path LIKE '%empty%'"), "empty file");
  // Nothing of the broken files reached the data tables; the good ones are whole.
  EXPECT_EQ(Scalar(db, "SELECT COUNT(*) FROM modules WHERE name IN ('broken', 'empty')"), 0);
  EXPECT_EQ(Scalar(db, "SELECT allocations FROM module_memory WHERE module_name = 'jit_train_step'"), 14);
}

TEST(IngestSources, TarGzArchiveAndGzipFileGiveTheSameRowsAsTheFolder) {
  TempDir tmp;
  std::string run = tmp / "artifact";
  MakeSeedRun(run);
  std::string folder_db = tmp / "folder.db";
  IngestOrDie(folder_db, run);

  std::string cmd = "tar -czf " + (tmp / "artifact.tar.gz") + " -C " + tmp.path().string() + " artifact";
  ASSERT_EQ(std::system(cmd.c_str()), 0);
  std::string tar_db = tmp / "tar.db";
  auto summary = IngestOrDie(tar_db, tmp / "artifact.tar.gz");
  EXPECT_EQ(summary.run_name, "artifact");
  EXPECT_EQ(summary.files_by_verdict["ingested"], 5);
  for (const char* table : {"allocations", "buffer_values", "instructions", "peak_buffers", "utilization_counters"}) {
    EXPECT_EQ(Scalar(tar_db, std::string("SELECT COUNT(*) FROM ") + table),
              Scalar(folder_db, std::string("SELECT COUNT(*) FROM ") + table))
        << table;
  }
  EXPECT_EQ(Scalar(tar_db, "SELECT SUM(peak_bytes) FROM module_memory"),
            Scalar(folder_db, "SELECT SUM(peak_bytes) FROM module_memory"));

  std::string gz = tmp / testing::kSeed000FileName;
  WriteFile(gz, testing::ReadFile(testing::SeedFile("000")));
  ASSERT_EQ(std::system(("gzip -f " + gz).c_str()), 0);
  std::string gz_db = tmp / "gz.db";
  IngestOrDie(gz_db, gz + ".gz");
  EXPECT_EQ(Scalar(gz_db, "SELECT total_bytes FROM module_memory"), 18629632);
}

TEST(IngestSources, ArchiveMembersWithParentPathsAreRefused) {
  TempDir tmp;
  // Build a tar whose member is named ../escape.txt with Python's tarfile (tar(1) strips '..').
  std::string tar = tmp / "evil.tar";
  std::string py = "/usr/bin/python3 -c \"import tarfile,io;t=tarfile.open('" + tar +
                   "','w');d=b'BufferAssignment:\\n';i=tarfile.TarInfo('../escape-buffer-assignment.txt');"
                   "i.size=len(d);t.addfile(i,io.BytesIO(d));t.close()\"";
  ASSERT_EQ(std::system(py.c_str()), 0);
  std::string db = tmp / "x.db";
  auto summary = IngestOrDie(db, tar);
  EXPECT_EQ(summary.files_by_verdict["error"], 1);
  EXPECT_FALSE(std::filesystem::exists(tmp.path().parent_path() / "escape-buffer-assignment.txt"));
  EXPECT_NE(Text(db, "SELECT reason FROM dump_files").find(".."), std::string::npos);
}

}  // namespace
}  // namespace xladb
