// The cross-run questions of store/query/queries.h over databases built by the real ingester: the five seeds laid
// out as dump folders (three runs, one of them modified), and the two corpus runs when present. Expected
// numbers are counted from the dump files (see the comment at each).
#include "store/sqlite/sqlite_connection.h"
#include "store/query/queries.h"

#include <SQLiteCpp/SQLiteCpp.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <memory>
#include <set>
#include <sstream>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

#include "ingest/dump_ingester.h"
#include "store/compare/buffer_attribution.h"
#include "store/backend/database.h"
#include "store/compare/module_match.h"
#include "store/compare/module_trend.h"
#include "store/compare/run_diff.h"
#include "store/write/run_writer.h"
#include "tests/store/test_dirs.h"

namespace xladb {
namespace {

using store::BufferChange;
using store::ModuleDiff;
using testing::MakeSeedRun;
using testing::ReadFile;
using testing::SeedFile;
using testing::Seed000WithIotaRenamedAndDoubled;
using testing::TempDir;
using testing::WriteFile;

constexpr int64_t kDayUs = int64_t{86400} * 1000000;
constexpr int64_t kNov1Us = int64_t{1793491200} * 1000000;  // 2026-11-01T00:00:00Z

constexpr char kSplash[] = "jit_splash_attention_kernel";

void Ingest(const std::string& db_path, const std::string& path, ingest::IngestOptions options) {
  auto db = store::Database::Open(db_path);
  ASSERT_TRUE(db.ok()) << db.status().ToString();
  store::RunWriter writer(db.value().get());
  ingest::DumpIngester ingester(&writer);
  auto summary = ingester.Ingest(path, options);
  ASSERT_TRUE(summary.ok()) << summary.status().ToString();
  ASSERT_TRUE(summary->errors.empty()) << summary->errors[0].path << ": " << summary->errors[0].reason;
}

ingest::IngestOptions RunOptions(const std::string& name, int64_t time_us, store::Labels labels) {
  ingest::IngestOptions options;
  options.run_name = name;
  options.time_us = time_us;
  options.labels = std::move(labels);
  return options;
}

std::unique_ptr<store::Database> OpenOrDie(const std::string& path) {
  auto db = store::Database::Open(path, store::Database::Mode::kReadOnly);
  EXPECT_TRUE(db.ok()) << db.status().ToString();
  return db.ok() ? std::move(db.value()) : nullptr;
}

// The peak of a buffer-assignment dump, read from its text: the sum of the sizes listed under
// `Live ranges at N (peak):` (`name: 4194304 bytes (cumulative: …)` on TPU, `name: 4194304 bytes` on GPU), the
// way docs/schema.md defines peak_bytes; -1 when the dump has no such list.
int64_t PeakListBytes(const std::string& dump_text) {
  const std::string heading = "(peak):\n";
  const size_t at = dump_text.find(heading);
  if (at == std::string::npos) return -1;
  std::istringstream lines(dump_text.substr(at + heading.size()));
  int64_t sum = 0;
  for (std::string line; std::getline(lines, line) && line.starts_with("    ");) {
    const size_t bytes = line.find(" bytes");
    const size_t colon = line.rfind(": ", bytes);
    EXPECT_TRUE(bytes != std::string::npos && colon != std::string::npos) << line;
    if (bytes == std::string::npos || colon == std::string::npos) return -1;
    sum += std::stoll(line.substr(colon + 2, bytes - colon - 2));
  }
  return sum;
}

template <typename T>
std::vector<std::string> RunNames(const std::vector<T>& rows) {
  std::vector<std::string> names;
  for (const auto& r : rows) names.push_back(r.run_name);
  return names;
}

template <typename T>
std::vector<std::string> SortedRunNames(const std::vector<T>& rows) {
  std::vector<std::string> names = RunNames(rows);
  std::sort(names.begin(), names.end());
  return names;
}

std::vector<std::string> RunNames(const std::vector<store::RunInfo>& runs) {
  std::vector<std::string> names;
  for (const auto& r : runs) names.push_back(r.name);
  return names;
}

// Three runs of the seed folder, one day apart:
//   nightly-1  2026-11-01  branch=main commit=a1   the seed folder as is
//   nightly-2  2026-11-02  branch=main commit=b2   modified: seed 002 under the splash kernel's name (so its
//                                                  peak differs), SyncTensorsGraph.105 removed, and seed 000
//                                                  added as a new module jit_flash_kernel
//   nightly-3  2026-11-03  branch=dev  commit=c3   the seed folder as is
class SeedRunQueries : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    tmp_ = new TempDir();
    db_path_ = *tmp_ / "xladb.db";
    std::string one = *tmp_ / "nightly-1", two = *tmp_ / "nightly-2", three = *tmp_ / "nightly-3";
    MakeSeedRun(one);
    MakeSeedRun(two);
    MakeSeedRun(three);
    WriteFile(two + "/" + testing::kSeed000FileName, ReadFile(SeedFile("002")));
    std::filesystem::remove(two + "/module_0003.SyncTensorsGraph.105.sm_8.0_gpu_after_optimizations-buffer-assignment.txt");
    WriteFile(two + "/module_0005.jit_flash_kernel.after_optimizations-buffer-assignment.txt", ReadFile(SeedFile("000")));
    Ingest(db_path_, one, RunOptions("nightly-1", kNov1Us, {{"branch", "main"}, {"commit", "a1"}}));
    Ingest(db_path_, two, RunOptions("nightly-2", kNov1Us + kDayUs, {{"commit", "b2"}, {"branch", "main"}}));
    Ingest(db_path_, three, RunOptions("nightly-3", kNov1Us + 2 * kDayUs, {{"branch", "dev"}, {"commit", "c3"}}));
  }
  static void TearDownTestSuite() {
    delete tmp_;
    tmp_ = nullptr;
  }
  void SetUp() override {
    db_ = OpenOrDie(db_path_);
    ASSERT_NE(db_, nullptr);
  }

