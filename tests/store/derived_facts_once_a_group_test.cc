// A module's derived facts (store/facts/module_facts.h) are computed once a group, from its files' facts
// merged (MergeLaterFile), not once a file (RunWriter). The result must be what one computation a file, in
// file order, leaves: each fixture folder here (split buffer assignments, 2020 placeholder names renamed by
// their HLO text, before/after texts and their shardings, memory reports, bundle profiles, OOM reports,
// truncated and odd files) is ingested once with every file committed alone (GroupCommit{0, 0}) and once in
// one group, and every derived table and column must come out the same.
#include <gtest/gtest.h>

#include <filesystem>
#include <string>

#include "store/backend/database.h"
#include "store/facts/module_facts.h"
#include "store/write/run_writer.h"
#include "tests/store/sql_rows.h"
#include "tests/store/test_dirs.h"
#include "tests/store/test_ingest.h"
#include "tests/store/writer_specs.h"

namespace xladb {
namespace {

// What the derived facts write, whole rows in key order.
constexpr const char* kDerivedQueries[] = {
    "SELECT * FROM module_summary ORDER BY module_id",
    "SELECT * FROM modules ORDER BY module_id",
    "SELECT * FROM module_memory_spaces ORDER BY module_id, color",
    "SELECT * FROM kernel_spill_summary ORDER BY module_id, kernel",
    "SELECT run_id, name, file_count, ingested_file_count, error_file_count, module_count FROM runs "
    "ORDER BY run_id",
};

TEST(DerivedFactsOnceAGroup, LeaveWhatOneComputationAFileLeaves) {
  testing::TempDir dir;
  auto one_a_file = store::Database::Open(dir / "one_a_file.db");
  auto one_a_group = store::Database::Open(dir / "one_a_group.db");
  ASSERT_TRUE(one_a_file.ok() && one_a_group.ok());
  for (const char* folder : {"buffer_assignment", "tf_2020", "hlo_module", "memory_report", "tpu_utilization",
                             "merged_texts", "oom_report", "peaks", "gate", "history"}) {
    SCOPED_TRACE(folder);
    const std::string path = std::string(XLADB_FIXTURE_DIR) + "/" + folder;
    ingest::IngestOptions options;
    options.time_us = 1;
    auto alone = testing::IngestRun(**one_a_file, path, folder, options, store::GroupCommit{0, 0});
    ASSERT_TRUE(alone.ok()) << alone.status().ToString();
    auto grouped = testing::IngestRun(**one_a_group, path, folder, options,
                                      store::GroupCommit{3600, int64_t{1} << 40});  // one group
    ASSERT_TRUE(grouped.ok()) << grouped.status().ToString();
  }
  for (const char* query : kDerivedQueries) {
    SCOPED_TRACE(query);
    const std::string expected = testing::Rows((*one_a_file)->connection(), query);
    EXPECT_EQ(testing::Rows((*one_a_group)->connection(), query), expected);
  }
  const int64_t modules = std::stoll(testing::Rows((*one_a_group)->connection(),
                                                  "SELECT COUNT(*) FROM module_summary WHERE value_count > 0"));
  EXPECT_GT(modules, 20);  // the comparison covers real work, not two empty stores
}

// A file that writes only figures of its module (a memory-usage report, in a group after the one that stored
// its buffer assignment) updates the module's summary without reading its rows again: the padded live peaks
// the buffer assignment's group computed stay as they were.
TEST(DerivedFactsOnceAGroup, AFileOfFiguresOnlyKeepsItsModulesPaddedPeaks) {
  testing::TempDir dir;
  const std::string fixtures = XLADB_FIXTURE_DIR;
  const std::string stem = "module_0009.jit_peaks.after_optimizations";
  std::filesystem::create_directories(dir / "run");
  std::filesystem::copy_file(fixtures + "/peaks/" + stem + "-buffer-assignment.txt",
                             dir / ("run/" + stem + "-buffer-assignment.txt"));
  std::filesystem::copy_file(fixtures + "/memory_report/v2_report.txt",
                             dir / ("run/" + stem + "-memory-usage-report.txt"));
  auto both = store::Database::Open(dir / "both.db");
  ASSERT_TRUE(both.ok()) << both.status().ToString();
  auto alone = testing::IngestRun(**both, dir / "run", "nightly", {}, store::GroupCommit{0, 0});  // a group a file
  ASSERT_TRUE(alone.ok()) << alone.status().ToString();
  ASSERT_EQ(testing::Rows((*both)->connection(), "SELECT kind, verdict FROM dump_files ORDER BY file_id"),
            "buffer_assignment|ingested\nmemory_usage_report|ingested\n");

  std::filesystem::remove(dir / ("run/" + stem + "-memory-usage-report.txt"));
  auto ba_only = store::Database::Open(dir / "ba_only.db");
  ASSERT_TRUE(ba_only.ok()) << ba_only.status().ToString();
  ASSERT_TRUE(testing::IngestRun(**ba_only, dir / "run", "nightly", {}).ok());

  const char* peaks = "SELECT live_peak_padded_bytes, live_peak_padded_time, color0_total_bytes FROM module_summary";
  const std::string expected = testing::Rows((*ba_only)->connection(), peaks);
  ASSERT_EQ(expected.find("NULL"), std::string::npos) << "the buffer assignment gives no padded peak: " << expected;
  EXPECT_EQ(testing::Rows((*both)->connection(), peaks), expected);
}

// The merge itself, on what real files do not print twice: a later file's printed figure or fingerprint
// replaces the earlier one (as its COALESCE would, a file at a time), one it does not print leaves it, the
// value fingerprint is the last buffer assignment's, and a change in any file is a change.
TEST(DerivedFactsOnceAGroup, ALaterFileReplacesWhatItPrintsAndKeepsWhatItDoesNot) {
  store::FileFacts merged;
  merged.total_bytes = 100;
  merged.peak_time = 7;
  merged.saw_allocated_values = true;
  merged.value_fingerprint = 11;
  merged.rows_changed = true;
  store::FileFacts later;
  later.total_bytes = 200;
  later.schedule_length = 30;
  later.hlo_fingerprint = 0xabc;
  later.counters_changed = true;
  store::MergeLaterFile(merged, later);
  EXPECT_EQ(merged.total_bytes, 200);
  EXPECT_EQ(merged.peak_time, 7);
  EXPECT_EQ(merged.schedule_length, 30);
  EXPECT_FALSE(merged.stack_peak.has_value());
  EXPECT_EQ(merged.hlo_fingerprint, 0xabcu);
  EXPECT_TRUE(merged.saw_allocated_values);
  EXPECT_EQ(merged.value_fingerprint, 11u);
  EXPECT_TRUE(merged.rows_changed);
  EXPECT_TRUE(merged.counters_changed);
  EXPECT_FALSE(merged.entry_sharding_changed);
  store::FileFacts values_again;
  values_again.saw_allocated_values = true;
  values_again.value_fingerprint = 22;
  values_again.entry_sharding_changed = true;
  store::MergeLaterFile(merged, values_again);
  EXPECT_EQ(merged.value_fingerprint, 22u);
  EXPECT_EQ(merged.total_bytes, 200);
  EXPECT_TRUE(merged.rows_changed);
  EXPECT_TRUE(merged.entry_sharding_changed);
}

// The module header of an HLO text (hlo_entry_sharding, hlo_entry_signature) is written with the group's
// derived facts, from the headers of the group's files of the module merged: what one update a file, in file
// order, leaves (the later file's sharding; its signature, or the earlier one when it prints none).
TEST(DerivedFactsOnceAGroup, TwoHeadersOfOneModuleLeaveWhatAnUpdateAFileLeaves) {
  ingest::HloModuleRecord sharded;
  sharded.name = "jit_f";
  sharded.entry_computation_layout = "(f32[8]{0})->f32[8]{0}";
  sharded.entry_sharding = "({devices=[2]0,1}) -> {replicated}";
  ingest::HloModuleRecord bare;  // prints neither a layout nor a sharding
  bare.name = "jit_f";
  ingest::HloModuleRecord other;
  other.name = "jit_f";
  other.entry_computation_layout = "(s32[4]{0})->s32[]";
  other.entry_sharding = "({maximal device=1}) -> {maximal device=1}";
  // Module jit_f: the sharded header, then the bare one; module jit_g (its files' names say so): the sharded
  // header, then the other.
  const std::pair<const char*, std::vector<const ingest::HloModuleRecord*>> modules[] = {
      {"jit_f", {&sharded, &bare}}, {"jit_g", {&sharded, &other}}};
  constexpr const char* kHeaders =
      "SELECT name, hlo_entry_sharding, COALESCE(hlo_entry_signature, 'NULL'), entry_sharding, identity_key "
      "FROM modules ORDER BY name";
  testing::TempDir dir;
  std::string rows_of[2];
  for (const bool one_group : {false, true}) {
    SCOPED_TRACE(one_group ? "one group" : "a group a file");
    auto db = store::Database::Open(dir / (one_group ? "group.db" : "file.db"));
    ASSERT_TRUE(db.ok()) << db.status().ToString();
    store::RunWriter writer(db->get(), one_group ? store::GroupCommit{3600, int64_t{1} << 40}
                                                 : store::GroupCommit{0, 0});
    auto run = writer.BeginRun(testing::RunNamed("nightly"));
    ASSERT_TRUE(run.ok()) << run.status().ToString();
    int file = 0;
    for (const auto& [name, headers] : modules) {
      for (const ingest::HloModuleRecord* header : headers) {
        ++file;
        auto sink = writer.BeginFile(testing::ModuleFileOf(*run, "f" + std::to_string(file) + ".txt", "hlo_module",
                                                           std::to_string(file), name));
        ASSERT_TRUE(sink.ok() && *sink != nullptr);
        ingest::HloModuleRecord record = *header;
        (*sink)->OnHloModule(std::move(record));
        ASSERT_TRUE(writer.CommitFile({ingest::FileVerdict::kIngested, "", 1, 0}).ok());
      }
    }
    ASSERT_TRUE(writer.FinishRun(*run, -1).ok());
    rows_of[one_group] = testing::Rows((*db)->connection(), kHeaders);
  }
  EXPECT_EQ(rows_of[true], rows_of[false]);
  // From the records above: jit_f keeps the first signature with the bare header's (empty) sharding; jit_g
  // takes the other header whole.
  const std::string f_row = rows_of[true].substr(0, rows_of[true].find('\n'));
  const std::string g_row = rows_of[true].substr(rows_of[true].find('\n') + 1);
  EXPECT_TRUE(f_row.starts_with("jit_f||(f32[8]) -> f32[8]||")) << f_row;
  EXPECT_TRUE(g_row.starts_with("jit_g|({maximal device=1}) -> {maximal device=1}|(s32[4]) -> s32[]|")) << g_row;
}

}  // namespace
}  // namespace xladb
