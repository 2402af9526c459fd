// store/admin/run_lifecycle.h: deleting a run leaves exactly what ingesting the other runs alone leaves (every
// table counted, interned texts included), and labels change in place.
#include "store/sqlite/sqlite_connection.h"
#include "store/admin/run_lifecycle.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <map>
#include <tuple>

#include "ingest/dump_ingester.h"
#include "store/compare/check_run.h"
#include "store/compare/module_trend.h"
#include "store/query/queries.h"
#include "tests/store/test_dirs.h"
#include "tests/store/test_ingest.h"

namespace xladb {
namespace {

using testing::MakeSeedRun;
using testing::ReadFile;
using testing::SeedFile;
using testing::TempDir;
using testing::WriteFile;

using testing::IngestRun;

void Ingest(store::Database& db, const std::string& folder, const std::string& run) {
  auto summary = IngestRun(db, folder, run);
  ASSERT_TRUE(summary.ok()) << summary.status().ToString();
  ASSERT_TRUE(summary->errors.empty()) << summary->errors[0].path << ": " << summary->errors[0].reason;
}

// Rows of every table of the file (sqlite_master), by table name; not store_counters, which counts what was
// done to the store (a removal of interned rows), not what it holds.
std::map<std::string, int64_t> TableCounts(store::Database& db) {
  std::map<std::string, int64_t> counts;
  SQLite::Statement tables(SqliteOf(db), "SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite_%' "
                                         "AND name <> 'store_counters'");
  while (tables.executeStep()) {
    const std::string name = tables.getColumn(0).getString();
    counts[name] = SqliteOf(db).execAndGet("SELECT COUNT(*) FROM \"" + name + "\"").getInt64();
  }
  return counts;
}

class RunLifecycleTest : public ::testing::Test {
 protected:
  void SetUp() override {
    // Run A: the seed folder and the report fixture's base. Run B: the seed folder again (sharing A's shapes
    // and texts), with the report fixture's head and the gate fixture's head (texts of its own).
    MakeSeedRun(tmp_ / "a");
    MakeSeedRun(tmp_ / "b");
    const std::string fixtures = XLADB_FIXTURE_DIR;
    const std::string mlp = "module_0007.jit_mlp.after_optimizations-buffer-assignment.txt";
    WriteFile(tmp_ / ("a/" + mlp), ReadFile(fixtures + "/report/base/" + mlp));
    WriteFile(tmp_ / ("b/" + mlp), ReadFile(fixtures + "/report/head/" + mlp));
    const std::string step = "module_0001.jit_step.after_optimizations-buffer-assignment.txt";
    WriteFile(tmp_ / ("b/gate/" + step), ReadFile(fixtures + "/gate/head/" + step));
    // jit_step's HLO text prints add.3 otherwise than its buffer assignment's `from instruction:` line (with
    // metadata), as XLA's files of one module do: the merge gives the instruction another whole text.
    const std::string hlo = "module_0001.jit_step.after_optimizations.txt";
    WriteFile(tmp_ / ("b/gate/" + hlo), ReadFile(fixtures + "/merged_texts/" + hlo));
  }
  std::unique_ptr<store::Database> Open(const std::string& name) {
    auto db = store::Database::Open(tmp_ / name);
    EXPECT_TRUE(db.ok()) << db.status().ToString();
    return std::move(db.value());
  }
  TempDir tmp_;
};

TEST_F(RunLifecycleTest, DeletingARunLeavesWhatTheOtherRunAloneLeaves) {
  auto alone = Open("alone.db");
  Ingest(*alone, tmp_ / "a", "a");
  auto both = Open("both.db");
  Ingest(*both, tmp_ / "a", "a");
  Ingest(*both, tmp_ / "b", "b");
  const auto before = TableCounts(*both);
  auto deleted = store::DeleteRun(*both, "b");
  ASSERT_TRUE(deleted.ok()) << deleted.status().ToString();
  EXPECT_EQ(deleted->files, 9);    // the seed folder's 6 files, jit_mlp and jit_step's two
  EXPECT_EQ(deleted->modules, before.at("modules") - TableCounts(*alone).at("modules"));
  const auto after = TableCounts(*both);
  EXPECT_EQ(after, TableCounts(*alone));
  int64_t removed = 0;
  for (const auto& [table, rows] : before) removed += rows - after.at(table);
  EXPECT_EQ(deleted->rows, removed);
  // Run A answers as before; B is gone.
  EXPECT_TRUE(store::GetRun(*both, "a").ok());
  EXPECT_EQ(store::GetRun(*both, "b").status().code(), Status::Code::kNotFound);
  EXPECT_EQ(store::DeleteRun(*both, "b").status().code(), Status::Code::kNotFound);
  // The file can take run B again, whole.
  Ingest(*both, tmp_ / "b", "b");
  EXPECT_EQ(TableCounts(*both), before);
}

// Texts no instruction refers to (none should be: each was stored for one).
int64_t UnreferencedTexts(store::Database& db) {
  return SqliteOf(db)
      .execAndGet("SELECT COUNT(*) FROM long_texts WHERE text_id NOT IN "
                  "(SELECT text_id FROM instructions WHERE text_id IS NOT NULL)")
      .getInt64();
}

// Two files of one module print an instruction differently: the instruction keeps one text, and the other
// is not left behind (it was: a merge that replaced a text orphaned the old one, which delete then missed).
TEST_F(RunLifecycleTest, AMergeThatReplacesAnInstructionsTextLeavesNoTextBehind) {
  auto db = Open("merge.db");
  Ingest(*db, tmp_ / "b", "b");
  EXPECT_EQ(UnreferencedTexts(*db), 0);
  const std::string text = SqliteOf(*db)
                               .execAndGet("SELECT t.text FROM instructions i JOIN long_text_details t USING (text_id) "
                                           "WHERE i.name = 'add.3'")
                               .getString();
  EXPECT_TRUE(text == "%add.3 = f32[256]{0} add(f32[256]{0} %a, f32[256]{0} %b)" ||
              text == "%add.3 = f32[256]{0} add(f32[256]{0} %a, f32[256]{0} %b), metadata={op_name=\"jit(step)/add\"}")
      << "the text kept: " << text;
  // The replaced text is gone, the one kept stays, and a text other runs share is not touched.
  Ingest(*db, tmp_ / "a", "a");
  EXPECT_EQ(UnreferencedTexts(*db), 0);
}

// A file replaced by other content (the same path, a new text for an instruction): the old version's texts
// do not stay behind; the store holds what a fresh ingest of the new folder holds.
TEST_F(RunLifecycleTest, ReplacingAFileLeavesNoTextBehind) {
  auto db = Open("replaced.db");
  Ingest(*db, tmp_ / "b", "b");
  const std::string hlo = tmp_ / "b/gate/module_0001.jit_step.after_optimizations.txt";
  std::string text = ReadFile(hlo);
  text.replace(text.find("jit(step)/add"), 13, "jit(step)/sum");
  WriteFile(hlo, text);
  Ingest(*db, tmp_ / "b", "b");
  EXPECT_EQ(UnreferencedTexts(*db), 0);
  auto fresh = Open("fresh.db");
  Ingest(*fresh, tmp_ / "b", "b");
  EXPECT_EQ(TableCounts(*db).at("long_texts"), TableCounts(*fresh).at("long_texts"));
}

// A text two runs share keeps the shape, op_name and source path cut out of it (store/facts/long_text.h) when a
// run is deleted, even where no instruction left refers to them any more (here the instruction of the run that
// stays was given another shape, op_name and source by hand, as a later file could).
TEST_F(RunLifecycleTest, DeletingARunKeepsThePartsOfTheTextsThatStay) {
  // add.3's shape (with its tiling) is its own: no other instruction refers to it.
  const std::string add = "%add.3 = f32[256]{0:T(256)} add(f32[256]{0} %a, f32[256]{0} %a), metadata={op_name=\"jit(step)/add\" "
                          "source_file=\"/src/model.py\" source_line=7}";
  for (const char* run : {"a", "b"}) {
    WriteFile(tmp_ / (std::string("texts/") + run + "/module_0001.jit_step.after_optimizations.txt"),
              "HloModule jit_step\n\nENTRY %main (a: f32[256]) -> f32[256] {\n  %a = f32[256]{0} parameter(0)\n  ROOT " +
                  add + "\n}\n");
  }
  auto db = Open("texts.db");
  Ingest(*db, tmp_ / "texts/a", "a");
  Ingest(*db, tmp_ / "texts/b", "b");
  SQLite::Database& sql = SqliteOf(*db);
  sql.exec("INSERT INTO names(hash, text) VALUES (0, 'renamed'); INSERT INTO shapes(text) VALUES ('f32[1]{0}'); "
           "INSERT INTO source_files(path) VALUES ('/src/other.py')");
  sql.exec("UPDATE instructions SET op_name_id = (SELECT name_id FROM names WHERE text = 'renamed'), "
           "shape_id = (SELECT shape_id FROM shapes WHERE text = 'f32[1]{0}'), "
           "source_file_id = (SELECT source_file_id FROM source_files WHERE path = '/src/other.py') "
           "WHERE name = 'add.3' AND module_id IN (SELECT module_id FROM modules WHERE run_id = "
           "(SELECT run_id FROM runs WHERE name = 'a'))");
  ASSERT_TRUE(store::DeleteRun(*db, "b").ok());
  EXPECT_EQ(sql.execAndGet("SELECT text FROM instruction_details WHERE name = 'add.3'").getString(), add);
}

// The same on the two real runs of the corpus (whole run folders), when the corpus is here.
TEST_F(RunLifecycleTest, DeletingACorpusRunLeavesWhatTheOtherRunAloneLeaves) {
  const std::string runs = testing::CorpusDir() + "/runs";
  if (!std::filesystem::is_directory(runs + "/21_lorrax_scan_C")) {
    GTEST_SKIP() << "the corpus is absent (" << runs << "): its whole run folders are needed";
  }
  auto alone = Open("alone.db");
  Ingest(*alone, runs + "/21_lorrax_scan_C/xla_dump", "a");
  EXPECT_EQ(UnreferencedTexts(*alone), 0);
  auto both = Open("both.db");
  Ingest(*both, runs + "/21_lorrax_scan_C/xla_dump", "a");
  Ingest(*both, runs + "/22_lorrax_scan_cached_C/xla_dump", "b");
  EXPECT_EQ(UnreferencedTexts(*both), 0);
  ASSERT_TRUE(store::DeleteRun(*both, "b").ok());
  EXPECT_EQ(TableCounts(*both), TableCounts(*alone));
}

TEST_F(RunLifecycleTest, LabelsAreSetReplacedAndRemoved) {
  auto db = Open("x.db");
  Ingest(*db, tmp_ / "a", "a");
  ASSERT_TRUE(store::RelabelRun(*db, "a", {{"branch", "main"}, {"commit", "abc"}}, {}).ok());
  ASSERT_TRUE(store::RelabelRun(*db, "a", {{"commit", "def"}}, {"branch"}).ok());
  auto run = store::GetRun(*db, "a");
  ASSERT_TRUE(run.ok());
  EXPECT_EQ(run->labels, (store::Labels{{"commit", "def"}}));
  EXPECT_EQ(store::RelabelRun(*db, "nope", {{"k", "v"}}, {}).code(), Status::Code::kNotFound);
  EXPECT_EQ(store::RelabelRun(*db, "a", {{"", "v"}}, {}).code(), Status::Code::kInvalidArgument);
}

// Prune drops the detail of old runs without a kept label, and the gate and trends answer as before: the
// verdict and every metric of `check b --baseline a`, and the peak-memory trend of every module.
TEST_F(RunLifecycleTest, PruneKeepsGateAndTrendAnswers) {
  auto db = Open("x.db");
  ingest::IngestOptions old_run, kept_run, new_run;
  const int64_t day_us = int64_t{86400} * 1000000, now_us = int64_t{1793491200} * 1000000;  // 2026-11-01
  for (auto& [options, name, days, labels] :
       std::vector<std::tuple<ingest::IngestOptions*, std::string, int, store::Labels>>{
           {&old_run, "a", 40, {}}, {&kept_run, "kept", 35, {{"release", "yes"}}}, {&new_run, "b", 1, {}}}) {
    options->run_name = name;
    options->time_us = now_us - days * day_us;
    options->labels = labels;
  }
  for (auto* o : {&old_run, &kept_run, &new_run}) {
    auto s = IngestRun(*db, o == &new_run ? tmp_ / "b" : tmp_ / "a", o->run_name, *o);
    ASSERT_TRUE(s.ok()) << s.status().ToString();
  }
  const auto answers = [&] {
    std::string out;
    store::CheckOptions check;
    check.run = "b";
    check.baseline = "a";
    auto r = store::CheckRun(*db, check);
    EXPECT_TRUE(r.ok()) << r.status().ToString();
    out += r->reason + "\n";
    for (const auto& m : r->modules) {
      out += m.module + " " + std::to_string(static_cast<int>(m.status));
      for (const auto& d : m.metrics) out += " " + d.metric + "=" + std::to_string(d.baseline) + "/" + std::to_string(d.current);
      out += "\n";
    }
    store::TrendQuery trend;
    trend.module = "*";
    for (const char* metric : {"peak_bytes", "live_peak_padded_bytes", "total_bytes", "temp_bytes"}) {
      trend.metric = metric;
      auto points = store::PeakMemoryTrend(*db, trend);
      EXPECT_TRUE(points.ok()) << points.status().ToString();
      for (const auto& p : *points) out += p.run_name + " " + p.module_name + " " + std::to_string(p.value) + "\n";
    }
    return out;
  };
  const std::string before = answers();
  const int64_t values_of_b = SqliteOf(*db).execAndGet(
      "SELECT COUNT(*) FROM buffer_values v JOIN modules m USING (module_id) JOIN runs r USING (run_id) "
      "WHERE r.name = 'b'").getInt64();
  ASSERT_GT(values_of_b, 0);

  store::PruneOptions options{30, {{"release", "yes"}}, now_us};
  auto pruned = store::PruneDetail(*db, options);
  ASSERT_TRUE(pruned.ok()) << pruned.status().ToString();
  EXPECT_EQ(pruned->runs, 1);  // "a": 40 days old; "kept" has the label, "b" is 1 day old
  EXPECT_GT(pruned->rows, 0);
  EXPECT_LT(pruned->bytes_after, pruned->bytes_before);
  EXPECT_EQ(answers(), before);
  const auto detail_of = [&](const char* run) {
    return SqliteOf(*db).execAndGet(std::string("SELECT (SELECT COUNT(*) FROM buffer_values v JOIN modules m USING "
                                            "(module_id) JOIN runs r USING (run_id) WHERE r.name = '") + run +
                                "') + (SELECT COUNT(*) FROM instructions i JOIN modules m USING (module_id) JOIN "
                                "runs r USING (run_id) WHERE r.name = '" + run + "')").getInt64();
  };
  EXPECT_EQ(detail_of("a"), 0);
  EXPECT_GT(detail_of("kept"), 0);
  EXPECT_GT(detail_of("b"), 0);
  EXPECT_GT(SqliteOf(*db).execAndGet("SELECT COUNT(*) FROM peak_buffers p JOIN modules m USING (module_id) JOIN runs r "
                                 "USING (run_id) WHERE r.name = 'a'").getInt64(), 0);
  EXPECT_EQ(SqliteOf(*db).execAndGet("PRAGMA integrity_check").getString(), "ok");
  // Pruning again finds nothing; a pruned run takes no more files.
  EXPECT_EQ(store::PruneDetail(*db, options)->runs, 0);
  auto again = IngestRun(*db, tmp_ / "a", "a", old_run);
  EXPECT_EQ(again.status().code(), Status::Code::kFailedPrecondition);
  EXPECT_NE(again.status().message().find("pruned"), std::string::npos);
}

// Every row of the store, spelled out without surrogate ids (they differ between files), sorted.
std::vector<std::string> Contents(store::Database& db) {
  std::vector<std::string> rows;
  for (const char* q :
       {"SELECT 'i', name, computation, opcode, shape, op_type, op_name, source_file, source_line, fusion_kind, "
        "custom_call_target, is_root, sequence_index, text FROM instruction_details",
        "SELECT 'v', value_id, instruction, shape_index, is_phi, color, allocation_index, offset_bytes, size_bytes, "
        "positions, uses, uses_state FROM buffer_values",
        "SELECT 'l', value_id, live_start, live_end FROM buffer_live_ranges", "SELECT 's', time, instruction FROM schedule",
        "SELECT 'a', allocation_index, size_bytes, color, is_parameter, is_output FROM allocations",
        "SELECT 'p', ordinal, instruction, shape_index, logical_bytes FROM peak_buffers",
        "SELECT 'c', name, is_entry, instruction_count FROM computations",
        "SELECT 'm', total_bytes, peak_bytes, allocation_count, value_count, live_range_count, instruction_count, "
        "live_peak_padded_bytes FROM module_summary"}) {
    SQLite::Statement st(SqliteOf(db), q);
    while (st.executeStep()) {
      std::string row;
      for (int c = 0; c < st.getColumnCount(); ++c) row += (st.getColumn(c).isNull() ? "NULL" : st.getColumn(c).getString()) + "|";
      rows.push_back(row);
    }
  }
  std::sort(rows.begin(), rows.end());
  return rows;
}

// A module written by two files (a buffer assignment and the HLO text of the same module): replacing the file
// that wrote a merged row first must not take the other file's part with it. The store then holds what a clean
// ingest of the folder as it is now holds, row for row.
// The summary on the run's row (store/facts/run_summary.h) follows files that are added, replaced by an unreadable
// version, and runs deleted beside it.
TEST_F(RunLifecycleTest, RunSummaryFollowsEveryChange) {
  auto db = Open("x.db");
  Ingest(*db, tmp_ / "a", "a");
  Ingest(*db, tmp_ / "b", "b");
  const auto summary = [&](const std::string& run) {
    auto info = store::GetRun(*db, run);
    EXPECT_TRUE(info.ok()) << info.status().ToString();
    return std::make_tuple(info->file_count, info->ingested_file_count, info->error_file_count, info->module_count);
  };
  // MakeSeedRun's six files (five read, the thunk sequence not; three buffer assignments) and jit_mlp's.
  EXPECT_EQ(summary("a"), std::make_tuple(7, 6, 0, 4));
  // Run b also has the gate fixture's jit_step in gate/: its buffer assignment and HLO text, one module.
  EXPECT_EQ(summary("b"), std::make_tuple(9, 8, 0, 5));

  // jit_train_step's buffer assignment becomes unreadable (NUL bytes under a dump name): an error, and the
  // module has no buffer assignment any more. A new file is one more file.
  WriteFile(tmp_ / "a/module_0002.jit_train_step.after_optimizations-buffer-assignment.txt", std::string(4096, '\0'));
  WriteFile(tmp_ / "a/notes.txt", "not a dump\n");
  auto again = IngestRun(*db, tmp_ / "a", "a");
  ASSERT_TRUE(again.ok()) << again.status().ToString();
  EXPECT_EQ(summary("a"), std::make_tuple(8, 5, 1, 3));

  auto deleted = store::DeleteRun(*db, "b");
  ASSERT_TRUE(deleted.ok()) << deleted.status().ToString();
  EXPECT_EQ(summary("a"), std::make_tuple(8, 5, 1, 3));
  auto page = store::ListRuns(*db, store::RunFilter{});
  ASSERT_TRUE(page.ok());
  ASSERT_EQ(page->runs.size(), 1u);
  EXPECT_EQ(page->runs[0].error_file_count, 1);
}

TEST_F(RunLifecycleTest, ReplacingOneOfAModulesFilesKeepsWhatItsSiblingWrote) {
  const std::string run = tmp_ / "split";
  const std::string ba = run + "/" + testing::kSeed000FileName;
  WriteFile(ba, ReadFile(SeedFile("000")));
  WriteFile(run + "/module_0001.jit_splash_attention_kernel.after_optimizations.txt", ReadFile(SeedFile("003")));
  auto db = Open("x.db");
  Ingest(*db, run, "split");
  WriteFile(ba, ReadFile(SeedFile("000")) + "\n");  // new content: the file is replaced
  {
    auto again = IngestRun(*db, run, "split");
    ASSERT_TRUE(again.ok()) << again.status().ToString();
    EXPECT_EQ(again->files_by_verdict["ingested"], 1);  // the buffer assignment
    EXPECT_EQ(again->files_by_verdict["unchanged"], 0);
    EXPECT_EQ(again->files_reread, 1);  // the HLO text, read again to rebuild the module
    EXPECT_EQ(again->files, 2);
  }
  auto clean = Open("clean.db");
  Ingest(*clean, run, "split");
  const auto rebuilt = Contents(*db), expected = Contents(*clean);
  EXPECT_GT(expected.size(), 100u);
  EXPECT_EQ(rebuilt, expected);
  EXPECT_EQ(TableCounts(*db), TableCounts(*clean));

  // Now the file that sorts last (the walk has passed its sibling): a second pass reads the sibling again.
  const std::string hlo = run + "/module_0001.jit_splash_attention_kernel.after_optimizations.txt";
  WriteFile(hlo, ReadFile(SeedFile("003")) + "\n");
  {
    auto again = IngestRun(*db, run, "split");
    ASSERT_TRUE(again.ok()) << again.status().ToString();
    EXPECT_EQ(again->files_by_verdict["ingested"], 1);
    EXPECT_EQ(again->files_by_verdict["unchanged"], 1);  // the buffer assignment, in the first pass
    EXPECT_EQ(again->files_reread, 2);                   // both, in walk order, in the second
  }
  auto clean2 = Open("clean2.db");
  Ingest(*clean2, run, "split");
  EXPECT_EQ(Contents(*db), Contents(*clean2));
  EXPECT_EQ(TableCounts(*db), TableCounts(*clean2));
}

}  // namespace
}  // namespace xladb