  static TempDir* tmp_;
  static std::string db_path_;
  std::unique_ptr<store::Database> db_;
};

TempDir* SeedRunQueries::tmp_ = nullptr;
std::string SeedRunQueries::db_path_;

// MatchModules(a, b) for every ordered pair of the store's runs: its matched pairs are the module_matches view's
// rows for (a, b), and every other module of the two runs with a buffer assignment comes back unmatched (the
// gate and the analysts' view cannot disagree). Returns how many pairs and lone modules it compared.
std::pair<int64_t, int64_t> ExpectMatchModulesIsTheView(store::Database& db) {
  SQLite::Database& raw = SqliteOf(db);
  std::vector<int64_t> runs;
  SQLite::Statement r(raw, "SELECT run_id FROM runs ORDER BY run_id");
  while (r.executeStep()) runs.push_back(r.getColumn(0).getInt64());
  int64_t pairs_seen = 0, lone_seen = 0;
  for (int64_t a : runs) {
    for (int64_t b : runs) {
      if (a == b) continue;
      auto pairs = store::MatchModules(db, a, b);
      EXPECT_TRUE(pairs.ok()) << pairs.status().ToString();
      if (!pairs.ok()) continue;
      std::set<std::tuple<int64_t, int64_t, std::string>> matched, view;
      std::set<int64_t> lone, expected_lone;
      for (const store::ModulePair& p : *pairs) {
        if (p.baseline_module_id != 0 && p.current_module_id != 0) {
          matched.emplace(p.baseline_module_id, p.current_module_id, p.matched_by);
        } else {
          lone.insert(p.baseline_module_id != 0 ? p.baseline_module_id : p.current_module_id);
        }
      }
      SQLite::Statement v(raw, "SELECT module_id_a, module_id_b, matched_by FROM module_matches "
                               "WHERE run_id_a = ? AND run_id_b = ?");
      v.bind(1, a);
      v.bind(2, b);
      std::set<int64_t> in_view;
      while (v.executeStep()) {
        view.emplace(v.getColumn(0).getInt64(), v.getColumn(1).getInt64(), v.getColumn(2).getString());
        in_view.insert(v.getColumn(0).getInt64());
        in_view.insert(v.getColumn(1).getInt64());
      }
      SQLite::Statement m(raw, "SELECT module_id FROM module_memory WHERE run_id IN (?, ?)");
      m.bind(1, a);
      m.bind(2, b);
      while (m.executeStep()) {
        if (!in_view.contains(m.getColumn(0).getInt64())) expected_lone.insert(m.getColumn(0).getInt64());
      }
      EXPECT_EQ(matched, view) << "runs " << a << " and " << b;
      EXPECT_EQ(lone, expected_lone) << "runs " << a << " and " << b;
      pairs_seen += static_cast<int64_t>(matched.size());
      lone_seen += static_cast<int64_t>(lone.size());
    }
  }
  return {pairs_seen, lone_seen};
}

// --- ListRuns / GetRun -------------------------------------------------------------------------------

TEST_F(SeedRunQueries, ListRunsNewestFirstWithLabelsAndCounts) {
  auto page = store::ListRuns(*db_, {});
  ASSERT_TRUE(page.ok()) << page.status().ToString();
  EXPECT_EQ(RunNames(page->runs), (std::vector<std::string>{"nightly-3", "nightly-2", "nightly-1"}));
  EXPECT_EQ(page->next_page_token, "");
  const store::RunInfo& oldest = page->runs[2];
  EXPECT_EQ(oldest.run_time_us, kNov1Us);
  EXPECT_EQ(oldest.run_time_source, "flag");
  EXPECT_EQ(oldest.labels, (store::Labels{{"branch", "main"}, {"commit", "a1"}}));
  // Labels come back sorted by key whatever the order they were given in.
  EXPECT_EQ(page->runs[1].labels, (store::Labels{{"branch", "main"}, {"commit", "b2"}}));
  // MakeSeedRun writes 6 files: 5 ingested, the thunk sequence not; three buffer assignments.
  EXPECT_EQ(oldest.file_count, 6);
  EXPECT_EQ(oldest.ingested_file_count, 5);
  EXPECT_EQ(oldest.error_file_count, 0);
  EXPECT_EQ(oldest.module_count, 3);
  EXPECT_NE(oldest.source_path.find("nightly-1"), std::string::npos);
}

