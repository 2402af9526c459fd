// Ingest straight into a PostgreSQL store (the writer on store/postgres/postgres_backend.h): what the dumps say arrives
// (seed 000: 8 allocations, `Total bytes used: 18629632`), a file the store's keys refuse is an error of its
// own while the run goes on, and a second ingest of the same folder changes nothing.
#include <gtest/gtest.h>

#include <memory>
#include <string>

#include "store/backend/database.h"
#include "store/admin/run_lifecycle.h"
#include "tests/postgres/postgres_test_server.h"
#include "tests/store/test_dirs.h"
#include "tests/store/test_ingest.h"

namespace xladb {
namespace {

class IngestIntoPostgres : public ::testing::Test {
 protected:
  void SetUp() override {
    ASSERT_NE(pg_.connection(), nullptr) << pg_.why();
    auto db = store::Database::Open(pg_.uri());
    ASSERT_TRUE(db.ok()) << db.status().ToString();
    db_ = std::move(db.value());
  }
  std::string Pg(const std::string& sql) { return pg_.Value(sql); }

  testing::PostgresTestSchema pg_{"ingest"};
  testing::TempDir tmp_;
  std::unique_ptr<store::Database> db_;
};

TEST_F(IngestIntoPostgres, AFileTheStoreRefusesIsAnErrorAndTheRunGoesOn) {
  // Seed 000 with its `allocation 0:` line twice: allocations are keyed by module and index.
  std::string text = testing::ReadFile(testing::SeedFile("000"));
  const size_t at = text.find("\nallocation 0:");
  const size_t end = text.find('\n', at + 1);
  const std::string run = tmp_ / "run";
  testing::WriteFile(run + "/a/" + testing::kSeed000FileName, text.substr(0, end + 1) + text.substr(at + 1, end - at) +
                                                     text.substr(end + 1));
  testing::WriteFile(run + "/b/" + testing::kSeed000FileName, testing::ReadFile(testing::SeedFile("000")));
  testing::WriteFile(run + "/c/module_0002.jit_train_step.after_optimizations-buffer-assignment.txt",
                     testing::ReadFile(testing::SeedFile("002")));
  auto summary = testing::IngestRun(*db_, run, "run");
  ASSERT_TRUE(summary.ok()) << summary.status().ToString();
  EXPECT_EQ(summary->files_by_verdict["ingested"], 2);
  EXPECT_EQ(summary->files_by_verdict["error"], 1);
  ASSERT_EQ(summary->errors.size(), 1u);
  EXPECT_EQ(summary->errors[0].path, "a/" + std::string(testing::kSeed000FileName));
  EXPECT_NE(summary->errors[0].reason.find("duplicate key value violates unique constraint"), std::string::npos)
      << summary->errors[0].reason;
  // The refused file left no rows; the others are whole.
  EXPECT_EQ(Pg("SELECT COUNT(*) FROM allocations a JOIN modules m USING (module_id) WHERE m.folder = 'a'"), "0");
  EXPECT_EQ(Pg("SELECT COUNT(*) FROM allocations a JOIN modules m USING (module_id) WHERE m.folder = 'b'"), "8");
  EXPECT_EQ(Pg("SELECT total_bytes FROM module_summary JOIN modules USING (module_id) WHERE folder = 'b'"),
            "18629632");
  EXPECT_EQ(Pg("SELECT COUNT(*) FROM dump_files WHERE verdict = 'error' AND path LIKE 'a/%'"), "1");

  // Again: every file is unchanged (the refused one too: the same content fails the same way), nothing added.
  const std::string rows_before = Pg("SELECT COUNT(*) FROM buffer_values");
  auto again = testing::IngestRun(*db_, run, "run");
  ASSERT_TRUE(again.ok()) << again.status().ToString();
  EXPECT_EQ(again->files_by_verdict["unchanged"], 3);
  EXPECT_EQ(Pg("SELECT COUNT(*) FROM buffer_values"), rows_before);
  EXPECT_EQ(Pg("SELECT COUNT(*) FROM dump_files"), "3");
}

// Two files of one module print an instruction differently (tests/fixtures/merged_texts): the text the
// merge replaced is not left behind, and deleting the run gives back every text.
TEST_F(IngestIntoPostgres, AMergeThatReplacesAnInstructionsTextLeavesNoTextBehind) {
  const std::string fixtures = XLADB_FIXTURE_DIR;
  const std::string run = tmp_ / "run";
  for (const std::string& file : {fixtures + "/gate/head/module_0001.jit_step.after_optimizations-buffer-assignment.txt",
                                  fixtures + "/merged_texts/module_0001.jit_step.after_optimizations.txt"}) {
    testing::WriteFile(run + "/" + file.substr(file.rfind('/') + 1), testing::ReadFile(file));
  }
  auto summary = testing::IngestRun(*db_, run, "run");
  ASSERT_TRUE(summary.ok()) << summary.status().ToString();
  EXPECT_EQ(summary->files_by_verdict["ingested"], 2);
  EXPECT_EQ(Pg("SELECT COUNT(*) FROM modules"), "1");
  EXPECT_EQ(Pg("SELECT COUNT(*) FROM long_texts WHERE text_id NOT IN "
               "(SELECT text_id FROM instructions WHERE text_id IS NOT NULL)"),
            "0");
  ASSERT_TRUE(store::DeleteRun(*db_, "run").ok());
  EXPECT_EQ(Pg("SELECT COUNT(*) FROM long_texts"), "0");
}

}  // namespace
}  // namespace xladb
