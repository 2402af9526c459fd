// What the store's query tests share: ingesting a dump folder as a dated, labeled run, opening the store
// read-only, the peak a dump's own text lists, every module's trend compared with the expected points, and
// SeedRunQueries, the three runs of the seed folder (queries_test.cc, diff_queries_test.cc,
// corpus_queries_test.cc). Expected numbers come from the dump files, never from the store.
#ifndef XLADB_TESTS_STORE_RUN_QUERIES_FIXTURE_H_
#define XLADB_TESTS_STORE_RUN_QUERIES_FIXTURE_H_

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

namespace xladb::testing {

inline constexpr int64_t kDayUs = int64_t{86400} * 1000000;
inline constexpr int64_t kNov1Us = int64_t{1793491200} * 1000000;  // 2026-11-01T00:00:00Z

inline constexpr char kSplash[] = "jit_splash_attention_kernel";

inline void Ingest(const std::string& db_path, const std::string& path, ingest::IngestOptions options) {
  auto db = store::Database::Open(db_path);
  ASSERT_TRUE(db.ok()) << db.status().ToString();
  store::RunWriter writer(db.value().get());
  ingest::DumpIngester ingester(&writer);
  auto summary = ingester.Ingest(path, options);
  ASSERT_TRUE(summary.ok()) << summary.status().ToString();
  ASSERT_TRUE(summary->errors.empty()) << summary->errors[0].path << ": " << summary->errors[0].reason;
}

inline ingest::IngestOptions RunOptions(const std::string& name, int64_t time_us, store::Labels labels) {
  ingest::IngestOptions options;
  options.run_name = name;
  options.time_us = time_us;
  options.labels = std::move(labels);
  return options;
}

inline std::unique_ptr<store::Database> OpenOrDie(const std::string& path) {
  auto db = store::Database::Open(path, store::Database::Mode::kReadOnly);
  EXPECT_TRUE(db.ok()) << db.status().ToString();
  return db.ok() ? std::move(db.value()) : nullptr;
}

// The peak of a buffer-assignment dump, read from its text: the sum of the sizes listed under
// `Live ranges at N (peak):` (`name: 4194304 bytes (cumulative: …)` on TPU, `name: 4194304 bytes` on GPU), the
// way docs/schema.md defines peak_bytes; -1 when the dump has no such list.
inline int64_t PeakListBytes(const std::string& dump_text) {
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
inline std::vector<std::string> RunNames(const std::vector<T>& rows) {
  std::vector<std::string> names;
  for (const auto& r : rows) names.push_back(r.run_name);
  return names;
}

template <typename T>
inline std::vector<std::string> SortedRunNames(const std::vector<T>& rows) {
  std::vector<std::string> names = RunNames(rows);
  std::sort(names.begin(), names.end());
  return names;
}

inline std::vector<std::string> RunNames(const std::vector<store::RunInfo>& runs) {
  std::vector<std::string> names;
  for (const auto& r : runs) names.push_back(r.name);
  return names;
}

// A trend point as compared here: run, module, xla_module_id, value.
using TrendPoint = std::tuple<std::string, std::string, int64_t, int64_t>;

inline std::vector<TrendPoint> TrendPoints(store::Database& db, const std::string& module) {
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
inline std::vector<TrendPoint> PointsOf(const std::vector<TrendPoint>& all, const std::string& module) {
  std::vector<TrendPoint> points;
  for (const auto& p : all) {
    if (std::get<1>(p) == module) points.push_back(p);
  }
  return points;
}

// Every module's trend, by its name and with the pattern `*`, is `expected`: one point per buffer-assignment
// dump, ordered by run time, module name, xla_module_id.
inline void ExpectTrendsAre(store::Database& db, std::vector<TrendPoint> expected) {
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

  static inline TempDir* tmp_ = nullptr;
  static inline std::string db_path_;
  std::unique_ptr<store::Database> db_;
};

// MatchModules(a, b) for every ordered pair of the store's runs: its matched pairs are the module_matches view's
// rows for (a, b), and every other module of the two runs with a buffer assignment comes back unmatched (the
// gate and the analysts' view cannot disagree). Returns how many pairs and lone modules it compared.
inline std::pair<int64_t, int64_t> ExpectMatchModulesIsTheView(store::Database& db) {
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

}  // namespace xladb::testing

#endif  // XLADB_TESTS_STORE_RUN_QUERIES_FIXTURE_H_