TEST_F(SeedRunQueries, ListRunsFiltersByLabelTimeAndName) {
  store::RunFilter main;
  main.labels = {{"branch", "main"}};
  auto runs = store::ListRuns(*db_, main);
  ASSERT_TRUE(runs.ok()) << runs.status().ToString();
  EXPECT_EQ(RunNames(runs->runs), (std::vector<std::string>{"nightly-2", "nightly-1"}));

  main.labels = {{"branch", "main"}, {"commit", "a1"}};
  runs = store::ListRuns(*db_, main);
  ASSERT_TRUE(runs.ok());
  EXPECT_EQ(RunNames(runs->runs), (std::vector<std::string>{"nightly-1"}));

  main.labels = {{"branch", "release"}};
  runs = store::ListRuns(*db_, main);
  ASSERT_TRUE(runs.ok());
  EXPECT_TRUE(runs->runs.empty());

  store::RunFilter since;  // since is inclusive, until exclusive
  since.since_us = kNov1Us + kDayUs;
  runs = store::ListRuns(*db_, since);
  ASSERT_TRUE(runs.ok());
  EXPECT_EQ(RunNames(runs->runs), (std::vector<std::string>{"nightly-3", "nightly-2"}));
  since.until_us = kNov1Us + 2 * kDayUs;
  runs = store::ListRuns(*db_, since);
  ASSERT_TRUE(runs.ok());
  EXPECT_EQ(RunNames(runs->runs), (std::vector<std::string>{"nightly-2"}));

  store::RunFilter until;
  until.until_us = kNov1Us + kDayUs;
  runs = store::ListRuns(*db_, until);
  ASSERT_TRUE(runs.ok());
  EXPECT_EQ(RunNames(runs->runs), (std::vector<std::string>{"nightly-1"}));

  store::RunFilter name;
  name.name_pattern = "nightly-[13]";
  runs = store::ListRuns(*db_, name);
  ASSERT_TRUE(runs.ok());
  EXPECT_EQ(RunNames(runs->runs), (std::vector<std::string>{"nightly-3", "nightly-1"}));
  name.name_pattern = "Nightly-*";  // GLOB is case-sensitive
  runs = store::ListRuns(*db_, name);
  ASSERT_TRUE(runs.ok());
  EXPECT_TRUE(runs->runs.empty());
}

TEST_F(SeedRunQueries, ListRunsPagesThroughEveryRunOnce) {
  store::RunFilter filter;
  filter.page_size = 2;
  auto first = store::ListRuns(*db_, filter);
  ASSERT_TRUE(first.ok()) << first.status().ToString();
  EXPECT_EQ(RunNames(first->runs), (std::vector<std::string>{"nightly-3", "nightly-2"}));
  ASSERT_NE(first->next_page_token, "");
  filter.page_token = first->next_page_token;
  auto second = store::ListRuns(*db_, filter);
  ASSERT_TRUE(second.ok()) << second.status().ToString();
  EXPECT_EQ(RunNames(second->runs), (std::vector<std::string>{"nightly-1"}));
  EXPECT_EQ(second->next_page_token, "");
  // The labels and counts are filled on later pages too.
  EXPECT_EQ(second->runs[0].labels.size(), 2u);
  EXPECT_EQ(second->runs[0].module_count, 3);

  // One run per page, with a filter: the pages follow the filtered order.
  filter = {};
  filter.page_size = 1;
  filter.labels = {{"branch", "main"}};
  std::vector<std::string> seen;
  int pages = 0;
  do {
    auto page = store::ListRuns(*db_, filter);
    ASSERT_TRUE(page.ok()) << page.status().ToString();
    ASSERT_LE(page->runs.size(), 1u);
    for (const auto& r : page->runs) seen.push_back(r.name);
    filter.page_token = page->next_page_token;
    ASSERT_LT(++pages, 10);
  } while (!filter.page_token.empty());
  EXPECT_EQ(seen, (std::vector<std::string>{"nightly-2", "nightly-1"}));
}

TEST_F(SeedRunQueries, ListRunsRejectsBadTokensPatternsAndPageSizes) {
  store::RunFilter filter;
  filter.page_token = "not-a-token";
  auto page = store::ListRuns(*db_, filter);
  ASSERT_FALSE(page.ok());
  EXPECT_EQ(page.status().code(), Status::Code::kInvalidArgument);
  EXPECT_NE(page.status().message().find("not-a-token"), std::string::npos);

  filter = {};
  filter.name_pattern = "nightly-[12";
  page = store::ListRuns(*db_, filter);
  ASSERT_FALSE(page.ok());
  EXPECT_EQ(page.status().code(), Status::Code::kInvalidArgument);

  filter = {};
  filter.page_size = -5;
  EXPECT_EQ(store::ListRuns(*db_, filter).status().code(), Status::Code::kInvalidArgument);
  filter.page_size = 0;  // the default page
  page = store::ListRuns(*db_, filter);
  ASSERT_TRUE(page.ok());
  EXPECT_EQ(page->runs.size(), 3u);
}

TEST_F(SeedRunQueries, GetRunAndItsNotFound) {
  auto run = store::GetRun(*db_, "nightly-2");
  ASSERT_TRUE(run.ok()) << run.status().ToString();
  EXPECT_EQ(run->name, "nightly-2");
  EXPECT_EQ(run->run_time_us, kNov1Us + kDayUs);
  // The modified run: splash kernel, train step and the added flash kernel have buffer assignments.
  EXPECT_EQ(run->module_count, 3);
  EXPECT_EQ(run->file_count, 6);

  auto missing = store::GetRun(*db_, "nightly-9");
  ASSERT_FALSE(missing.ok());
  EXPECT_EQ(missing.status().code(), Status::Code::kNotFound);
  EXPECT_NE(missing.status().message().find("nightly-9"), std::string::npos);
}

