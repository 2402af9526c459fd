// ListChanges (store/compare/change_points.h) compares the window's first run with the run before it that has the
// module, however far back: a series the run before the window lacks is looked up by key among the earlier
// runs. This covers a module last seen 70 runs before the window (the end-to-end tests,
// tests/e2e/test_changes.py, cover a few runs back on tests/fixtures/history). Figures come from the files.
#include <gtest/gtest.h>

#include <regex>
#include <string>

#include "store/compare/change_points.h"
#include "store/backend/database.h"
#include "tests/store/test_dirs.h"
#include "tests/store/test_ingest.h"

namespace xladb {
namespace {

constexpr char kSuffix[] = ".after_optimizations-buffer-assignment.txt";

std::string HistoryFile(const std::string& run, const std::string& stem) {
  return std::string(XLADB_FIXTURE_DIR) + "/history/" + run + "/" + stem + kSuffix;
}

// The sum of a dump's `allocation N: size S` lines.
int64_t AllocationBytes(const std::string& text) {
  static const std::regex line(R"(^allocation \d+: size (\d+))", std::regex::multiline);
  int64_t sum = 0;
  for (auto it = std::sregex_iterator(text.begin(), text.end(), line); it != std::sregex_iterator(); ++it) {
    sum += std::stoll((*it)[1]);
  }
  return sum;
}

TEST(ChangePoints, AModuleLastSeenLongBeforeTheWindowIsComparedWithThatRun) {
  testing::TempDir tmp;
  auto db = store::Database::Open(tmp / "x.db");
  ASSERT_TRUE(db.ok()) << db.status().ToString();
  const std::string once = testing::ReadFile(HistoryFile("h1", "module_0005.jit_once"));
  const std::string step = testing::ReadFile(HistoryFile("h1", "module_0001.jit_step"));
  ASSERT_EQ(AllocationBytes(once), 96);
  // jit_once with its temp f32[8] grown to f32[16].
  std::string grown = once;
  for (const auto& [from, to] : {std::pair<std::string, std::string>{"allocation 2: size 32,", "allocation 2: size 64,"},
                                 {"(size=32,offset=0): f32[8]{0}\n\nTotal bytes used: 96 (96B)",
                                  "(size=64,offset=0): f32[16]{0}\n\nTotal bytes used: 128 (128B)"}}) {
    const size_t at = grown.find(from);
    ASSERT_NE(at, std::string::npos) << from;
    grown.replace(at, from.size(), to);
  }
  ASSERT_EQ(AllocationBytes(grown), 128);

  constexpr int kRuns = 72;  // r00 has jit_once; r01..r70 only jit_step; r71 jit_once again, grown
  for (int i = 0; i < kRuns; ++i) {
    char name[8];
    std::snprintf(name, sizeof name, "r%02d", i);
    const std::string dir = tmp / name;
    testing::WriteFile(dir + "/module_0001.jit_step" + kSuffix, step);
    if (i == 0) testing::WriteFile(dir + "/module_0005.jit_once" + kSuffix, once);
    if (i == kRuns - 1) testing::WriteFile(dir + "/module_0005.jit_once" + kSuffix, grown);
    ingest::IngestOptions options;
    options.time_us = (int64_t{1793599200} + int64_t{86400} * i) * 1000000;
    ASSERT_TRUE(testing::IngestRun(*db.value(), dir, name, options).ok()) << name;
  }
  for (int64_t last_n : {1, 2}) {
    store::ChangeQuery q;
    q.last_n = last_n;
    auto history = store::ListChanges(*db.value(), q);
    ASSERT_TRUE(history.ok()) << history.status().ToString();
    ASSERT_EQ(history->changes.size(), 1u) << last_n;
    const store::ChangePoint& c = history->changes[0];
    EXPECT_EQ(std::make_tuple(c.run, c.previous_run, c.module, c.metric, c.before, c.after),
              std::make_tuple(std::string("r71"), std::string("r00"), std::string("jit_once"),
                              std::string("total_bytes"), int64_t{96}, int64_t{128}));
    EXPECT_EQ(c.level, store::ChangePoint::Level::kIdentity);
    ASSERT_TRUE(c.attribution.has_value());
    ASSERT_EQ(c.attribution->by_source.size(), 1u);
    EXPECT_EQ(c.attribution->by_source[0].source, "model.py:250");
    EXPECT_EQ(c.attribution->by_source[0].delta, 32);
  }
}

}  // namespace
}  // namespace xladb
