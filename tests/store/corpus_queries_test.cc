// The cross-run questions over the two corpus runs (21_lorrax_scan_C, 22_lorrax_scan_cached_C), skipped with a
// message where the shared corpus is absent. Expected numbers are counted from the dump files.
#include "tests/store/run_queries_fixture.h"

namespace xladb::testing {
namespace {

// --- The two corpus runs -------------------------------------------------------------------------------

class CorpusRunQueries : public ::testing::Test {
 protected:
  static constexpr char kRunA[] = "21_lorrax_scan_C";
  static constexpr char kRunB[] = "22_lorrax_scan_cached_C";

  static void SetUpTestSuite() {
    if (!std::filesystem::is_directory(testing::CorpusDir() + "/runs/" + kRunA) ||
        !std::filesystem::is_directory(testing::CorpusDir() + "/runs/" + kRunB)) {
      return;
    }
    tmp_ = new TempDir();
    db_path_ = *tmp_ / "corpus.db";
    // Times given explicitly: the corpus files' mtimes depend on how the corpus was copied.
    Ingest(db_path_, testing::CorpusDir() + "/runs/" + kRunA, RunOptions(kRunA, kNov1Us, {}));
    Ingest(db_path_, testing::CorpusDir() + "/runs/" + kRunB, RunOptions(kRunB, kNov1Us + kDayUs, {}));
  }
  static void TearDownTestSuite() {
    delete tmp_;
    tmp_ = nullptr;
  }
  void SetUp() override {
    if (tmp_ == nullptr) {
      GTEST_SKIP() << "corpus runs not found under " << testing::CorpusDir()
                   << "/runs (the shared corpus is only on development and CI machines)";
    }
    db_ = OpenOrDie(db_path_);
    ASSERT_NE(db_, nullptr);
  }