// --- ListModules ---------------------------------------------------------------------------------------

TEST_F(SeedRunQueries, ListModulesOrdersByNameStageAndId) {
  auto modules = store::ListModules(*db_, "nightly-1");
  ASSERT_TRUE(modules.ok()) << modules.status().ToString();
  // Five modules: the three buffer assignments, the splash kernel's HLO text (module_0004, seed 003) and
  // the bundle profile's compilation unit (no module number, no stage). Byte order: 'S' before 'j'.
  ASSERT_EQ(modules->size(), 5u);
  const auto& m = *modules;
  EXPECT_EQ(m[0].name, "SyncTensorsGraph.105");
  EXPECT_EQ(m[0].stage, "sm_8.0_gpu_after_optimizations");
  EXPECT_EQ(m[0].backend, "cuda");
  EXPECT_TRUE(m[0].has_buffer_assignment);
  EXPECT_EQ(m[0].peak_bytes, 931536164);
  EXPECT_EQ(m[0].allocation_count, 26);
  EXPECT_EQ(m[0].value_count, 49);
  EXPECT_EQ(m[1].name, kSplash);
  EXPECT_EQ(m[1].stage, "");
  EXPECT_EQ(m[1].xla_module_id, -1);
  EXPECT_FALSE(m[1].has_buffer_assignment);
  EXPECT_EQ(m[2].name, kSplash);
  EXPECT_EQ(m[2].xla_module_id, 1);
  EXPECT_TRUE(m[2].has_buffer_assignment);
  EXPECT_EQ(m[2].peak_bytes, 18612288);
  EXPECT_EQ(m[2].peak_time, 6);
  EXPECT_EQ(m[2].total_bytes, 18629632);
  EXPECT_EQ(m[2].temp_bytes, 1851392);  // allocations 6 (1048576) and 7 (802816), preallocated-temp
  EXPECT_EQ(m[3].name, kSplash);
  EXPECT_EQ(m[3].xla_module_id, 4);
  EXPECT_FALSE(m[3].has_buffer_assignment);
  EXPECT_EQ(m[3].peak_bytes, -1);
  EXPECT_EQ(m[3].instruction_count, 79);
  EXPECT_EQ(m[4].name, "jit_train_step");
  EXPECT_EQ(m[4].peak_bytes, 184680476);

  auto jit = store::ListModules(*db_, "nightly-1", "jit_*");
  ASSERT_TRUE(jit.ok());
  EXPECT_EQ(jit->size(), 4u);
  auto exact = store::ListModules(*db_, "nightly-1", "jit_train_step");
  ASSERT_TRUE(exact.ok());
  ASSERT_EQ(exact->size(), 1u);
  EXPECT_EQ((*exact)[0].xla_module_id, 2);

  auto missing = store::ListModules(*db_, "no-such-run");
  EXPECT_EQ(missing.status().code(), Status::Code::kNotFound);
  EXPECT_NE(missing.status().message().find("no-such-run"), std::string::npos);
}

// --- PeakMemoryTrend -----------------------------------------------------------------------------------

// nightly-2 holds seed 002 under the splash kernel's name: another entry signature, so another identity.
// The trend keeps the two apart: seed 000's series (nightly-1, nightly-3, change 0) and seed 002's (nightly-2
// alone, no change), never a change between the two programs.
TEST_F(SeedRunQueries, TrendFollowsOneIdentity) {
  store::TrendQuery query;
  query.module = kSplash;
  auto trend = store::PeakMemoryTrend(*db_, query);
  ASSERT_TRUE(trend.ok()) << trend.status().ToString();
  ASSERT_EQ(trend->size(), 3u);
  std::map<std::string, store::TrendPoint> by_run;
  for (const auto& p : *trend) by_run[p.run_name] = p;
  ASSERT_EQ(by_run.size(), 3u);
  // Seed 000's last cumulative, seed 002's, seed 000's again.
  EXPECT_EQ(by_run["nightly-1"].value, 18612288);
  EXPECT_EQ(by_run["nightly-2"].value, 184680476);
  EXPECT_EQ(by_run["nightly-3"].value, 18612288);
  EXPECT_EQ(by_run["nightly-1"].run_time_us, kNov1Us);
  EXPECT_EQ(by_run["nightly-1"].xla_module_id, 1);
  EXPECT_EQ(by_run["nightly-1"].stage, "after_optimizations");
  EXPECT_EQ(by_run["nightly-1"].identity_key, by_run["nightly-3"].identity_key);
  EXPECT_NE(by_run["nightly-1"].identity_key, by_run["nightly-2"].identity_key);
  EXPECT_NE(by_run["nightly-1"].entry_signature, by_run["nightly-2"].entry_signature);
  EXPECT_FALSE(by_run["nightly-1"].has_change);
  EXPECT_FALSE(by_run["nightly-2"].has_change);
  EXPECT_TRUE(by_run["nightly-3"].has_change);
  EXPECT_EQ(by_run["nightly-3"].change, 0);
  EXPECT_EQ(by_run["nightly-3"].matched_by, "identity");
  // A series is contiguous: nightly-1 and nightly-3 are next to each other.
  int64_t one = -1, three = -1;
  for (size_t i = 0; i < trend->size(); ++i) {
    if ((*trend)[i].run_name == "nightly-1") one = static_cast<int64_t>(i);
    if ((*trend)[i].run_name == "nightly-3") three = static_cast<int64_t>(i);
  }
  EXPECT_EQ(three, one + 1);

  query.metric = "total_bytes";  // `Total bytes used` of seeds 000, 002, 000
  trend = store::PeakMemoryTrend(*db_, query);
  ASSERT_TRUE(trend.ok());
  ASSERT_EQ(trend->size(), 3u);
  for (const auto& p : *trend) {
    EXPECT_EQ(p.value, p.run_name == "nightly-2" ? 230870056 : 18629632) << p.run_name;
    if (p.run_name == "nightly-2") {
      EXPECT_EQ(p.peak_bytes, 184680476);
    }
  }
  query.metric = "temp_bytes";
  trend = store::PeakMemoryTrend(*db_, query);
  ASSERT_TRUE(trend.ok());
  ASSERT_EQ(trend->size(), 3u);
  for (const auto& p : *trend) EXPECT_EQ(p.value, p.run_name == "nightly-2" ? 176341032 : 1851392) << p.run_name;
  query.metric = "no_such_metric";
  EXPECT_EQ(store::PeakMemoryTrend(*db_, query).status().code(), Status::Code::kInvalidArgument);
}

