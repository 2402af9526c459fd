// Modules named by number only (issue 22 item 13): dumps written before 2021-06-22 name their files
// `module_<ID>.<suffix>` without the module's name (docs/formats.md, "File names"). Such a module takes its
// name from its HloModule line and its entry signature from its ENTRY computation line (the header of those
// dumps has no entry_computation_layout, and their buffer assignments print no parameter shapes), whichever
// of its files arrives first; a module with no HLO text keeps the placeholder `module_<ID>`.
//
// Expected values come from tests/fixtures/tf_2020 (a hand-made TensorFlow 2020 dump): the HloModule line
// names module 0 kTfName, its ENTRY line is `(arg0.1: f32[4], arg1.2: f32[4]) -> f32[4]`, its buffer
// assignment says `Total bytes used: 48`; module 1 has only a buffer assignment (`Total bytes used: 96`).
#include <gtest/gtest.h>

#include <filesystem>
#include <string>
#include <vector>

#include "store/backend/database.h"
#include "store/schema/module_rekey.h"
#include "store/sqlite/sqlite_connection.h"
#include "tests/store/test_dirs.h"
#include "tests/store/test_ingest.h"

namespace xladb::store {
namespace {

namespace fs = std::filesystem;

constexpr const char* kTfName = "cluster_0__XlaCompiledKernel_true__XlaNumConstantArgs_0__XlaNumResourceArgs_0_.9";
constexpr const char* kSignature = "(f32[4], f32[4]) -> f32[4]";

fs::path Fixture() { return fs::path(XLADB_FIXTURE_DIR) / "tf_2020"; }

// "name|stage|xla_module_id|entry_signature|total_bytes" per module of `run`, in (xla_module_id, stage) order.
std::vector<std::string> ModulesOf(Database& db, const std::string& run) {
  std::vector<std::string> out;
  SQLite::Statement q(SqliteOf(db),
                      "SELECT m.name, m.stage, m.xla_module_id, m.entry_signature, COALESCE(s.total_bytes, -1) "
                      "FROM modules m JOIN runs r USING (run_id) LEFT JOIN module_summary s USING (module_id) "
                      "WHERE r.name = ? ORDER BY m.xla_module_id, m.stage");
  q.bind(1, run);
  while (q.executeStep()) {
    out.push_back(q.getColumn(0).getString() + "|" + q.getColumn(1).getString() + "|" +
                  q.getColumn(2).getString() + "|" + q.getColumn(3).getString() + "|" + q.getColumn(4).getString());
  }
  return out;
}

const std::vector<std::string>& Expected() {
  static const std::vector<std::string> expected = {
      std::string(kTfName) + "|after_optimizations|0|" + kSignature + "|48",
      std::string(kTfName) + "|before_optimizations|0|" + kSignature + "|-1",
      "module_1|after_optimizations|1|(?, ?) -> ?|96",
  };
  return expected;
}

class NumberedModules : public ::testing::Test {
 protected:
  void SetUp() override {
    ASSERT_TRUE(fs::exists(Fixture() / "module_0000.after_optimizations.txt")) << Fixture();
    auto db = Database::Open(tmp_ / "store.db");
    ASSERT_TRUE(db.ok()) << db.status().ToString();
    db_ = std::move(db.value());
  }
  void Ingest(const fs::path& folder, const std::string& run, int want_ingested) {
    auto summary = testing::IngestRun(*db_, folder.string(), run);
    ASSERT_TRUE(summary.ok()) << summary.status().ToString();
    EXPECT_EQ(summary->files_by_verdict["ingested"], want_ingested) << run;
  }

