// PeakMemoryTrend (store/compare/module_trend.cc) follows one module identity across runs and gives each point its
// change against the instance of the previous run it pairs with. Where both runs hold one instance of the
// identity it pairs them itself, by 'identity', without asking the module_matches view; where a run holds more
// (the same shapes compiled again) it asks MatchModules, whose rule (store/compare/module_match.h) is the same
// program fingerprint first ('fingerprint'), then the rest in xla_module_id order ('order').
//
// Every expected value here is a constant read by hand off the dump files (their `Total bytes used:` lines) and
// every pairing is worked out by hand from that rule, the arithmetic in the comments: nothing is derived again
// in SQL. On the fixtures of tests/fixtures/gate, the seed runs and, when present, the two corpus runs.
#include <gtest/gtest.h>

#include <SQLiteCpp/SQLiteCpp.h>

#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "store/sqlite/sqlite_connection.h"
#include "store/backend/database.h"
#include "store/compare/module_match.h"
#include "store/compare/module_trend.h"
#include "tests/store/test_dirs.h"
#include "tests/store/test_ingest.h"

namespace xladb {
namespace {

// One expected point of a trend: its run and module_<ID>, its value, and its change against the instance of the
// previous run it pairs with (has_change false: no such instance).
struct Expected {
  const char* run;
  int64_t xla_module_id;
  int64_t value;
  bool has_change;
  int64_t change;
  const char* matched_by;
};

void ExpectPoints(const std::vector<store::TrendPoint>& got, const std::vector<Expected>& want) {
  ASSERT_EQ(got.size(), want.size());
  for (size_t i = 0; i < want.size(); ++i) {
    SCOPED_TRACE("point " + std::to_string(i) + ": " + want[i].run + " module_" + std::to_string(want[i].xla_module_id));
    EXPECT_EQ(got[i].run_name, want[i].run);
    EXPECT_EQ(got[i].xla_module_id, want[i].xla_module_id);
    EXPECT_EQ(got[i].value, want[i].value);
    EXPECT_EQ(got[i].has_change, want[i].has_change);
    if (want[i].has_change) {
      EXPECT_EQ(got[i].change, want[i].change);
    }
    EXPECT_EQ(got[i].matched_by, want[i].matched_by);
  }
}

// A run of `files` (fixture path, name in the run's folder), ingested at `time_us`; its run id.
int64_t IngestFiles(store::Database& db, const testing::TempDir& tmp, const std::string& run, int64_t time_us,
                    const std::vector<std::pair<std::string, std::string>>& files) {
  for (const auto& [from, as] : files) testing::WriteFile(tmp / (run + "/" + as), testing::ReadFile(from));
  ingest::IngestOptions options;
  options.time_us = time_us;
  auto summary = testing::IngestRun(db, tmp / run, run, options);
  EXPECT_TRUE(summary.ok()) << summary.status().ToString();
  return summary.ok() ? summary->run_id : 0;
}

// A trend of `module`'s total_bytes.
store::TrendQuery TotalBytesQuery(const std::string& module) {
  store::TrendQuery query;
  query.module = module;
  query.metric = "total_bytes";
  return query;
}

StatusOr<std::vector<store::TrendPoint>> TotalBytesTrend(store::Database& db, const std::string& module) {
  return store::PeakMemoryTrend(db, TotalBytesQuery(module));
}

// A fresh store, and runs made of tests/fixtures/gate's two buffer assignments of jit_step (base_ and head_),
// each ingested under a name of the run (as1_: module_0001, as2_: module_0002).
class GateFileTrend : public ::testing::Test {
 protected:
  void SetUp() override {
    auto db = store::Database::Open(tmp_ / "x.db");
    ASSERT_TRUE(db.ok()) << db.status().ToString();
    db_ = std::move(db.value());
  }
  void Ingest(const std::string& run, int64_t time_us, const std::vector<std::pair<std::string, std::string>>& files) {
    IngestFiles(*db_, tmp_, run, time_us, files);
  }