TEST_F(SeedRunQueries, TrendLastNLabelsStageAndPatterns) {
  store::TrendQuery query;
  query.module = kSplash;
  query.last_n = 2;
  auto trend = store::PeakMemoryTrend(*db_, query);
  ASSERT_TRUE(trend.ok()) << trend.status().ToString();
  EXPECT_EQ(SortedRunNames(*trend), (std::vector<std::string>{"nightly-2", "nightly-3"}));

  query.labels = {{"branch", "main"}};
  trend = store::PeakMemoryTrend(*db_, query);
  ASSERT_TRUE(trend.ok());
  EXPECT_EQ(SortedRunNames(*trend), (std::vector<std::string>{"nightly-1", "nightly-2"}));
  query.last_n = 1;
  trend = store::PeakMemoryTrend(*db_, query);
  ASSERT_TRUE(trend.ok());
  EXPECT_EQ(RunNames(*trend), (std::vector<std::string>{"nightly-2"}));

  // last_n counts runs, not points: two modules match `jit_*` in each run.
  store::TrendQuery pattern;
  pattern.module = "jit_*";
  pattern.last_n = 1;
  trend = store::PeakMemoryTrend(*db_, pattern);
  ASSERT_TRUE(trend.ok());
  ASSERT_EQ(trend->size(), 2u);
  EXPECT_EQ((*trend)[0].module_name, kSplash);
  EXPECT_EQ((*trend)[1].module_name, "jit_train_step");
  pattern.last_n = -1;
  trend = store::PeakMemoryTrend(*db_, pattern);
  ASSERT_TRUE(trend.ok());
  EXPECT_EQ(trend->size(), 7u);  // 2 + 3 (nightly-2 adds jit_flash_kernel) + 2

  store::TrendQuery gpu;
  gpu.module = "*";
  gpu.stage = "sm_8.0_gpu_after_optimizations";
  trend = store::PeakMemoryTrend(*db_, gpu);
  ASSERT_TRUE(trend.ok());
  // SyncTensorsGraph.105 (seed 004) is in nightly-1 and nightly-3 only.
  EXPECT_EQ(RunNames(*trend), (std::vector<std::string>{"nightly-1", "nightly-3"}));
  EXPECT_EQ((*trend)[0].value, 931536164);

  // Nothing matches: kNotFound saying why.
  store::TrendQuery none;
  none.module = "jit_no_such_module";
  trend = store::PeakMemoryTrend(*db_, none);
  ASSERT_EQ(trend.status().code(), Status::Code::kNotFound);
  EXPECT_NE(trend.status().message().find("not found in any run"), std::string::npos);
  none.module = kSplash;
  none.stage = "before_optimizations";
  trend = store::PeakMemoryTrend(*db_, none);
  ASSERT_EQ(trend.status().code(), Status::Code::kNotFound);
  EXPECT_NE(trend.status().message().find("stage 'before_optimizations'"), std::string::npos)
      << trend.status().message();
  none.stage = "";

  none.module = "jit_[";
  EXPECT_EQ(store::PeakMemoryTrend(*db_, none).status().code(), Status::Code::kInvalidArgument);
  none.module = "";
  EXPECT_EQ(store::PeakMemoryTrend(*db_, none).status().code(), Status::Code::kInvalidArgument);
}

// A trend point as compared here: run, module, xla_module_id, value.
using TrendPoint = std::tuple<std::string, std::string, int64_t, int64_t>;

std::vector<TrendPoint> TrendPoints(store::Database& db, const std::string& module) {
  store::TrendQuery query;
  query.module = module;
  auto trend = store::PeakMemoryTrend(db, query);
  EXPECT_TRUE(trend.ok()) << module << ": " << trend.status().ToString();
  std::vector<TrendPoint> points;
  if (trend.ok()) {
    for (const auto& p : *trend) points.emplace_back(p.run_name, p.module_name, p.xla_module_id, p.value);
  }
  return points;
}

