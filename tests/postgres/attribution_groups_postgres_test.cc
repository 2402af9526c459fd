// Buffer attribution in groups (store/compare/buffer_attribution.h, AttributeChanges): however the pairs are
// grouped (all in one group, each alone) the answers are those of one pair at a time (AttributeChange), and
// they are the same on SQLite and PostgreSQL, where a group's rows are read by statements over lists of ids
// and each buffer's origin is joined in (SQLite reads an id at a time and origins where needed). The numbers
// that must hold come from the dumps: seed 000 against seed 002 (tests/store/queries_test.cc says why).
#include <gtest/gtest.h>

#include <cstdint>
#include <string>
#include <vector>

#include "store/backend/database.h"
#include "store/compare/buffer_attribution.h"
#include "tests/postgres/both_backends.h"

namespace xladb {
namespace {

using store::AttributionPair;
using store::AttributionScope;

// Everything an attribution says, one line a fact, to compare answers whole.
std::string Spelled(const store::Attribution& a) {
  std::string out = std::string(store::AttributionScopeName(a.scope)) + " count " + std::to_string(a.change_count) +
                    " peak " + std::to_string(a.baseline_peak_time) + "/" + std::to_string(a.current_peak_time) +
                    " length " + std::to_string(a.baseline_schedule_length) + "/" +
                    std::to_string(a.current_schedule_length) + "\n";
  for (const store::BufferChange& c : a.changes) {
    out += "  " + std::to_string(static_cast<int>(c.kind)) + " " + c.baseline_instruction + " -> " + c.instruction +
           " " + c.shape_index + " by " + c.matched_by + " " + std::to_string(c.baseline_bytes) + " -> " +
           std::to_string(c.current_bytes) + " [" + c.baseline_shape + "] -> [" + c.current_shape + "] op " +
           c.op_name + " at " + c.source + "\n";
  }
  for (const store::SourceLineChange& s : a.by_source) {
    out += "  line " + s.source + " " + std::to_string(s.delta) + " in " + std::to_string(s.buffers) + "\n";
  }
  return out;
}

std::vector<std::string> Spelled(const std::vector<store::Attribution>& all) {
  std::vector<std::string> out;
  for (const store::Attribution& a : all) out.push_back(Spelled(a));
  return out;
}

class AttributionGroups : public testing::CopiedStores {
 protected:
  AttributionGroups() : CopiedStores("attribution_groups") {}
  ::testing::AssertionResult Fill(store::Database& sqlite) override {
    testing::MakeSeedRun(tmp_ / "seeds");
    testing::WriteFile(tmp_ / ("renamed/" + std::string(testing::kSeed000FileName)), testing::Seed000WithIotaRenamedAndDoubled());
    const std::string fixtures = XLADB_FIXTURE_DIR;
    return testing::IngestRuns(sqlite, {{"seeds", tmp_ / "seeds", 1},
                                        {"renamed", tmp_ / "renamed", 2},
                                        {"gate_base", fixtures + "/gate/base", 3},
                                        {"gate_head", fixtures + "/gate/head", 4}});
  }

