// PeakMemoryTrend pairs each run's only instance of a module identity with the previous run's only instance
// without asking the module_matches view (store/module_trend.cc). That rests on the view's rule: an identity
// key unique in both runs pairs by 'identity'. This holds the shortcut to the view, on the seed runs and, when
// present, the two corpus runs (986 modules, retraces among them).
#include <gtest/gtest.h>

#include <SQLiteCpp/SQLiteCpp.h>

#include <string>
#include <vector>

#include "store/database.h"
#include "store/module_match.h"
#include "store/module_trend.h"
#include "tests/store/test_dirs.h"
#include "tests/store/test_ingest.h"

namespace xladb {
namespace {

// Every identity key with exactly one module (with memory) in each of the two runs, and those modules.
struct Lone {
  std::string key;
  int64_t a = 0, b = 0;
};
std::vector<Lone> LoneInBoth(store::Database& db, int64_t run_a, int64_t run_b) {
  std::vector<Lone> lone;
  SQLite::Statement q(db.sql(), R"sql(
    SELECT a.identity_key, a.m, b.m FROM
      (SELECT identity_key, MIN(module_id) AS m FROM module_memory WHERE run_id = ?1
       GROUP BY identity_key HAVING COUNT(*) = 1) a
    JOIN (SELECT identity_key, MIN(module_id) AS m FROM module_memory WHERE run_id = ?2
          GROUP BY identity_key HAVING COUNT(*) = 1) b USING (identity_key)
    ORDER BY 1)sql");
  q.bind(1, run_a);
  q.bind(2, run_b);
  while (q.executeStep()) lone.push_back({q.getColumn(0).getString(), q.getColumn(1).getInt64(), q.getColumn(2).getInt64()});
  return lone;
}

void ExpectTheViewPairsLoneInstancesByIdentity(store::Database& db, int64_t run_a, int64_t run_b, size_t at_least) {
  const std::vector<Lone> lone = LoneInBoth(db, run_a, run_b);
  ASSERT_GE(lone.size(), at_least);
  for (const Lone& l : lone) {
    auto pairs = store::MatchModules(db, run_a, run_b, l.key);
    ASSERT_TRUE(pairs.ok()) << pairs.status().ToString();
    ASSERT_EQ(pairs->size(), 1u) << l.key;
    EXPECT_EQ((*pairs)[0].baseline_module_id, l.a) << l.key;
    EXPECT_EQ((*pairs)[0].current_module_id, l.b) << l.key;
    EXPECT_EQ((*pairs)[0].matched_by, "identity") << l.key;
  }
}

TEST(TrendShortcut, TheViewPairsLoneInstancesByIdentity) {
  testing::TempDir tmp;
  auto db = store::Database::Open(tmp / "x.db");
  ASSERT_TRUE(db.ok()) << db.status().ToString();
  for (const char* run : {"nightly-1", "nightly-2"}) {
    testing::MakeSeedRun(tmp / run);
    ASSERT_TRUE(testing::IngestRun(*db.value(), tmp / run, run).ok());
  }
  ExpectTheViewPairsLoneInstancesByIdentity(*db.value(), 1, 2, 3);
  // And the trend built on it: every point after the first run has its change against the same module.
  store::TrendQuery query;
  query.module = "jit_splash_attention_kernel";
  query.metric = "total_bytes";
  auto trend = store::PeakMemoryTrend(*db.value(), query);
  ASSERT_TRUE(trend.ok()) << trend.status().ToString();
  ASSERT_EQ(trend->size(), 2u);
  EXPECT_FALSE((*trend)[0].has_change);
  EXPECT_TRUE((*trend)[1].has_change);
  EXPECT_EQ((*trend)[1].matched_by, "identity");
  EXPECT_EQ((*trend)[1].change, 0);
}

TEST(TrendShortcut, TheViewPairsLoneInstancesByIdentityInTheCorpusRuns) {
  if (!testing::HaveCorpus()) GTEST_SKIP() << "the corpus is absent (" << testing::CorpusDir() << ")";
  testing::TempDir tmp;
  auto db = store::Database::Open(tmp / "x.db");
  ASSERT_TRUE(db.ok()) << db.status().ToString();
  for (const char* run : {"21_lorrax_scan_C", "22_lorrax_scan_cached_C"}) {
    ASSERT_TRUE(testing::IngestRun(*db.value(), testing::CorpusDir() + "/runs/" + run, run).ok());
  }
  ExpectTheViewPairsLoneInstancesByIdentity(*db.value(), 1, 2, 50);
  ExpectTheViewPairsLoneInstancesByIdentity(*db.value(), 2, 1, 50);
}

}  // namespace
}  // namespace xladb
