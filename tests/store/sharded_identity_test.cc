// Sharding in identity (issue 22 item 2, store/facts/module_facts.h): compiles of one jit name with the same shapes
// and other ENTRY shardings are distinct identities; an unsharded module keeps the key it had before
// shardings were read; a module takes its before_optimizations text's shardings, also when that text arrives
// last; the version-7 re-key fills a stored module's shardings as a fresh ingest does.
//
// Expected shardings are the `sharding={…}` values printed in tests/fixtures/campaign/r3's HLO texts
// (module 7: {replicated} on parameter 0 and the ROOT; module 8: {devices=[2]0,1} on both) and in the texts
// written below.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "store/backend/database.h"
#include "store/facts/module_facts.h"
#include "store/schema/module_rekey.h"
#include "store/sqlite/sqlite_connection.h"
#include "tests/store/test_dirs.h"
#include "tests/store/test_ingest.h"

namespace xladb::store {
namespace {

namespace fs = std::filesystem;

constexpr const char* kStage = "after_optimizations";
constexpr const char* kSignature = "(f32[256]) -> f32[256]";

struct Row {
  std::string sharding, key;
};

Row ModuleRow(Database& db, const std::string& run, const std::string& name, int xla_module_id,
              const std::string& stage = kStage) {
  SQLite::Statement q(SqliteOf(db), "SELECT m.entry_sharding, m.identity_key FROM modules m JOIN runs r USING (run_id) "
                                "WHERE r.name = ? AND m.name = ? AND m.xla_module_id = ? AND m.stage = ?");
  q.bind(1, run);
  q.bind(2, name);
  q.bind(3, xla_module_id);
  q.bind(4, stage);
  if (!q.executeStep()) return {"<no row>", ""};
  return {q.getColumn(0).getString(), q.getColumn(1).getString()};
}

class ShardedIdentity : public ::testing::Test {
 protected:
  void SetUp() override {
    auto db = Database::Open(tmp_ / "store.db");
    ASSERT_TRUE(db.ok()) << db.status().ToString();
    db_ = std::move(db.value());
  }
  void Ingest(const fs::path& folder, const std::string& run) {
    auto summary = testing::IngestRun(*db_, folder.string(), run);
    ASSERT_TRUE(summary.ok()) << summary.status().ToString();
  }
  static fs::path Campaign(const char* run) { return fs::path(XLADB_FIXTURE_DIR) / "campaign" / run; }

  testing::TempDir tmp_;
  std::unique_ptr<Database> db_;
};

TEST_F(ShardedIdentity, CompilesThatDifferOnlyInShardingAreTwoIdentities) {
  ASSERT_NO_FATAL_FAILURE(Ingest(Campaign("r3"), "r3"));
  const Row replicated = ModuleRow(*db_, "r3", "jit_sharded", 7);
  const Row split = ModuleRow(*db_, "r3", "jit_sharded", 8);
  EXPECT_EQ(replicated.sharding, "({replicated}) -> {replicated}");
  EXPECT_EQ(split.sharding, "({devices=[2]0,1}) -> {devices=[2]0,1}");
  EXPECT_EQ(replicated.key, ModuleIdentityKey("jit_sharded", kStage, kSignature, "", replicated.sharding));
  EXPECT_EQ(split.key, ModuleIdentityKey("jit_sharded", kStage, kSignature, "", split.sharding));
  EXPECT_NE(replicated.key, split.key);
  // jit_step has no HLO text, so no sharding: its key is (name, stage, signature, folder) as before.
  const Row step = ModuleRow(*db_, "r3", "jit_step", 1);
  EXPECT_EQ(step.sharding, "");
  EXPECT_EQ(step.key, ModuleIdentityKey("jit_step", kStage, kSignature, ""));
}

// The after_optimizations text's parameter sharding is what partitioning propagated; the before_optimizations
// text keeps what the program asked for. The latter wins, whichever file comes first.
TEST_F(ShardedIdentity, TheBeforeOptimizationsTextGivesTheShardingWhenItArrivesLast) {
  const fs::path folder = fs::path(tmp_.path().string()) / "run";
  fs::create_directories(folder);
  const std::string base = "module_0003.jit_g.";
  fs::copy_file(Campaign("r3") / "module_0008.jit_sharded.after_optimizations-buffer-assignment.txt",
                folder / (base + "after_optimizations-buffer-assignment.txt"));
  std::ofstream(folder / (base + "after_optimizations.txt"))
      << "HloModule jit_g, entry_computation_layout={(f32[256]{0})->f32[256]{0}}\n\n"
         "ENTRY main.4 {\n"
         "  Arg_0.1 = f32[256]{0} parameter(0), sharding={devices=[2]0,1}\n"
         "  ROOT add.3 = f32[256]{0} add(Arg_0.1, Arg_0.1)\n"
         "}\n";
  ASSERT_NO_FATAL_FAILURE(Ingest(folder, "g"));
  EXPECT_EQ(ModuleRow(*db_, "g", "jit_g", 3).sharding, "({devices=[2]0,1}) -> none");

  std::ofstream(folder / (base + "before_optimizations.txt"))
      << "HloModule jit_g, entry_computation_layout={(f32[256]{0})->f32[256]{0}}\n\n"
         "ENTRY main.4 {\n"
         "  Arg_0.1 = f32[256]{0} parameter(0)\n"
         "  ROOT add.3 = f32[256]{0} add(Arg_0.1, Arg_0.1), sharding={devices=[2]0,1}\n"
         "}\n";
  ASSERT_NO_FATAL_FAILURE(Ingest(folder, "g"));
  const Row after = ModuleRow(*db_, "g", "jit_g", 3);
  EXPECT_EQ(after.sharding, "(none) -> {devices=[2]0,1}");
  EXPECT_EQ(after.key, ModuleIdentityKey("jit_g", kStage, kSignature, "", "(none) -> {devices=[2]0,1}"));
  EXPECT_EQ(ModuleRow(*db_, "g", "jit_g", 3, "before_optimizations").sharding, "(none) -> {devices=[2]0,1}");
}

// A version-6 store kept no shardings; the re-key reads them from the stored ENTRY instructions.
TEST_F(ShardedIdentity, TheRekeyFillsShardingsAsAFreshIngestDoes) {
  ASSERT_NO_FATAL_FAILURE(Ingest(Campaign("r3"), "r3"));
  SQLite::Database& sql = SqliteOf(*db_);
  auto keys = [&] {
    std::vector<std::string> out;
    SQLite::Statement q(sql, "SELECT name || '#' || xla_module_id || ' ' || COALESCE(hlo_entry_sharding, 'NULL') || "
                             "' ' || entry_sharding || ' ' || identity_key FROM modules ORDER BY module_id");
    while (q.executeStep()) out.push_back(q.getColumn(0).getString());
    return out;
  };
  const std::vector<std::string> fresh = keys();
  sql.exec("UPDATE modules SET hlo_entry_sharding = NULL, entry_sharding = '', identity_key = 'stale'");
  sql.exec("BEGIN");
  sql.exec("CREATE TABLE modules_to_rekey AS SELECT module_id FROM modules");
  SqliteConnection connection(sql);
  RekeyListedModules(connection);
  sql.exec("COMMIT");
  EXPECT_EQ(keys(), fresh);
  EXPECT_EQ(ModuleRow(*db_, "r3", "jit_sharded", 8).sharding, "({devices=[2]0,1}) -> {devices=[2]0,1}");
}

}  // namespace
}  // namespace xladb::store