  testing::TempDir tmp_;
  std::unique_ptr<Database> db_;
};

TEST_F(NumberedModules, TakeTheirHloModuleNameAndEntrySignature) {
  ASSERT_NO_FATAL_FAILURE(Ingest(Fixture(), "tf", 4));
  EXPECT_EQ(ModulesOf(*db_, "tf"), Expected());
}

// The buffer assignment first (a placeholder row), the HLO texts in a later ingest of the same folder; and
// the HLO texts first, the buffer assignment later: the same rows either way.
TEST_F(NumberedModules, EitherArrivalOrderGivesTheSameRows) {
  const fs::path folder = fs::path(tmp_.path().string()) / "tf";
  fs::create_directories(folder);
  auto copy = [&](const char* file) { fs::copy_file(Fixture() / file, folder / file); };
  copy("module_0000.after_optimizations-buffer-assignment.txt");
  copy("module_0001.after_optimizations-buffer-assignment.txt");
  ASSERT_NO_FATAL_FAILURE(Ingest(folder, "assignment-first", 2));
  EXPECT_EQ(ModulesOf(*db_, "assignment-first").front(),
            "module_0|after_optimizations|0|(?, ?) -> ?|48");  // no name or shapes until the HLO text arrives
  copy("module_0000.after_optimizations.txt");
  copy("module_0000.before_optimizations.txt");
  ASSERT_NO_FATAL_FAILURE(Ingest(folder, "assignment-first", 2));
  EXPECT_EQ(ModulesOf(*db_, "assignment-first"), Expected());

  const fs::path texts = fs::path(tmp_.path().string()) / "texts";
  fs::create_directories(texts);
  for (const char* file : {"module_0000.after_optimizations.txt", "module_0000.before_optimizations.txt",
                           "module_0001.after_optimizations-buffer-assignment.txt"}) {
    fs::copy_file(Fixture() / file, texts / file);
  }
  ASSERT_NO_FATAL_FAILURE(Ingest(texts, "texts-first", 3));
  fs::copy_file(Fixture() / "module_0000.after_optimizations-buffer-assignment.txt",
                texts / "module_0000.after_optimizations-buffer-assignment.txt");
  ASSERT_NO_FATAL_FAILURE(Ingest(texts, "texts-first", 1));
  EXPECT_EQ(ModulesOf(*db_, "texts-first"), Expected());
}

// A store written by version 6 held such modules under their placeholder name, without an HLO signature (it
// read none from the ENTRY line) and with the buffer assignment's '?' signature. The migration to version 7
// (store/schema/module_rekey.h) turns those rows into what a fresh ingest stores.
TEST_F(NumberedModules, TheMigrationGivesWhatAFreshIngestGives) {
  ASSERT_NO_FATAL_FAILURE(Ingest(Fixture(), "tf", 4));
  SQLite::Database& sql = SqliteOf(*db_);
  sql.exec("UPDATE modules SET name = 'module_' || xla_module_id, hlo_entry_signature = NULL, "
           "entry_signature = '(?, ?) -> ?', identity_key = 'stale', entry_signature_confirmed = NULL");
  sql.exec("UPDATE modules SET entry_signature = '' WHERE stage = 'before_optimizations'");
  ASSERT_EQ(ModulesOf(*db_, "tf").front(), "module_0|after_optimizations|0|(?, ?) -> ?|48");
  {
    SQLite::Statement q(sql, "SELECT identity_key FROM modules WHERE identity_key <> 'stale'");
    ASSERT_FALSE(q.executeStep()) << "every key was made stale";
  }
  sql.exec("BEGIN");
  sql.exec("CREATE TABLE modules_to_rekey AS SELECT module_id FROM modules");
  SqliteConnection connection(sql);
  RekeyListedModules(connection);
  sql.exec("COMMIT");
  EXPECT_EQ(ModulesOf(*db_, "tf"), Expected());

  // The keys equal a fresh ingest's.
  ASSERT_NO_FATAL_FAILURE(Ingest(Fixture(), "fresh", 4));
  auto keys = [&](const std::string& run) {
    std::vector<std::string> out;
    SQLite::Statement q(sql, "SELECT m.identity_key FROM modules m JOIN runs r USING (run_id) WHERE r.name = ? "
                             "ORDER BY m.xla_module_id, m.stage");
    q.bind(1, run);
    while (q.executeStep()) out.push_back(q.getColumn(0).getString());
    return out;
  };
  EXPECT_EQ(keys("tf"), keys("fresh"));
}

}  // namespace
}  // namespace xladb::store
