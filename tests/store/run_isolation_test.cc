// What one file or one source may not do to the rest (issue 10, items 7 and 12): a file whose rows the store
// refuses is that file's error and the run goes on; multi-host dumps whose module numbers repeat per host are
// distinct modules; a second source does not merge into a run without --append.
#include <SQLiteCpp/SQLiteCpp.h>
#include <gtest/gtest.h>

#include <filesystem>
#include <string>

#include "ingest/dump_ingester.h"
#include "store/backend/database.h"
#include "store/query/queries.h"
#include "store/write/run_writer.h"
#include "tests/store/test_dirs.h"

namespace xladb {
namespace {

using testing::ReadFile;
using testing::SeedFile;
using testing::TempDir;
using testing::WriteFile;

StatusOr<ingest::IngestSummary> Ingest(const std::string& db_path, const std::string& path,
                                       ingest::IngestOptions options = {}) {
  auto db = store::Database::Open(db_path);
  if (!db.ok()) return db.status();
  store::RunWriter writer(db.value().get());
  ingest::DumpIngester ingester(&writer);
  return ingester.Ingest(path, options);
}

int64_t Scalar(const std::string& db_path, const std::string& sql) {
  SQLite::Database db(db_path, SQLite::OPEN_READONLY);
  return db.execAndGet(sql).getInt64();
}

// Seed 000 with its `allocation 0:` line twice: the dump is malformed in a way only the store notices
// (allocations are keyed by module and index).
std::string SeedWithAllocationZeroTwice() {
  std::string text = ReadFile(SeedFile("000"));
  size_t at = text.find("\nallocation 0:");
  size_t end = text.find('\n', at + 1);
  return text.substr(0, end + 1) + text.substr(at + 1, end - at) + text.substr(end + 1);
}

TEST(RunIsolation, AFileTheStoreRefusesIsAnErrorAndTheRunGoesOn) {
  TempDir tmp;
  const std::string run = tmp / "run";
  WriteFile(run + "/a/" + testing::kSeed000FileName, SeedWithAllocationZeroTwice());
  WriteFile(run + "/b/" + testing::kSeed000FileName, ReadFile(SeedFile("000")));
  WriteFile(run + "/c/module_0002.jit_train_step.after_optimizations-buffer-assignment.txt",
            ReadFile(SeedFile("002")));
  auto summary = Ingest(tmp / "x.db", run);
  ASSERT_TRUE(summary.ok()) << summary.status().ToString();
  EXPECT_EQ(summary->files, 3);
  EXPECT_EQ(summary->files_by_verdict["ingested"], 2);
  EXPECT_EQ(summary->files_by_verdict["error"], 1);
  ASSERT_EQ(summary->errors.size(), 1u);
  EXPECT_EQ(summary->errors[0].path, "a/" + std::string(testing::kSeed000FileName));
  EXPECT_NE(summary->errors[0].reason.find("UNIQUE constraint failed: allocations"), std::string::npos)
      << summary->errors[0].reason;
  // The failed file left no rows; the others are whole (seed 000: 8 allocations; seed 002: see its dump).
  const std::string db = tmp / "x.db";
  EXPECT_EQ(Scalar(db, "SELECT COUNT(*) FROM allocations a JOIN modules m USING (module_id) WHERE m.folder = 'a'"), 0);
  EXPECT_EQ(Scalar(db, "SELECT COUNT(*) FROM allocations a JOIN modules m USING (module_id) WHERE m.folder = 'b'"), 8);
  EXPECT_EQ(Scalar(db, "SELECT total_bytes FROM module_summary JOIN modules USING (module_id) WHERE folder = 'b'"),
            18629632);
  EXPECT_EQ(Scalar(db, "SELECT COUNT(*) FROM dump_files WHERE verdict = 'error' AND path LIKE 'a/%'"), 1);
}

TEST(RunIsolation, MultiHostDumpsAreDistinctModulesPerHostFolder) {
  TempDir tmp;
  const std::string run = tmp / "run";
  WriteFile(run + "/host0/" + testing::kSeed000FileName, ReadFile(SeedFile("000")));
  WriteFile(run + "/host1/" + testing::kSeed000FileName, ReadFile(SeedFile("000")));
  auto summary = Ingest(tmp / "x.db", run);
  ASSERT_TRUE(summary.ok()) << summary.status().ToString();
  EXPECT_EQ(summary->files_by_verdict["ingested"], 2);
  EXPECT_TRUE(summary->errors.empty());
  const std::string db = tmp / "x.db";
  EXPECT_EQ(Scalar(db, "SELECT COUNT(*) FROM modules WHERE xla_module_id = 1"), 2);
  EXPECT_EQ(Scalar(db, "SELECT COUNT(DISTINCT folder) FROM modules WHERE folder IN ('host0', 'host1')"), 2);
  EXPECT_EQ(Scalar(db, "SELECT SUM(total_bytes) FROM module_memory"), 2 * 18629632);
  EXPECT_EQ(Scalar(db, "SELECT COUNT(*) FROM allocations"), 16);

  // Each host's module can be asked for by its folder.
  auto ro = store::Database::Open(db, store::Database::Mode::kReadOnly);
  ASSERT_TRUE(ro.ok());
  auto host1 = store::TopBuffers(*ro.value(), "run", "jit_splash_attention_kernel", 3, "", -1, "host1");
  ASSERT_TRUE(host1.ok()) << host1.status().ToString();
  EXPECT_EQ(host1->folder, "host1");
  EXPECT_EQ(host1->xla_module_id, 1);
  EXPECT_EQ(host1->buffers.size(), 3u);
  auto missing = store::TopBuffers(*ro.value(), "run", "jit_splash_attention_kernel", 3, "", -1, "host7");
  EXPECT_EQ(missing.status().code(), Status::Code::kNotFound);
  EXPECT_NE(missing.status().message().find("host7"), std::string::npos);
}

TEST(RunIsolation, AnotherSourceDoesNotMergeIntoARunWithoutAppend) {
  TempDir tmp;
  WriteFile(tmp / "a/run/" + testing::kSeed000FileName, ReadFile(SeedFile("000")));
  WriteFile(tmp / "b/run/module_0002.jit_train_step.after_optimizations-buffer-assignment.txt",
            ReadFile(SeedFile("002")));
  ingest::IngestOptions named;
  named.run_name = "nightly";
  ASSERT_TRUE(Ingest(tmp / "x.db", tmp / "a/run", named).ok());
  // The same source again is a re-ingest: allowed, and unchanged.
  auto again = Ingest(tmp / "x.db", tmp / "a/run", named);
  ASSERT_TRUE(again.ok()) << again.status().ToString();
  EXPECT_EQ(again->files_by_verdict["unchanged"], 1);

  // So are other spellings of it: a trailing slash, `.` parts, a symlink to it.
  std::filesystem::create_directory_symlink(tmp / "a/run", tmp / "link");
  for (const std::string& spelling : {tmp / "a/run/", tmp / "a/./run", tmp / "link"}) {
    auto same = Ingest(tmp / "x.db", spelling, named);
    ASSERT_TRUE(same.ok()) << spelling << ": " << same.status().ToString();
    EXPECT_EQ(same->files_by_verdict["unchanged"], 1) << spelling;
  }

  auto other = Ingest(tmp / "x.db", tmp / "b/run", named);
  ASSERT_FALSE(other.ok());
  EXPECT_EQ(other.status().code(), Status::Code::kFailedPrecondition);
  EXPECT_NE(other.status().message().find(tmp / "a/run"), std::string::npos) << other.status().message();
  EXPECT_NE(other.status().message().find("--append"), std::string::npos);
  EXPECT_EQ(Scalar(tmp / "x.db", "SELECT COUNT(*) FROM modules"), 1);

  named.append = true;
  auto appended = Ingest(tmp / "x.db", tmp / "b/run", named);
  ASSERT_TRUE(appended.ok()) << appended.status().ToString();
  EXPECT_EQ(Scalar(tmp / "x.db", "SELECT COUNT(*) FROM modules"), 2);
  EXPECT_EQ(Scalar(tmp / "x.db", "SELECT COUNT(*) FROM runs"), 1);
}

TEST(RunIsolation, AnUploadOfOtherContentDoesNotMergeWithoutAppend) {
  TempDir tmp;
  WriteFile(tmp / "up1/" + testing::kSeed000FileName, ReadFile(SeedFile("000")));
  WriteFile(tmp / "up2/" + testing::kSeed000FileName, ReadFile(SeedFile("002")));
  ingest::IngestOptions upload;
  upload.run_name = "ci-42";
  upload.source_description = "upload:/artifacts/ci-42";
  upload.content_digest = "digest-of-upload-1";
  ASSERT_TRUE(Ingest(tmp / "x.db", tmp / "up1", upload).ok());
  upload.content_digest = "digest-of-upload-1";  // the same upload again (a retry): fine
  EXPECT_TRUE(Ingest(tmp / "x.db", tmp / "up1", upload).ok());
  upload.content_digest = "digest-of-upload-2";
  auto other = Ingest(tmp / "x.db", tmp / "up2", upload);
  ASSERT_FALSE(other.ok());
  EXPECT_EQ(other.status().code(), Status::Code::kFailedPrecondition);
  EXPECT_NE(other.status().message().find("upload:/artifacts/ci-42"), std::string::npos) << other.status().message();
}

}  // namespace
}  // namespace xladb
