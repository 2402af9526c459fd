// The worked queries of docs/schema.md run as written against a real database (the seed run, plus the two
// corpus runs when present), and each one's rows are checked against numbers read from the dump files, so the
// analysts' documentation cannot rot or silently answer wrong. Each query names its check on its first line
// (`-- check: NAME`); a query without a check, or a check without a query, fails.
#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <functional>
#include <map>
#include <regex>
#include <sstream>
#include <string>
#include <vector>

#include "ingest/dump_ingester.h"
#include "store/backend/database.h"
#include "store/write/run_writer.h"
#include "store/sql_endpoint.h"
#include "tests/store/schema_doc_blocks.h"
#include "tests/store/test_dirs.h"

namespace xladb {
namespace {

using Rows = std::vector<std::vector<store::SqlValue>>;

int64_t Int(const store::SqlValue& v) { return std::get<int64_t>(v); }
std::string Text(const store::SqlValue& v) { return std::get<std::string>(v); }

// Numbers read from a dump's text.
int64_t TotalBytesUsed(const std::string& text) {
  std::smatch m;
  EXPECT_TRUE(std::regex_search(text, m, std::regex("Total bytes used: (\\d+)")));
  return m.empty() ? -1 : std::stoll(m[1]);
}

// The `Live ranges at T (peak):` list: each line's bytes.
std::vector<int64_t> PeakList(const std::string& text) {
  std::vector<int64_t> bytes;
  const size_t at = text.find("(peak):\n");
  if (at == std::string::npos) return bytes;
  std::istringstream lines(text.substr(at + 8));
  std::regex line_re(": (\\d+) bytes");
  for (std::string line; std::getline(lines, line) && line.rfind("    ", 0) == 0;) {
    std::smatch m;
    if (std::regex_search(line, m, line_re)) bytes.push_back(std::stoll(m[1]));
  }
  return bytes;
}

// Allocation bytes and counts by color (`color N` flag; none = 0).
std::map<int64_t, std::pair<int64_t, int64_t>> AllocationsByColor(const std::string& text) {
  std::map<int64_t, std::pair<int64_t, int64_t>> by_color;
  std::regex re("^allocation \\d+: size (\\d+)(, color (\\d+))?");
  std::istringstream lines(text);
  for (std::string line; std::getline(lines, line);) {
    std::smatch m;
    if (!std::regex_search(line, m, re)) continue;
    auto& slot = by_color[m[3].matched ? std::stoll(m[3]) : 0];
    ++slot.first;
    slot.second += std::stoll(m[1]);
  }
  return by_color;
}

// BufferLiveRange lines `name{index}:start-end` whose range covers time t.
int64_t LiveAt(const std::string& text, int64_t t) {
  const size_t at = text.find("BufferLiveRange:\n");
  EXPECT_NE(at, std::string::npos);
  std::istringstream lines(text.substr(at + 17));
  std::regex re(":(\\d+)-(\\d+)$");
  int64_t n = 0;
  for (std::string line; std::getline(lines, line) && line.rfind("    ", 0) == 0;) {
    std::smatch m;
    if (std::regex_search(line, m, re) && std::stoll(m[1]) <= t && t <= std::stoll(m[2])) ++n;
  }
  return n;
}

TEST(SchemaDoc, EveryWorkedQueryAnswersWhatTheDumpsSay) {
  testing::TempDir tmp;
  std::string run = tmp / "nightly-2026-11-01";
  testing::MakeSeedRun(run);
  auto db = store::Database::Open(tmp / "x.db");
  ASSERT_TRUE(db.ok());
  const bool corpus = testing::HaveCorpus();
  {
    store::RunWriter writer(db.value().get());
    ingest::DumpIngester ingester(&writer);
    ASSERT_TRUE(ingester.Ingest(run, {}).ok());
    if (corpus) {
      for (const char* r : {"21_lorrax_scan_C", "22_lorrax_scan_cached_C"}) {
        ASSERT_TRUE(ingester.Ingest(testing::CorpusDir() + "/runs/" + r, {}).ok());
      }
    }
  }
  const std::string seed000 = testing::ReadFile(testing::SeedFile("000"));
  const std::string seed001 = testing::ReadFile(testing::SeedFile("001"));
  const std::string seed002 = testing::ReadFile(testing::SeedFile("002"));

  // Jit names by compile count in corpus run 21, from its buffer-assignment file names
  // (module_NNNN.<name>.<stage>-buffer-assignment.txt).
  std::vector<std::pair<int64_t, std::string>> compiles;
  if (corpus) {
    std::map<std::string, int64_t> count;
    for (const auto& e :
         std::filesystem::recursive_directory_iterator(testing::CorpusDir() + "/runs/21_lorrax_scan_C")) {
      const std::string f = e.path().filename().string();
      if (!f.ends_with("-buffer-assignment.txt")) continue;
      const size_t first = f.find('.'), last = f.rfind(".sm_");
      ++count[f.substr(first + 1, last - first - 1)];
    }
    for (const auto& [name, n] : count) compiles.emplace_back(-n, name);
    std::sort(compiles.begin(), compiles.end());
  }

  const std::map<std::string, std::function<void(const Rows&)>> checks = {
      {"identity_trend",
       [&](const Rows& rows) {
         // jit_train_step is seed 002, in the seed run only.
         ASSERT_EQ(rows.size(), 1u);
         EXPECT_EQ(Text(rows[0][0]), "nightly-2026-11-01");
         EXPECT_EQ(Int(rows[0][1]), 2);
         const auto peak = PeakList(seed002);
         ASSERT_FALSE(peak.empty());
         int64_t sum = 0;  // the peak list's sum, its last cumulative
         for (int64_t b : peak) sum += b;
         EXPECT_EQ(Int(rows[0][2]), sum);
         EXPECT_EQ(Int(rows[0][4]), TotalBytesUsed(seed002));
       }},
      {"spills",
       [&](const Rows& rows) {
         ASSERT_FALSE(rows.empty());
         EXPECT_EQ(Text(rows[0][2]), "splash_mha_fwd_08d1d988.1");
         EXPECT_NE(seed001.find("splash_mha_fwd_08d1d988.1"), std::string::npos);
         EXPECT_GT(Int(rows[0][3]), 0);
       }},
      {"changed_modules", [&](const Rows& rows) { EXPECT_TRUE(rows.empty()) << rows.size() << " rows"; }},
      {"allocation_growth", [&](const Rows& rows) { EXPECT_TRUE(rows.empty()) << rows.size() << " rows"; }},
      {"retraces",
       [&](const Rows& rows) {
         if (!corpus) {
           EXPECT_TRUE(rows.empty());
           return;
         }
         ASSERT_EQ(rows.size(), 3u);
         for (size_t i = 0; i < 3; ++i) {
           EXPECT_EQ(Text(rows[i][0]), compiles[i].second);
           EXPECT_EQ(Int(rows[i][1]), -compiles[i].first);
         }
       }},
      {"memory_spaces",
       [&](const Rows& rows) {
         // Seed 000: its color-1 (VMEM) iota, the rest in color 0; the sizes add up to `Total bytes used`.
         const auto by_color = AllocationsByColor(seed000);
         ASSERT_EQ(rows.size(), by_color.size());
         int64_t total = 0;
         size_t i = 0;
         for (const auto& [color, count_bytes] : by_color) {
           EXPECT_EQ(Int(rows[i][0]), color);
           EXPECT_EQ(Int(rows[i][1]), count_bytes.first);
           EXPECT_EQ(Int(rows[i][2]), count_bytes.second);
           total += count_bytes.second;
           ++i;
         }
         EXPECT_EQ(total, TotalBytesUsed(seed000));
         EXPECT_EQ(Int(rows[1][2]), 1048576);
       }},
      {"peak_buffers",
       [&](const Rows& rows) {
         auto peak = PeakList(seed002);
         ASSERT_EQ(rows.size(), peak.size());
         std::sort(peak.rbegin(), peak.rend());
         for (size_t i = 0; i < rows.size(); ++i) EXPECT_EQ(Int(rows[i][1]), peak[i]) << i;
       }},
      {"live_at_time", [&](const Rows& rows) { EXPECT_EQ(static_cast<int64_t>(rows.size()), LiveAt(seed000, 6)); }},
      {"runs",
       [&](const Rows& rows) {
         // Files on disk and buffer-assignment files (one module each) of every ingested run folder; the seed
         // run's thunk sequence is seen but not ingested.
         std::vector<std::string> folders;
         if (corpus) {
           for (const char* r : {"21_lorrax_scan_C", "22_lorrax_scan_cached_C"}) {
             folders.push_back(testing::CorpusDir() + "/runs/" + r);
           }
         }
         folders.push_back(run);
         ASSERT_EQ(rows.size(), folders.size());
         for (size_t i = 0; i < rows.size(); ++i) {
           int64_t files = 0, buffer_assignments = 0;
           for (const auto& e : std::filesystem::recursive_directory_iterator(folders[i])) {
             if (!e.is_regular_file()) continue;
             ++files;
             if (e.path().filename().string().ends_with("-buffer-assignment.txt")) ++buffer_assignments;
           }
           EXPECT_EQ(Text(rows[i][0]), std::filesystem::path(folders[i]).filename().string());
           EXPECT_EQ(Int(rows[i][1]), files);
           EXPECT_EQ(Int(rows[i][3]), 0);
           EXPECT_EQ(Int(rows[i][4]), buffer_assignments);
         }
         EXPECT_EQ(Int(rows.back()[1]), 6);  // MakeSeedRun's six files,
         EXPECT_EQ(Int(rows.back()[2]), 5);  // all but the thunk sequence read,
         EXPECT_EQ(Int(rows.back()[4]), 3);  // three of them buffer assignments
       }},
      {"errors", [&](const Rows& rows) { EXPECT_TRUE(rows.empty()); }},
      {"invariants", [&](const Rows& rows) { EXPECT_TRUE(rows.empty()); }},
  };

  const auto blocks = testing::SchemaDocSqlBlocks();
  ASSERT_EQ(blocks.size(), checks.size()) << "every worked query of docs/schema.md has a check, and each check a query";
  for (const auto& [name, sql] : blocks) {
    auto check = checks.find(name);
    ASSERT_NE(check, checks.end()) << "worked query without a check: " << name << "\n" << sql;
    if (!corpus && (name == "changed_modules" || name == "allocation_growth")) {
      // Without the corpus these have no runs to compare and answer nothing either way: only run them.
      std::cout << "[ note ] " << name << ": corpus absent, checked only that it runs\n";
    }
    Rows rows;
    Status st = store::RunReadOnlySql(
        *db.value(), sql, store::SqlLimits{}, [](const std::vector<store::SqlColumn>&) {},
        [&](const std::vector<store::SqlValue>& row) {
          rows.push_back(row);
          return true;
        });
    ASSERT_TRUE(st.ok()) << name << ": " << st.ToString() << "\n" << sql;
    SCOPED_TRACE(name);
    check->second(rows);
  }
  {
    // live_at_time names its run: a second run holding the same module adds no rows to its answer.
    const std::string again = tmp / "nightly-2026-11-02";
    testing::MakeSeedRun(again);
    store::RunWriter writer(db.value().get());
    ingest::DumpIngester ingester(&writer);
    ASSERT_TRUE(ingester.Ingest(again, {}).ok());
  }
  for (const auto& [name, sql] : blocks) {
    if (name != "live_at_time") continue;
    int64_t rows = 0;
    ASSERT_TRUE(store::RunReadOnlySql(*db.value(), sql, store::SqlLimits{}, [](const std::vector<store::SqlColumn>&) {},
                                      [&](const std::vector<store::SqlValue>&) {
                                        ++rows;
                                        return true;
                                      })
                    .ok());
    EXPECT_EQ(rows, LiveAt(seed000, 6)) << "live_at_time with two runs holding the module";
  }
  if (corpus) {
    // What the changed_modules query leaves out: every module of run 22 matched, three of them recompiled.
    Rows rows;
    ASSERT_TRUE(store::RunReadOnlySql(*db.value(),
                                      "SELECT COUNT(*), SUM(same_program = 0) FROM module_matches "
                                      "WHERE run_name_a = '21_lorrax_scan_C' AND run_name_b = '22_lorrax_scan_cached_C'",
                                      store::SqlLimits{}, [](const std::vector<store::SqlColumn>&) {},
                                      [&](const std::vector<store::SqlValue>& row) {
                                        rows.push_back(row);
                                        return true;
                                      })
                    .ok());
    EXPECT_EQ(Int(rows[0][0]), 493);
    EXPECT_EQ(Int(rows[0][1]), 3);
  }
}

}  // namespace
}  // namespace xladb