// The points of `all` whose module is `module`, in their order.
std::vector<TrendPoint> PointsOf(const std::vector<TrendPoint>& all, const std::string& module) {
  std::vector<TrendPoint> points;
  for (const auto& p : all) {
    if (std::get<1>(p) == module) points.push_back(p);
  }
  return points;
}

// Every module's trend, by its name and with the pattern `*`, is `expected`: one point per buffer-assignment
// dump, ordered by run time, module name, xla_module_id.
void ExpectTrendsAre(store::Database& db, std::vector<TrendPoint> expected) {
  ASSERT_FALSE(expected.empty());
  // Points come by series (identity) first; compared here as sets.
  auto sorted = [](std::vector<TrendPoint> v) {
    std::sort(v.begin(), v.end());
    return v;
  };
  expected = sorted(expected);
  EXPECT_EQ(sorted(TrendPoints(db, "*")), expected);
  std::set<std::string> names;
  for (const auto& p : expected) names.insert(std::get<1>(p));
  for (const auto& name : names) EXPECT_EQ(sorted(TrendPoints(db, name)), PointsOf(expected, name)) << name;
}

// The seeds' peaks, read from the dump text (PeakListBytes): seed 000 under the splash kernel's name in
// nightly-1 and nightly-3 and as jit_flash_kernel in nightly-2, seed 002 as jit_train_step in every run and
// under the splash kernel's name in nightly-2, seed 004 in nightly-1 and nightly-3. The splash kernel's HLO
// text and bundle profile have no peak list, so no point.
TEST_F(SeedRunQueries, TrendOfEveryModuleIsThePeakListOfItsDump) {
  const int64_t seed000 = PeakListBytes(ReadFile(SeedFile("000")));
  const int64_t seed002 = PeakListBytes(ReadFile(SeedFile("002")));
  const int64_t seed004 = PeakListBytes(ReadFile(SeedFile("004")));
  EXPECT_EQ(seed000, 18612288);  // the last `cumulative:` of seed 000's peak list
  const std::vector<TrendPoint> expected = {
      {"nightly-1", "SyncTensorsGraph.105", 3, seed004}, {"nightly-1", kSplash, 1, seed000},
      {"nightly-1", "jit_train_step", 2, seed002},        {"nightly-2", "jit_flash_kernel", 5, seed000},
      {"nightly-2", kSplash, 1, seed002},                 {"nightly-2", "jit_train_step", 2, seed002},
      {"nightly-3", "SyncTensorsGraph.105", 3, seed004}, {"nightly-3", kSplash, 1, seed000},
      {"nightly-3", "jit_train_step", 2, seed002}};
  ExpectTrendsAre(*db_, expected);
}

// --- SpillRates ----------------------------------------------------------------------------------------

TEST_F(SeedRunQueries, SpillRatesOfSeed001) {
  store::SpillQuery query;
  query.run = "nightly-1";
  auto rows = store::SpillRates(*db_, query);
  ASSERT_TRUE(rows.ok()) << rows.status().ToString();
  // Seed 001 has four blocks: two <no-hlo-instruction> (grouped into one row), the splash kernel, iota.1.
  ASSERT_EQ(rows->size(), 3u);
  const store::SpillRateRow& splash = (*rows)[0];
  EXPECT_EQ(splash.kernel, "splash_mha_fwd_08d1d988.1");
  EXPECT_EQ(splash.run_name, "nightly-1");
  EXPECT_EQ(splash.run_time_us, kNov1Us);
  EXPECT_EQ(splash.module_name, kSplash);
  // ` - VMEM_SPILL_COUNT: (13457/15135)`, `VMEM_FILL_COUNT: (14679/15135)`, `SMEM_SPILL_COUNT: (15/15135)`,
  // `SMEM_FILL_COUNT: (18/15135)`.
  EXPECT_EQ(splash.vmem_spills, 13457);
  EXPECT_EQ(splash.bundles, 15135);
  EXPECT_EQ(splash.vmem_fills, 14679);
  EXPECT_EQ(splash.smem_spills, 15);
  EXPECT_EQ(splash.smem_fills, 18);
  EXPECT_DOUBLE_EQ(splash.vmem_spill_rate, 13457.0 / 15135.0);
  EXPECT_DOUBLE_EQ(splash.vmem_fill_rate, 14679.0 / 15135.0);
  EXPECT_DOUBLE_EQ(splash.smem_spill_rate, 15.0 / 15135.0);
  // The two <no-hlo-instruction> blocks: SMEM_SPILL_COUNT (1/187) and (0/7).
  // Rates tie at 0 for the other two rows: by kernel name ('<' sorts before 'i').
  const store::SpillRateRow& none = (*rows)[1];
  EXPECT_EQ(none.kernel, "<no-hlo-instruction>");
  EXPECT_EQ((*rows)[2].kernel, "iota.1");
  EXPECT_EQ(none.smem_spills, 1);
  EXPECT_EQ(none.bundles, 187 + 7);
  EXPECT_DOUBLE_EQ(none.smem_spill_rate, 1.0 / 194.0);
  EXPECT_EQ(none.vmem_spill_rate, 0);
}