  static TempDir* tmp_;
  static std::string db_path_;
  std::unique_ptr<store::Database> db_;
};

TempDir* CorpusRunQueries::tmp_ = nullptr;
std::string CorpusRunQueries::db_path_;

TEST_F(CorpusRunQueries, TrendOfAModuleInBothRuns) {
  // The two runs' buffer assignments are byte-identical (only HLO text, memory-usage report row order and
  // per-pass dumps differ), so a module's peak is the same in both: 796267856 for jit__fft_gather_reshard
  // (module_0039, the last cumulative of its peak list).
  store::TrendQuery query;
  query.module = "jit__fft_gather_reshard";
  auto trend = store::PeakMemoryTrend(*db_, query);
  ASSERT_TRUE(trend.ok()) << trend.status().ToString();
  ASSERT_EQ(trend->size(), 2u);
  EXPECT_EQ(RunNames(*trend), (std::vector<std::string>{kRunA, kRunB}));
  EXPECT_EQ((*trend)[0].xla_module_id, 39);
  EXPECT_EQ((*trend)[0].value, 796267856);
  EXPECT_EQ((*trend)[1].value, 796267856);
  EXPECT_EQ((*trend)[0].stage, "sm_8.0_gpu_after_optimizations");

  EXPECT_FALSE((*trend)[0].has_change);
  EXPECT_TRUE((*trend)[1].has_change);
  EXPECT_EQ((*trend)[1].change, 0);

  // A name compiled 14 times per run: 28 points. Every buffer assignment of run B is byte-identical to run
  // A's of the same module number, so each point of run B is matched with its twin and changes by 0.
  query.module = "jit_multiply";
  trend = store::PeakMemoryTrend(*db_, query);
  ASSERT_TRUE(trend.ok());
  ASSERT_EQ(trend->size(), 28u);
  int in_a = 0, in_b = 0;
  for (const auto& p : *trend) {
    if (p.run_name == kRunA) {
      ++in_a;
      EXPECT_FALSE(p.has_change);
    } else {
      ++in_b;
      EXPECT_TRUE(p.has_change) << p.xla_module_id;
      EXPECT_EQ(p.change, 0) << p.xla_module_id;
      EXPECT_NE(p.matched_by, "") << p.xla_module_id;
    }
  }
  EXPECT_EQ(in_a, 14);
  EXPECT_EQ(in_b, 14);
}

// Every buffer-assignment dump of both runs is one trend point, its peak read from the dump's text. The
// corpus runs name them `module_NNNN.<module>.sm_8.0_gpu_after_optimizations-buffer-assignment.txt`.
TEST_F(CorpusRunQueries, TrendOfEveryModuleIsThePeakListOfItsDump) {
  const std::string suffix = ".sm_8.0_gpu_after_optimizations-buffer-assignment.txt";
  std::vector<TrendPoint> expected;
  for (const char* run : {kRunA, kRunB}) {  // kRunA is the older run
    std::vector<TrendPoint> points;
    for (const auto& e : std::filesystem::recursive_directory_iterator(testing::CorpusDir() + "/runs/" + run)) {
      const std::string file = e.path().filename().string();
      if (!e.is_regular_file() || !file.ends_with("-buffer-assignment.txt")) continue;
      ASSERT_TRUE(file.starts_with("module_") && file.ends_with(suffix) && file[11] == '.') << file;
      const int64_t peak = PeakListBytes(ReadFile(e.path().string()));
      ASSERT_GT(peak, 0) << e.path();
      points.emplace_back(run, file.substr(12, file.size() - 12 - suffix.size()), std::stoll(file.substr(7, 4)),
                          peak);
    }
    EXPECT_EQ(points.size(), 493u) << run;
    std::sort(points.begin(), points.end());  // by module name, then xla_module_id: the trend's order in a run
    expected.insert(expected.end(), points.begin(), points.end());
  }
  ExpectTrendsAre(*db_, expected);
}

// The corpus runs: jit_multiply compiled 14 times in each, its modules paired by fingerprint and order.
TEST_F(CorpusRunQueries, MatchModulesIsTheViewRestrictedToTwoRuns) {
  const auto [pairs, lone] = ExpectMatchModulesIsTheView(*db_);
  EXPECT_EQ(pairs, 2 * 493);  // each run's 493 modules, both ways
  EXPECT_EQ(lone, 0);
}

TEST_F(CorpusRunQueries, DiffFindsTheThreeRecompiledModules) {
  store::DiffQuery query;
  query.run_a = kRunA;
  query.run_b = kRunB;
  auto diff = store::DiffRuns(*db_, query);
  ASSERT_TRUE(diff.ok()) << diff.status().ToString();
  // 493 modules with a buffer assignment in each run, numbered alike. Three jit__multi_slice modules were
  // compiled from different HLO (the slice offsets differ: module_0009, _0279, _0731
  // sm_8.0_gpu_after_optimizations.txt), with the same buffers; everything else is the same program.
  EXPECT_EQ(diff->changed, 3);
  EXPECT_EQ(diff->unchanged, 490);
  EXPECT_EQ(diff->added, 0);
  EXPECT_EQ(diff->removed, 0);
  ASSERT_EQ(diff->modules.size(), 3u);
  std::vector<int64_t> ids;
  for (const auto& m : diff->modules) {
    EXPECT_EQ(m.module_name, "jit__multi_slice");
    EXPECT_EQ(m.xla_module_id_a, m.xla_module_id_b);
    EXPECT_NE(m.fingerprint_a, m.fingerprint_b);
    EXPECT_EQ(m.peak_a, m.peak_b);
    EXPECT_TRUE(m.buffers.empty());
    ids.push_back(m.xla_module_id_a);
  }
  // Same peak delta (0): ordered by name, then xla_module_id.
  EXPECT_EQ(ids, (std::vector<int64_t>{9, 279, 731}));
  EXPECT_EQ(diff->modules[0].peak_a, 22118400);
  EXPECT_EQ(diff->modules[1].peak_a, 73728000);
  EXPECT_EQ(diff->modules[2].peak_a, 23040000);

  query.include_unchanged = true;
  diff = store::DiffRuns(*db_, query);
  ASSERT_TRUE(diff.ok());
  EXPECT_EQ(diff->modules.size(), 493u);

  // A run against itself: nothing changed.
  query.run_b = kRunA;
  query.include_unchanged = false;
  diff = store::DiffRuns(*db_, query);
  ASSERT_TRUE(diff.ok());
  EXPECT_EQ(diff->unchanged, 493);
  EXPECT_TRUE(diff->modules.empty());
}

// Every corpus module has its HLO text beside its buffer assignment: the two printers' entry signatures agree
// for each (docs/schema.md: the buffer assignment prints the signature, the HLO text confirms it).
TEST_F(CorpusRunQueries, HloTextConfirmsEveryEntrySignature) {
  SQLite::Statement q(SqliteOf(*db_),
                      "SELECT COUNT(*), SUM(m.entry_signature_confirmed = 1), SUM(m.entry_signature_confirmed = 0) "
                      "FROM module_memory mm JOIN modules m USING (module_id)");
  ASSERT_TRUE(q.executeStep());
  EXPECT_EQ(q.getColumn(0).getInt64(), 2 * 493);
  EXPECT_EQ(q.getColumn(1).getInt64(), 2 * 493);
  EXPECT_EQ(q.getColumn(2).getInt64(), 0);
}

TEST_F(CorpusRunQueries, ListRunsCountsTheCorpusFolders) {
  auto page = store::ListRuns(*db_, {});
  ASSERT_TRUE(page.ok()) << page.status().ToString();
  ASSERT_EQ(page->runs.size(), 2u);
  const store::RunInfo& a = page->runs[1];
  EXPECT_EQ(a.name, kRunA);
  // 2965 files: 1972 read, 993 known non-memory artifacts (thunk sequences, per-pass dumps…), none bad.
  EXPECT_EQ(a.file_count, 2965);
  EXPECT_EQ(a.ingested_file_count, 1972);
  EXPECT_EQ(a.error_file_count, 0);
  EXPECT_EQ(a.module_count, 493);
}

}  // namespace
}  // namespace xladb::testing
