// A file recorded without rows (not ingested, or an error) in a run the writer created is stored: in the same
// writer's life the same content again is unchanged, and other content replaces the verdict. The writer skips
// looking for a stored version of a path of a run it created and has not written yet (RunWriter's Unstored);
// a path recorded without rows must count as written, or its second version was taken for another writer's
// and dropped.
#include <gtest/gtest.h>

#include <string>

#include "ingest/records/ingest_target.h"
#include "store/backend/database.h"
#include "store/write/run_writer.h"
#include "tests/store/test_dirs.h"
#include "tests/store/writer_specs.h"

namespace xladb {
namespace {

using ingest::FileOutcome;
using ingest::FileSpec;
using ingest::FileVerdict;
using ingest::IngestTarget;

TEST(FileRecordedAgain, InTheSameWritersLifeItIsUnchangedOrReplaced) {
  testing::TempDir tmp;
  auto db = store::Database::Open(tmp / "x.db");
  ASSERT_TRUE(db.ok()) << db.status().ToString();
  store::RunWriter writer(db.value().get());
  auto run = writer.BeginRun(testing::RunNamed("nightly"));
  ASSERT_TRUE(run.ok()) << run.status().ToString();
  FileSpec spec = testing::FileOf(*run, "notes.txt", "unknown", "h1");
  spec.size_bytes = 5;
  ASSERT_TRUE(writer.RecordFileWithoutRows(spec, {FileVerdict::kNotIngested, "not a dump", 1, 0}).ok());

  auto again = writer.CheckFile(*run, "notes.txt", "h1");
  ASSERT_TRUE(again.ok()) << again.status().ToString();
  EXPECT_EQ(*again, IngestTarget::FileState::kUnchanged);

  auto changed = writer.CheckFile(*run, "notes.txt", "h2");
  ASSERT_TRUE(changed.ok());
  EXPECT_EQ(*changed, IngestTarget::FileState::kChanged);
  spec.content_hash = "h2";
  ASSERT_TRUE(writer.RecordFileWithoutRows(spec, {FileVerdict::kError, "cut short", 1, 0}).ok());
  auto stored = [&] {
    auto rows =
        db.value()->connection().Prepare("SELECT content_hash, verdict, reason FROM dump_files ORDER BY path");
    std::string out;
    while (rows->Step()) out += rows->Text(0) + "|" + rows->Text(1) + "|" + rows->Text(2) + "\n";
    return out;
  };
  EXPECT_EQ(stored(), "h2|error|cut short\n");

  // A path first recorded without rows, then written with rows: the new version replaces it.
  FileSpec other = spec;
  other.path = "later.txt";
  ASSERT_TRUE(writer.RecordFileWithoutRows(other, {FileVerdict::kNotIngested, "empty", 0, 0}).ok());
  other.content_hash = "h3";
  auto sink = writer.BeginFile(other);
  ASSERT_TRUE(sink.ok()) << sink.status().ToString();
  ASSERT_NE(*sink, nullptr) << "taken for another writer's file";
  ASSERT_TRUE(writer.CommitFile({FileVerdict::kIngested, "", 2, 0}).ok());
  ASSERT_TRUE(writer.FinishRun(*run, -1).ok());
  EXPECT_EQ(stored(), "h3|ingested|\nh2|error|cut short\n");  // later.txt, notes.txt
}

}  // namespace
}  // namespace xladb
