// DiffRuns and module matching (store/compare/run_diff.h, module_match.h) over the seed runs of
// run_queries_fixture.h: which modules pair, and which buffers changed and why, counted from the dumps.
#include "tests/store/run_queries_fixture.h"

namespace xladb::testing {
namespace {

using store::BufferChange;
using store::ModuleDiff;

// --- DiffRuns ------------------------------------------------------------------------------------------

TEST_F(SeedRunQueries, DiffOfTwoCopiesIsUnchanged) {
  store::DiffQuery query;
  query.run_a = "nightly-1";
  query.run_b = "nightly-3";
  auto diff = store::DiffRuns(*db_, query);
  ASSERT_TRUE(diff.ok()) << diff.status().ToString();
  EXPECT_EQ(diff->unchanged, 3);
  EXPECT_EQ(diff->changed + diff->added + diff->removed, 0);
  EXPECT_TRUE(diff->modules.empty());
  query.include_unchanged = true;
  diff = store::DiffRuns(*db_, query);
  ASSERT_TRUE(diff.ok());
  ASSERT_EQ(diff->modules.size(), 3u);
  for (const auto& m : diff->modules) {
    EXPECT_EQ(m.change, ModuleDiff::Change::kUnchanged) << m.module_name;
    EXPECT_EQ(m.peak_a, m.peak_b);
    EXPECT_TRUE(m.buffers.empty());
  }
}

// The seed runs: nightly-2 has a module the others lack and lacks one they have (keys on one side only).
TEST_F(SeedRunQueries, MatchModulesIsTheViewRestrictedToTwoRuns) {
  const auto [pairs, lone] = ExpectMatchModulesIsTheView(*db_);
  EXPECT_GT(pairs, 0);
  EXPECT_GT(lone, 0);
}

// nightly-2 replaces the splash kernel's dump by seed 002 (another entry signature: another identity), drops
// seed 004 and adds seed 000 as jit_flash_kernel. Matched by identity, then the leftovers of one name by
// signature (issue 22): the splash kernel is a reshaped pair, changed and matched by "name"; one module is
// added, one removed, and jit_train_step (seed 002 in both) is unchanged.
TEST_F(SeedRunQueries, DiffMatchesModulesByIdentity) {
  store::DiffQuery query;
  query.run_a = "nightly-1";
  query.run_b = "nightly-2";
  query.max_buffers = -1;
  auto diff = store::DiffRuns(*db_, query);
  ASSERT_TRUE(diff.ok()) << diff.status().ToString();
  EXPECT_EQ(diff->changed, 1);
  EXPECT_EQ(diff->added, 1);
  EXPECT_EQ(diff->removed, 1);
  EXPECT_EQ(diff->unchanged, 1);  // jit_train_step
  ASSERT_EQ(diff->modules.size(), 3u);
  std::set<std::tuple<std::string, int64_t, int64_t>> added, removed, reshaped;  // (module, peak_a, peak_b)
  for (const auto& m : diff->modules) {
    auto row = std::make_tuple(m.module_name, m.peak_a, m.peak_b);
    if (m.change == ModuleDiff::Change::kAdded) added.insert(row);
    if (m.change == ModuleDiff::Change::kRemoved) removed.insert(row);
    if (m.change == ModuleDiff::Change::kChanged) {
      reshaped.insert(row);
      EXPECT_EQ(m.matched_by, "name");
      EXPECT_NE(m.entry_signature_a, m.entry_signature);
    } else {
      EXPECT_EQ(m.matched_by, "");
    }
  }
  EXPECT_EQ(added, (std::set<std::tuple<std::string, int64_t, int64_t>>{{"jit_flash_kernel", -1, 18612288}}));
  EXPECT_EQ(removed, (std::set<std::tuple<std::string, int64_t, int64_t>>{{"SyncTensorsGraph.105", 931536164, -1}}));
  EXPECT_EQ(reshaped, (std::set<std::tuple<std::string, int64_t, int64_t>>{{kSplash, 18612288, 184680476}}));
  // A module filter; a pattern that matches nothing on either side is an empty diff.
  query.module = "jit_flash_*";
  diff = store::DiffRuns(*db_, query);
  ASSERT_TRUE(diff.ok());
  EXPECT_EQ(diff->added, 1);
  EXPECT_EQ(diff->modules.size(), 1u);
  query.module = "jit_none_*";
  diff = store::DiffRuns(*db_, query);
  ASSERT_TRUE(diff.ok());
  EXPECT_TRUE(diff->modules.empty());
}

// The id of module `name` in `run` (the only one of that name there).
int64_t ModuleIdOf(store::Database& db, const std::string& run, const std::string& name) {
  SQLite::Statement q(SqliteOf(db), "SELECT module_id FROM module_memory WHERE run_name = ? AND module_name = ?");
  q.bind(1, run);
  q.bind(2, name);
  EXPECT_TRUE(q.executeStep()) << run << " " << name;
  return q.getColumn(0).getInt64();
}

// The attribution engine on two different programs: seed 000 (11 values) against seed 002 (24 values). Four
// pair by name (Arg_0.1, Arg_1.2, Arg_2.3 at 4194304 both, and constant.4, 512 -> 33554432); 20 of seed 002's
// values are new and 7 of seed 000's gone. Largest absolute change first.
TEST_F(SeedRunQueries, AttributionOfSeed000AgainstSeed002) {
  const int64_t a = ModuleIdOf(*db_, "nightly-1", kSplash);
  const int64_t b = ModuleIdOf(*db_, "nightly-2", kSplash);
  auto attribution = store::AttributeChange(*db_, a, b, store::AttributionScope::kValues, -1);
  ASSERT_TRUE(attribution.ok()) << attribution.status().ToString();
  const auto& changes = attribution->changes;
  EXPECT_EQ(attribution->change_count, 28);
  ASSERT_EQ(changes.size(), 28u);
  int grew = 0, appeared = 0, disappeared = 0;
  for (const auto& c : changes) {
    grew += c.kind == BufferChange::Kind::kGrew;
    appeared += c.kind == BufferChange::Kind::kAppeared;
    disappeared += c.kind == BufferChange::Kind::kDisappeared;
  }
  EXPECT_EQ(grew, 1);
  EXPECT_EQ(appeared, 20);
  EXPECT_EQ(disappeared, 7);
  // fusion.5{1} (134217728 new), copy-start.1{0} (33554432 new), then constant.4 (grew by 33553920).
  EXPECT_EQ(changes[0].kind, BufferChange::Kind::kAppeared);
  EXPECT_EQ(changes[0].instruction, "fusion.5");
  EXPECT_EQ(changes[0].shape_index, "{1}");
  EXPECT_EQ(changes[0].current_bytes, 134217728);
  EXPECT_EQ(changes[0].baseline_instruction, "");
  EXPECT_EQ(changes[1].instruction, "copy-start.1");
  EXPECT_EQ(changes[1].current_bytes, 33554432);
  const BufferChange& constant = changes[2];
  EXPECT_EQ(constant.kind, BufferChange::Kind::kGrew);
  EXPECT_EQ(constant.baseline_instruction, "constant.4");
  EXPECT_EQ(constant.instruction, "constant.4");
  EXPECT_EQ(constant.matched_by, "name");
  EXPECT_EQ(constant.baseline_bytes, 512);
  EXPECT_EQ(constant.current_bytes, 33554432);
  EXPECT_EQ(constant.delta(), 33553920);
  EXPECT_EQ(constant.baseline_shape, "s8[1,4,4]{2,1,0:T(4,128)(4,1)}");
  EXPECT_EQ(constant.current_shape, "pred[8,2048,2048]{1,2,0:T(32,128)(4,1)}");
  // Shrinks are listed among the growths by size: splash_mha_fwd_e9701070.1{3} (4194304) disappeared.
  auto gone = std::find_if(changes.begin(), changes.end(), [](const BufferChange& c) {
    return c.baseline_instruction == "splash_mha_fwd_e9701070.1" && c.shape_index == "{3}";
  });
  ASSERT_NE(gone, changes.end());
  EXPECT_EQ(gone->kind, BufferChange::Kind::kDisappeared);
  EXPECT_EQ(gone->baseline_bytes, 4194304);
  EXPECT_EQ(gone->current_bytes, -1);
  EXPECT_EQ(gone->delta(), -4194304);
  EXPECT_NE(gone->source.find("splash_attention_kernel.py:1100"), std::string::npos);
  for (size_t i = 1; i < changes.size(); ++i) {
    EXPECT_GE(std::abs(changes[i - 1].delta()), std::abs(changes[i].delta())) << i;
  }
  // by_source sums every change: its deltas add up to the sum of all deltas.
  int64_t total = 0, by_source = 0, buffers = 0;
  for (const auto& c : changes) total += c.delta();
  for (const auto& l : attribution->by_source) {
    by_source += l.delta;
    buffers += l.buffers;
  }
  EXPECT_EQ(by_source, total);
  EXPECT_EQ(buffers, 28);

  // max_changes keeps the largest; the count stays.
  attribution = store::AttributeChange(*db_, a, b, store::AttributionScope::kValues, 2);
  ASSERT_TRUE(attribution.ok());
  EXPECT_EQ(attribution->changes.size(), 2u);
  EXPECT_EQ(attribution->change_count, 28);
}

TEST_F(SeedRunQueries, DiffNamesAMissingRun) {
  store::DiffQuery query;
  query.run_a = "nightly-1";
  query.run_b = "nightly-404";
  auto diff = store::DiffRuns(*db_, query);
  ASSERT_FALSE(diff.ok());
  EXPECT_EQ(diff.status().code(), Status::Code::kNotFound);
  EXPECT_NE(diff.status().message().find("nightly-404"), std::string::npos);
  query.run_a = "nightly-0";
  query.run_b = "nightly-1";
  diff = store::DiffRuns(*db_, query);
  EXPECT_EQ(diff.status().code(), Status::Code::kNotFound);
  EXPECT_NE(diff.status().message().find("nightly-0"), std::string::npos);
}

// Seed 000 against a copy in which iota.1 is renamed iota.7 and doubled (Seed000WithIotaRenamedAndDoubled):
// the renamed buffer pairs by op_name and source line, not as gone + new.
TEST(DiffRenamedInstructions, PairByOpNameAndSource) {
  TempDir tmp;
  std::string db_path = tmp / "x.db";
  WriteFile(tmp / (std::string("a/") + testing::kSeed000FileName), ReadFile(SeedFile("000")));
  WriteFile(tmp / (std::string("b/") + testing::kSeed000FileName), Seed000WithIotaRenamedAndDoubled());
  Ingest(db_path, tmp / "a", RunOptions("a", kNov1Us, {}));
  Ingest(db_path, tmp / "b", RunOptions("b", kNov1Us + kDayUs, {}));
  auto db = OpenOrDie(db_path);
  ASSERT_NE(db, nullptr);
  store::DiffQuery query;
  query.run_a = "a";
  query.run_b = "b";
  auto diff = store::DiffRuns(*db, query);
  ASSERT_TRUE(diff.ok()) << diff.status().ToString();
  EXPECT_EQ(diff->changed, 1);
  ASSERT_EQ(diff->modules.size(), 1u);
  const ModuleDiff& m = diff->modules[0];
  EXPECT_EQ(m.peak_a, 18612288);
  EXPECT_EQ(m.peak_b, 19660864);
  ASSERT_EQ(m.buffers.size(), 1u);
  EXPECT_EQ(m.matched_by, "identity");
  const BufferChange& b = m.buffers[0];
  EXPECT_EQ(b.kind, BufferChange::Kind::kGrew);
  EXPECT_EQ(b.matched_by, "origin");
  EXPECT_EQ(b.baseline_instruction, "iota.1");
  EXPECT_EQ(b.instruction, "iota.7");
  EXPECT_EQ(b.shape_index, "{}");
  EXPECT_EQ(b.baseline_bytes, 1048576);
  EXPECT_EQ(b.current_bytes, 2097152);
  EXPECT_EQ(b.op_name,
            "jit(splash_attention_kernel)/jit(main)/splash_attention_kernel/splash_kernel_b512_h8_s2048/"
            "jit(_splash_attention)/broadcast_in_dim");
  EXPECT_NE(b.source.find("splash_attention_kernel.py:1045"), std::string::npos);

  // Two writers sharing a PostgreSQL store may each intern the same op_name (names has no UNIQUE text): run
  // b's iota.7 under a second row of the same text still pairs by origin.
  db.reset();
  {
    SQLite::Database raw(db_path, SQLite::OPEN_READWRITE);
    raw.exec("INSERT INTO names(hash, text) SELECT hash, text FROM names WHERE name_id = "
             "(SELECT op_name_id FROM instructions WHERE name = 'iota.7')");
    ASSERT_EQ(raw.exec("UPDATE instructions SET op_name_id = last_insert_rowid() WHERE name = 'iota.7'"), 1);
  }
  db = OpenOrDie(db_path);
  ASSERT_NE(db, nullptr);
  diff = store::DiffRuns(*db, query);
  ASSERT_TRUE(diff.ok()) << diff.status().ToString();
  ASSERT_EQ(diff->modules.size(), 1u);
  ASSERT_EQ(diff->modules[0].buffers.size(), 1u);
  EXPECT_EQ(diff->modules[0].buffers[0].matched_by, "origin");
  EXPECT_EQ(diff->modules[0].buffers[0].instruction, "iota.7");
}

}  // namespace
}  // namespace xladb::testing
