// store/run_lifecycle.h: deleting a run leaves exactly what ingesting the other runs alone leaves (every
// table counted, interned texts included), and labels change in place.
#include "store/run_lifecycle.h"

#include <gtest/gtest.h>

#include <map>

#include "ingest/dump_ingester.h"
#include "store/queries.h"
#include "store/run_writer.h"
#include "tests/store/test_dirs.h"

namespace xladb {
namespace {

using testing::MakeSeedRun;
using testing::ReadFile;
using testing::SeedFile;
using testing::TempDir;
using testing::WriteFile;

void Ingest(store::Database& db, const std::string& folder, const std::string& run) {
  store::RunWriter writer(&db);
  ingest::DumpIngester ingester(&writer);
  ingest::IngestOptions options;
  options.run_name = run;
  auto summary = ingester.Ingest(folder, options);
  ASSERT_TRUE(summary.ok()) << summary.status().ToString();
  ASSERT_TRUE(summary->errors.empty()) << summary->errors[0].path << ": " << summary->errors[0].reason;
}

// Rows of every table of the file (sqlite_master), by table name.
std::map<std::string, int64_t> TableCounts(store::Database& db) {
  std::map<std::string, int64_t> counts;
  SQLite::Statement tables(db.sql(), "SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite_%'");
  while (tables.executeStep()) {
    const std::string name = tables.getColumn(0).getString();
    counts[name] = db.sql().execAndGet("SELECT COUNT(*) FROM \"" + name + "\"").getInt64();
  }
  return counts;
}

class RunLifecycleTest : public ::testing::Test {
 protected:
  void SetUp() override {
    // Run A: the seed folder and the report fixture's base. Run B: the seed folder again (sharing A's shapes
    // and texts), with the report fixture's head and the gate fixture's head (texts of its own).
    MakeSeedRun(tmp_ / "a");
    MakeSeedRun(tmp_ / "b");
    const std::string fixtures = XLADB_FIXTURE_DIR;
    const std::string mlp = "module_0007.jit_mlp.after_optimizations-buffer-assignment.txt";
    WriteFile(tmp_ / ("a/" + mlp), ReadFile(fixtures + "/report/base/" + mlp));
    WriteFile(tmp_ / ("b/" + mlp), ReadFile(fixtures + "/report/head/" + mlp));
    const std::string step = "module_0001.jit_step.after_optimizations-buffer-assignment.txt";
    WriteFile(tmp_ / ("b/gate/" + step), ReadFile(fixtures + "/gate/head/" + step));
  }
  std::unique_ptr<store::Database> Open(const std::string& name) {
    auto db = store::Database::Open(tmp_ / name);
    EXPECT_TRUE(db.ok()) << db.status().ToString();
    return std::move(db.value());
  }
  TempDir tmp_;
};

TEST_F(RunLifecycleTest, DeletingARunLeavesWhatTheOtherRunAloneLeaves) {
  auto alone = Open("alone.db");
  Ingest(*alone, tmp_ / "a", "a");
  auto both = Open("both.db");
  Ingest(*both, tmp_ / "a", "a");
  Ingest(*both, tmp_ / "b", "b");
  const auto before = TableCounts(*both);
  auto deleted = store::DeleteRun(*both, "b");
  ASSERT_TRUE(deleted.ok()) << deleted.status().ToString();
  EXPECT_EQ(deleted->files, 8);    // the seed folder's 6 files, jit_mlp and jit_step
  EXPECT_EQ(deleted->modules, before.at("modules") - TableCounts(*alone).at("modules"));
  const auto after = TableCounts(*both);
  EXPECT_EQ(after, TableCounts(*alone));
  int64_t removed = 0;
  for (const auto& [table, rows] : before) removed += rows - after.at(table);
  EXPECT_EQ(deleted->rows, removed);
  // Run A answers as before; B is gone.
  EXPECT_TRUE(store::GetRun(*both, "a").ok());
  EXPECT_EQ(store::GetRun(*both, "b").status().code(), Status::Code::kNotFound);
  EXPECT_EQ(store::DeleteRun(*both, "b").status().code(), Status::Code::kNotFound);
  // The file can take run B again, whole.
  Ingest(*both, tmp_ / "b", "b");
  EXPECT_EQ(TableCounts(*both), before);
}

TEST_F(RunLifecycleTest, LabelsAreSetReplacedAndRemoved) {
  auto db = Open("x.db");
  Ingest(*db, tmp_ / "a", "a");
  ASSERT_TRUE(store::RelabelRun(*db, "a", {{"branch", "main"}, {"commit", "abc"}}, {}).ok());
  ASSERT_TRUE(store::RelabelRun(*db, "a", {{"commit", "def"}}, {"branch"}).ok());
  auto run = store::GetRun(*db, "a");
  ASSERT_TRUE(run.ok());
  EXPECT_EQ(run->labels, (store::Labels{{"commit", "def"}}));
  EXPECT_EQ(store::RelabelRun(*db, "nope", {{"k", "v"}}, {}).code(), Status::Code::kNotFound);
  EXPECT_EQ(store::RelabelRun(*db, "a", {{"", "v"}}, {}).code(), Status::Code::kInvalidArgument);
}

}  // namespace
}  // namespace xladb