TEST_F(SeedRunQueries, SpillRatesAcrossRunsLimitAndKernelPattern) {
  store::SpillQuery query;
  query.limit = 2;
  auto rows = store::SpillRates(*db_, query);
  ASSERT_TRUE(rows.ok()) << rows.status().ToString();
  ASSERT_EQ(rows->size(), 2u);
  // Equal rates in every run: the newest run first.
  EXPECT_EQ(RunNames(*rows), (std::vector<std::string>{"nightly-3", "nightly-2"}));
  EXPECT_EQ((*rows)[0].kernel, "splash_mha_fwd_08d1d988.1");

  query.limit = -1;
  rows = store::SpillRates(*db_, query);
  ASSERT_TRUE(rows.ok());
  EXPECT_EQ(rows->size(), 9u);  // 3 kernels × 3 runs

  query.kernel_pattern = "iota*";
  rows = store::SpillRates(*db_, query);
  ASSERT_TRUE(rows.ok());
  ASSERT_EQ(rows->size(), 3u);
  for (const auto& r : *rows) {
    EXPECT_EQ(r.kernel, "iota.1");
    EXPECT_EQ(r.bundles, 132);  // ` - VMEM_SPILL_COUNT: (0/132)`
    EXPECT_EQ(r.vmem_spills, 0);
  }

  query.kernel_pattern = "";
  query.run = "nightly-7";
  auto missing = store::SpillRates(*db_, query);
  EXPECT_EQ(missing.status().code(), Status::Code::kNotFound);
  EXPECT_NE(missing.status().message().find("nightly-7"), std::string::npos);
}

// The top N is cut at the N-th rate pair before the rows are joined and sorted (store/query/queries.cc): with
// every kind of tie the seeds give (equal rates across the three runs, zero rates within a run), each limit
// must return exactly the first N rows of the unlimited answer.
TEST_F(SeedRunQueries, SpillRatesTopNIsThePrefixOfTheWholeOrder) {
  auto key = [](const store::SpillRateRow& r) { return std::make_tuple(r.run_name, r.module_name, r.kernel); };
  for (const char* pattern : {"", "*", "iota*"}) {
    for (const char* run : {"", "nightly-2"}) {
      store::SpillQuery query;
      query.kernel_pattern = pattern;
      query.run = run;
      auto all = store::SpillRates(*db_, query);
      ASSERT_TRUE(all.ok()) << all.status().ToString();
      ASSERT_FALSE(all->empty());
      for (int64_t n = 1; n <= static_cast<int64_t>(all->size()) + 1; ++n) {
        query.limit = n;
        auto top = store::SpillRates(*db_, query);
        ASSERT_TRUE(top.ok()) << top.status().ToString();
        const size_t expected = std::min(all->size(), static_cast<size_t>(n));
        ASSERT_EQ(top->size(), expected) << "pattern '" << pattern << "' run '" << run << "' limit " << n;
        for (size_t i = 0; i < expected; ++i) {
          EXPECT_EQ(key((*top)[i]), key((*all)[i])) << "pattern '" << pattern << "' limit " << n << " row " << i;
        }
      }
    }
  }
}

// --- TopBuffers ----------------------------------------------------------------------------------------

TEST_F(SeedRunQueries, TopBuffersOfSeed000) {
  auto top = store::TopBuffers(*db_, "nightly-1", kSplash, -1);
  ASSERT_TRUE(top.ok()) << top.status().ToString();
  // The module answered, as its file name and dump say: module_0001 after optimizations, in the run root,
  // its peak the sum of its peak list at `Live ranges at 6 (peak):`.
  EXPECT_EQ(top->module, kSplash);
  EXPECT_EQ(top->stage, "after_optimizations");
  EXPECT_EQ(top->xla_module_id, 1);
  EXPECT_EQ(top->folder, "");
  EXPECT_EQ(top->peak_bytes, PeakListBytes(ReadFile(SeedFile("000"))));
  EXPECT_EQ(top->peak_time, 6);
  // `Live ranges at 6 (peak):` lists 11 buffers; the four largest are 4194304 bytes.
  ASSERT_EQ(top->buffers.size(), 11u);
  int64_t sum = 0;
  for (const auto& b : top->buffers) sum += b.logical_bytes;
  EXPECT_EQ(sum, 18612288);  // the last cumulative
  for (int i = 0; i < 4; ++i) EXPECT_EQ(top->buffers[i].logical_bytes, 4194304) << i;
  EXPECT_EQ(top->buffers[4].logical_bytes, 1048576);
  // Equal sizes keep XLA's order.
  EXPECT_EQ(top->buffers[0].instruction, "Arg_0.1");
  EXPECT_EQ(top->buffers[0].op_name, "q");
  const store::TopBuffer& out = top->buffers[3];
  EXPECT_EQ(out.ordinal, 3);
  EXPECT_EQ(out.instruction, "splash_mha_fwd_e9701070.1");
  EXPECT_EQ(out.shape_index, "{3}");
  EXPECT_EQ(out.value_id, 10);
  EXPECT_EQ(out.allocation_index, 1);
  EXPECT_EQ(out.size_bytes, 4194304);
  EXPECT_EQ(out.shape, "bf16[8,2048,128]{2,1,0:T(8,128)(2,1)}");
  EXPECT_EQ(out.opcode, "custom-call");
  EXPECT_EQ(out.op_name,
            "jit(splash_attention_kernel)/jit(main)/splash_attention_kernel/splash_kernel_b512_h8_s2048/"
            "jit(_splash_attention)/splash_mha_fwd_e9701070/pallas_call");
  EXPECT_EQ(out.source_line, 1100);
  EXPECT_NE(out.source_file.find("splash_attention_kernel.py"), std::string::npos);
  EXPECT_EQ(out.live_start, 6);
  EXPECT_EQ(out.live_end, 8);
  // The two constants: 16 logical bytes at the peak, 512 padded bytes in their allocations.
  EXPECT_EQ(top->buffers[10].instruction, "constant.5");
  EXPECT_EQ(top->buffers[10].logical_bytes, 16);
  EXPECT_EQ(top->buffers[10].size_bytes, 512);

  auto three = store::TopBuffers(*db_, "nightly-1", kSplash, 3);
  ASSERT_TRUE(three.ok());
  EXPECT_EQ(three->buffers.size(), 3u);
}