  testing::TempDir tmp_;
  std::unique_ptr<store::Database> db_;
  const std::string gate_ = std::string(XLADB_FIXTURE_DIR) + "/gate/";
  const std::string base_ = gate_ + "base/module_0001.jit_step.after_optimizations-buffer-assignment.txt";
  const std::string head_ = gate_ + "head/module_0001.jit_step.after_optimizations-buffer-assignment.txt";
  const std::string as1_ = "module_0001.jit_step.after_optimizations-buffer-assignment.txt";
  const std::string as2_ = "module_0002.jit_step.after_optimizations-buffer-assignment.txt";
};

// tests/fixtures/gate's two buffer assignments of jit_step, both `(f32[256]) -> f32[256]` (one identity) but
// different programs (temp mul.2 f32[1024] against f32[17408]: different fingerprints):
//   base: Total bytes used  6144 = 1024 (p.0) + 1024 (add.3) +  4096 (mul.2)
//   head: Total bytes used 71680 = 1024 (p.0) + 1024 (add.3) + 69632 (mul.2)
// Four runs: t1 base; t2 head; t3 head twice (module_0001 and module_0002: the same program compiled again); t4
// base. Each branch of the trend's pairing comes up once.
TEST_F(GateFileTrend, PairsLoneInstancesItselfAndRetracesThroughTheView) {
  Ingest("t1", 1000000, {{base_, as1_}});
  Ingest("t2", 2000000, {{head_, as1_}});
  Ingest("t3", 3000000, {{head_, as1_}, {head_, as2_}});
  Ingest("t4", 4000000, {{base_, as1_}});

  auto trend = TotalBytesTrend(*db_, "jit_step");
  ASSERT_TRUE(trend.ok()) << trend.status().ToString();
  ExpectPoints(*trend, {
      // The first point has nothing before it.
      {"t1", 1, 6144, false, 0, ""},
      // One instance in t1, one in t2: the trend pairs them itself. 71680 - 6144 = +65536.
      {"t2", 1, 71680, true, 65536, "identity"},
      // t3 holds two, so the view pairs: t2's only instance (head's program) with t3's first instance of the same
      // fingerprint, module_0001. 71680 - 71680 = 0.
      {"t3", 1, 71680, true, 0, "fingerprint"},
      // t3's second instance of that program finds nothing left in t2: no change.
      {"t3", 2, 71680, false, 0, ""},
      // t4 (base's program) against t3's two (head's): no fingerprint in common, so the first of each in
      // xla_module_id order, t3's module_0001. 6144 - 71680 = -65536.
      {"t4", 1, 6144, true, -65536, "order"},
  });
  // One series, of one identity; the programs as the files say: t1 and t4 the base, t2 and t3 the head.
  for (const store::TrendPoint& p : *trend) {
    EXPECT_EQ(p.entry_signature, "(f32[256]) -> f32[256]");
    EXPECT_EQ(p.identity_key, (*trend)[0].identity_key);
  }
  ASSERT_EQ(trend->size(), 5u);
  EXPECT_EQ((*trend)[4].fingerprint, (*trend)[0].fingerprint);
  EXPECT_EQ((*trend)[2].fingerprint, (*trend)[1].fingerprint);
  EXPECT_EQ((*trend)[3].fingerprint, (*trend)[1].fingerprint);
  EXPECT_NE((*trend)[1].fingerprint, (*trend)[0].fingerprint);

  // Only module_0001 of each run: t3's module_0002 is no point, but it is still t3's second instance, so t3 is
  // still paired through the view (by fingerprint from t2, by order into t4), as in the whole trend above.
  store::TrendQuery first_only = TotalBytesQuery("jit_step");
  first_only.xla_module_id = 1;
  auto firsts = store::PeakMemoryTrend(*db_, first_only);
  ASSERT_TRUE(firsts.ok()) << firsts.status().ToString();
  ExpectPoints(*firsts, {
      {"t1", 1, 6144, false, 0, ""},
      {"t2", 1, 71680, true, 65536, "identity"},
      {"t3", 1, 71680, true, 0, "fingerprint"},
      {"t4", 1, 6144, true, -65536, "order"},
  });
}

// A fingerprint filter is applied to single instances after they are counted: t2 compiles base's program as
// module_0001 and head's as module_0002, so a trend of base's program alone still pairs t2 through the view
// (by fingerprint: 6144 - 6144 = 0), not as if t2 held one instance.
TEST_F(GateFileTrend, AFingerprintFilterDoesNotHideASecondInstance) {
  Ingest("t1", 1000000, {{base_, as1_}});
  Ingest("t2", 2000000, {{base_, as1_}, {head_, as2_}});
  auto all = TotalBytesTrend(*db_, "jit_step");
  ASSERT_TRUE(all.ok()) << all.status().ToString();
  ASSERT_EQ(all->size(), 3u);
  ASSERT_NE((*all)[1].fingerprint, (*all)[2].fingerprint);  // t2's two programs

  store::TrendQuery base_only = TotalBytesQuery("jit_step");
  base_only.fingerprint = (*all)[0].fingerprint;
  auto trend = store::PeakMemoryTrend(*db_, base_only);
  ASSERT_TRUE(trend.ok()) << trend.status().ToString();
  ExpectPoints(*trend, {
      {"t1", 1, 6144, false, 0, ""},
      {"t2", 1, 6144, true, 0, "fingerprint"},
  });
}

// The seed folder (testing::MakeSeedRun) as two runs: its three buffer assignments are each the only instance of
// their identity in each run, so each pairs with itself by 'identity' and changes by 0, and the view pairs them
// the same way. The values are the seeds' own `Total bytes used:` lines.
TEST(ModuleTrend, SeedRunsPairEachLoneModuleByIdentity) {
  testing::TempDir tmp;
  auto db = store::Database::Open(tmp / "x.db");
  ASSERT_TRUE(db.ok()) << db.status().ToString();
  int64_t runs[2] = {0, 0};
  for (int i = 0; i < 2; ++i) {
    const std::string run = "nightly-" + std::to_string(i + 1);
    testing::MakeSeedRun(tmp / run);
    ingest::IngestOptions options;
    options.time_us = (i + 1) * 1000000;
    auto summary = testing::IngestRun(*db.value(), tmp / run, run, options);
    ASSERT_TRUE(summary.ok()) << summary.status().ToString();
    runs[i] = summary->run_id;
  }
  struct Seed {
    const char* module;
    int64_t xla_module_id;
    int64_t total_bytes;
  };
  for (const Seed& seed : {Seed{"jit_splash_attention_kernel", 1, 18629632},  // seed 000: 17.77MiB
                           Seed{"jit_train_step", 2, 230870056},              // seed 002: 220.17MiB
                           Seed{"SyncTensorsGraph.105", 3, 932847568}}) {     // seed 004: 889.63MiB
    SCOPED_TRACE(seed.module);
    auto trend = TotalBytesTrend(*db.value(), seed.module);
    ASSERT_TRUE(trend.ok()) << trend.status().ToString();
    ExpectPoints(*trend, {{"nightly-1", seed.xla_module_id, seed.total_bytes, false, 0, ""},
                          {"nightly-2", seed.xla_module_id, seed.total_bytes, true, 0, "identity"}});
    ASSERT_EQ(trend->size(), 2u);
    auto pairs = store::MatchModules(*db.value(), runs[0], runs[1], (*trend)[0].identity_key);
    ASSERT_TRUE(pairs.ok()) << pairs.status().ToString();
    ASSERT_EQ(pairs->size(), 1u);
    EXPECT_EQ((*pairs)[0].matched_by, "identity");
    EXPECT_NE((*pairs)[0].baseline_module_id, 0);
    EXPECT_NE((*pairs)[0].current_module_id, 0);
  }
}

// The two corpus runs (the second the same program with its compilation cache warm), read by hand from their
// xla_dump folders:
//   module_0113.jit__batched_chol: once in each run, Total bytes used 39323455 in both: 'identity', change 0.
//   module_0827 and module_0847.jit_eigh: twice in each run, both `parameter 0, shape |c128[9,80,80]|` with the
//   same ENTRY sharding ({replicated}), so one identity compiled twice; Total bytes used 2770740 each. The view
//   pairs them by fingerprint, first with first: 0827 with 0827, 0847 with 0847, change 0.
TEST(ModuleTrend, CorpusRunsPairALoneModuleByIdentityAndARetraceByFingerprint) {
  if (!testing::HaveCorpus()) GTEST_SKIP() << "the corpus is absent (" << testing::CorpusDir() << ")";
  testing::TempDir tmp;
  auto db = store::Database::Open(tmp / "x.db");
  ASSERT_TRUE(db.ok()) << db.status().ToString();
  int64_t runs[2] = {0, 0};
  const char* names[2] = {"21_lorrax_scan_C", "22_lorrax_scan_cached_C"};
  for (int i = 0; i < 2; ++i) {
    ingest::IngestOptions options;
    options.time_us = (i + 1) * 1000000;
    auto summary = testing::IngestRun(*db.value(), testing::CorpusDir() + "/runs/" + names[i], names[i], options);
    ASSERT_TRUE(summary.ok()) << summary.status().ToString();
    runs[i] = summary->run_id;
  }
  auto chol = TotalBytesTrend(*db.value(), "jit__batched_chol");
  ASSERT_TRUE(chol.ok()) << chol.status().ToString();
  ExpectPoints(*chol, {{names[0], 113, 39323455, false, 0, ""}, {names[1], 113, 39323455, true, 0, "identity"}});

  auto eigh = TotalBytesTrend(*db.value(), "jit_eigh");
  ASSERT_TRUE(eigh.ok()) << eigh.status().ToString();
  ExpectPoints(*eigh, {{names[0], 827, 2770740, false, 0, ""},
                       {names[0], 847, 2770740, false, 0, ""},
                       {names[1], 827, 2770740, true, 0, "fingerprint"},
                       {names[1], 847, 2770740, true, 0, "fingerprint"}});
  ASSERT_EQ(eigh->size(), 4u);
  EXPECT_EQ((*eigh)[3].identity_key, (*eigh)[0].identity_key);
  auto pairs = store::MatchModules(*db.value(), runs[0], runs[1], (*eigh)[0].identity_key);
  ASSERT_TRUE(pairs.ok()) << pairs.status().ToString();
  ASSERT_EQ(pairs->size(), 2u);
  for (const store::ModulePair& p : *pairs) {
    EXPECT_EQ(p.matched_by, "fingerprint");
    EXPECT_NE(p.baseline_module_id, 0);
    EXPECT_NE(p.current_module_id, 0);
  }
}

}  // namespace
}  // namespace xladb