  // The module of `run` named `name` (its only one with a buffer assignment).
  int64_t ModuleId(const std::string& run, const std::string& name) {
    auto q = sqlite_->connection().Prepare(
        "SELECT module_id FROM module_memory WHERE run_name = ? AND module_name = ?");
    q->Bind(1, run);
    q->Bind(2, name);
    EXPECT_TRUE(q->Step()) << run << " " << name;
    return q->Int(0);
  }

};

TEST_F(AttributionGroups, AnyGroupingAnswersAsOnePairAtATimeOnBothBackends) {
  const int64_t seed000 = ModuleId("seeds", "jit_splash_attention_kernel");
  const int64_t seed002 = ModuleId("seeds", "jit_train_step");
  const int64_t renamed = ModuleId("renamed", "jit_splash_attention_kernel");
  // A module with HLO text and no buffer assignment: no values, no schedule.
  auto q = sqlite_->connection().Prepare(
      "SELECT module_id FROM modules WHERE module_id NOT IN (SELECT module_id FROM module_memory) LIMIT 1");
  ASSERT_TRUE(q->Step());
  const int64_t no_values = q->Int(0);
  // Every module with a buffer assignment against the next, in both scopes; a module against itself; a module
  // in several pairs of one group (each pair marks its own copy of the buffers); seed 000 against seed 002
  // with every change and with two listed; seed 000 against its renamed copy (the origin pass); seed 000
  // against a module without values.
  std::vector<int64_t> modules;
  q = sqlite_->connection().Prepare("SELECT module_id FROM module_memory ORDER BY module_id");
  while (q->Step()) modules.push_back(q->Int(0));
  ASSERT_GE(modules.size(), 6u);
  std::vector<AttributionPair> pairs;
  for (size_t i = 0; i + 1 < modules.size(); ++i) {
    pairs.push_back({modules[i], modules[i + 1], AttributionScope::kValues, 5});
    pairs.push_back({modules[i + 1], modules[i], AttributionScope::kPeakBuffers, -1});
  }
  pairs.push_back({seed000, no_values, AttributionScope::kValues, -1});
  pairs.push_back({seed000, renamed, AttributionScope::kPeakBuffers, -1});
  pairs.push_back({seed002, seed002, AttributionScope::kValues, -1});
  pairs.push_back({seed000, seed002, AttributionScope::kValues, -1});
  pairs.push_back({seed000, seed002, AttributionScope::kValues, 2});

  std::vector<std::string> answers[2];  // SQLite's, PostgreSQL's
  int backend = 0;
  for (store::Database* db : {sqlite_.get(), postgres_.get()}) {
    SCOPED_TRACE(backend == 0 ? "sqlite" : "postgresql");
    auto together = store::AttributeChanges(*db, pairs);
    ASSERT_TRUE(together.ok()) << together.status().ToString();
    auto alone = store::AttributeChanges(*db, pairs, /*values_per_group=*/1);
    ASSERT_TRUE(alone.ok()) << alone.status().ToString();
    std::vector<std::string> one_at_a_time;
    for (const AttributionPair& p : pairs) {
      auto a = store::AttributeChange(*db, p.baseline_module_id, p.current_module_id, p.scope, p.max_changes);
      ASSERT_TRUE(a.ok()) << a.status().ToString();
      one_at_a_time.push_back(Spelled(*a));
    }
    ASSERT_EQ(together->size(), pairs.size());
    EXPECT_EQ(Spelled(*together), one_at_a_time);
    EXPECT_EQ(Spelled(*alone), one_at_a_time);

    // From the dumps: seed 000 (11 values) against seed 002 (24): 1 grew, 20 appeared, 7 disappeared, the
    // largest fusion.5{1} (134217728 bytes, new); a module against itself has no change.
    const store::Attribution& all = (*together)[pairs.size() - 2];
    EXPECT_EQ(all.change_count, 28);
    ASSERT_EQ(all.changes.size(), 28u);
    int grew = 0, appeared = 0, disappeared = 0;
    for (const store::BufferChange& c : all.changes) {
      grew += c.kind == store::BufferChange::Kind::kGrew;
      appeared += c.kind == store::BufferChange::Kind::kAppeared;
      disappeared += c.kind == store::BufferChange::Kind::kDisappeared;
    }
    EXPECT_EQ(grew, 1);
    EXPECT_EQ(appeared, 20);
    EXPECT_EQ(disappeared, 7);
    EXPECT_EQ(all.changes[0].instruction, "fusion.5");
    EXPECT_EQ(all.changes[0].current_bytes, 134217728);
    const store::Attribution& two = (*together)[pairs.size() - 1];
    EXPECT_EQ(two.change_count, 28);
    EXPECT_EQ(two.changes.size(), 2u);
    EXPECT_EQ((*together)[pairs.size() - 3].change_count, 0);
    // The renamed iota.7 (2097152 bytes) pairs with iota.1 (1048576) by op_name and source line.
    const store::Attribution& by_origin = (*together)[pairs.size() - 4];
    ASSERT_EQ(by_origin.changes.size(), 1u);
    EXPECT_EQ(by_origin.changes[0].matched_by, "origin");
    EXPECT_EQ(by_origin.changes[0].baseline_instruction, "iota.1");
    EXPECT_EQ(by_origin.changes[0].instruction, "iota.7");
    EXPECT_EQ(by_origin.changes[0].delta(), 1048576);
    EXPECT_NE(by_origin.changes[0].source.find("splash_attention_kernel.py:1045"), std::string::npos);
    // Against a module without values every one of seed 000's 11 values disappeared; its times are unknown.
    const store::Attribution& gone = (*together)[pairs.size() - 5];
    EXPECT_EQ(gone.change_count, 11);
    EXPECT_EQ(gone.current_schedule_length, -1);
    for (const store::BufferChange& c : gone.changes) EXPECT_EQ(c.kind, store::BufferChange::Kind::kDisappeared);
    // No pairs, no statements needed, no answers.
    auto none = store::AttributeChanges(*db, {});
    ASSERT_TRUE(none.ok()) << none.status().ToString();
    EXPECT_TRUE(none->empty());
    answers[backend++] = Spelled(*together);
  }
  EXPECT_EQ(answers[0], answers[1]);
}

}  // namespace
}  // namespace xladb