TEST_F(SeedRunQueries, TopBuffersPicksTheModuleAndNamesWhatIsMissing) {
  // Three modules share the splash kernel's name in nightly-1; the one with a peak list is used, or the one
  // asked for by xla_module_id (module_0004 is HLO text only: no peak list, no rows).
  auto by_id = store::TopBuffers(*db_, "nightly-1", kSplash, -1, "after_optimizations", 4);
  ASSERT_TRUE(by_id.ok()) << by_id.status().ToString();
  EXPECT_TRUE(by_id->buffers.empty());
  auto by_stage = store::TopBuffers(*db_, "nightly-1", kSplash, -1, "after_optimizations", 1);
  ASSERT_TRUE(by_stage.ok());
  EXPECT_EQ(by_stage->buffers.size(), 11u);
  // nightly-2 holds seed 002 under that name: its largest peak buffer is fusion.5{1}.
  auto two = store::TopBuffers(*db_, "nightly-2", kSplash, 1);
  ASSERT_TRUE(two.ok());
  ASSERT_EQ(two->buffers.size(), 1u);
  EXPECT_EQ(two->buffers[0].instruction, "fusion.5");
  EXPECT_EQ(two->buffers[0].shape_index, "{1}");
  EXPECT_EQ(two->buffers[0].size_bytes, 134217728);

  auto no_module = store::TopBuffers(*db_, "nightly-1", "jit_missing", 5);
  ASSERT_FALSE(no_module.ok());
  EXPECT_EQ(no_module.status().code(), Status::Code::kNotFound);
  EXPECT_NE(no_module.status().message().find("jit_missing"), std::string::npos);
  EXPECT_NE(no_module.status().message().find("nightly-1"), std::string::npos);
  auto no_id = store::TopBuffers(*db_, "nightly-1", kSplash, 5, "", 7);
  EXPECT_EQ(no_id.status().code(), Status::Code::kNotFound);
  EXPECT_NE(no_id.status().message().find("xla_module_id 7"), std::string::npos);
  auto no_run = store::TopBuffers(*db_, "nightly-0", kSplash, 5);
  EXPECT_EQ(no_run.status().code(), Status::Code::kNotFound);
  EXPECT_NE(no_run.status().message().find("nightly-0"), std::string::npos);
}

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

// A page token is a position in the newest-first order: a run ingested between two pages does not shift
// or repeat what the next page returns.
TEST(ListRunsPaging, NewRunsDoNotShiftTheNextPage) {
  TempDir tmp;
  std::string db_path = tmp / "x.db";
  MakeSeedRun(tmp / "seed");
  for (int i = 0; i < 3; ++i) {
    Ingest(db_path, tmp / "seed", RunOptions("run-" + std::to_string(i), kNov1Us + i * kDayUs, {}));
  }
  auto db = OpenOrDie(db_path);
  ASSERT_NE(db, nullptr);
  store::RunFilter filter;
  filter.page_size = 1;
  auto first = store::ListRuns(*db, filter);
  ASSERT_TRUE(first.ok());
  EXPECT_EQ(RunNames(first->runs), (std::vector<std::string>{"run-2"}));
  Ingest(db_path, tmp / "seed", RunOptions("run-new", kNov1Us + 9 * kDayUs, {}));
  Ingest(db_path, tmp / "seed", RunOptions("run-tie", kNov1Us + 1 * kDayUs, {}));  // same time as run-1
  filter.page_token = first->next_page_token;
  filter.page_size = 10;
  auto rest = store::ListRuns(*db, filter);
  ASSERT_TRUE(rest.ok()) << rest.status().ToString();
  // Equal times order by run_id desc: run-tie (ingested last) before run-1.
  EXPECT_EQ(RunNames(rest->runs), (std::vector<std::string>{"run-tie", "run-1", "run-0"}));

  // One run per page, through the tie: the token after run-tie still finds run-1 at the same time.
  filter = {};
  filter.page_size = 1;
  std::vector<std::string> all;
  do {
    auto page = store::ListRuns(*db, filter);
    ASSERT_TRUE(page.ok()) << page.status().ToString();
    for (const auto& r : page->runs) all.push_back(r.name);
    filter.page_token = page->next_page_token;
    ASSERT_LT(all.size(), 10u);
  } while (!filter.page_token.empty());
  EXPECT_EQ(all, (std::vector<std::string>{"run-new", "run-2", "run-tie", "run-1", "run-0"}));
}

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
}  // namespace xladb
