#include "ingest/formats/memory_report/memory_report_parser.h"

#include <cmath>
#include <filesystem>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "tests/ingest/vector_sink.h"

namespace xladb::ingest {
namespace {

using Section = MemoryReportRowRecord::Section;
using Severity = IssueRecord::Severity;

std::string Fixture(const std::string& name) {
  return ReadTestFile(std::string(XLADB_FIXTURE_DIR) + "/memory_report/" + name);
}

std::vector<MemoryReportRowRecord> RowsOf(const VectorSink& sink, Section section) {
  std::vector<MemoryReportRowRecord> rows;
  for (const auto& row : sink.report_rows) {
    if (row.section == section) rows.push_back(row);
  }
  return rows;
}

TEST(MemoryReportParser, V1FixtureGivesTotalAllocationRowsAndTables) {
  const std::string text = Fixture("v1_report.txt");
  ASSERT_FALSE(text.empty());
  VectorSink sink;
  MemoryReportParser parser(&sink);
  ASSERT_TRUE(ParseText(parser, text).ok());
  EXPECT_EQ(parser.unknown_lines(), 0);
  EXPECT_TRUE(sink.issues.empty()) << sink.issues.front().reason;

  ASSERT_EQ(sink.report_totals.size(), 1u);
  EXPECT_EQ(sink.report_totals[0].memory_space, -1);
  EXPECT_EQ(sink.report_totals[0].total_bytes, 3150876);

  const auto by_size = RowsOf(sink, Section::kAllocationsBySize);
  ASSERT_EQ(by_size.size(), 6u);
  EXPECT_EQ(by_size[0].ordinal, 0);
  EXPECT_EQ(by_size[0].allocation_index, 5);
  EXPECT_EQ(by_size[0].cumulative_bytes_approx, 2097152);
  EXPECT_EQ(by_size[0].cumulative_percent, 67);
  EXPECT_EQ(by_size[0].remaining_bytes_approx, 1048576);
  EXPECT_EQ(by_size[0].size_bytes_approx, 2097152);
  EXPECT_EQ(by_size[0].shapes, "allocation 5: size 2.00MiB, color 1, preallocated-temp:");
  EXPECT_EQ(by_size[0].offset_bytes, -1);
  EXPECT_EQ(by_size[2].allocation_index, 0);
  EXPECT_EQ(by_size[2].remaining_bytes_approx, 28);
  EXPECT_EQ(by_size[2].size_bytes_approx, 4096);
  EXPECT_EQ(by_size[5].allocation_index, 3);
  EXPECT_EQ(by_size[5].remaining_bytes_approx, 0);
  EXPECT_EQ(by_size[5].cumulative_percent, 100);

  // Tables: allocation 5 (2 rows), 2 (3 rows), 1 (1 row), 4 (a table with no rows); 0 and 3 are headers only.
  const auto values = RowsOf(sink, Section::kAllocationValues);
  ASSERT_EQ(values.size(), 6u);
  const std::vector<int64_t> allocation = {5, 5, 2, 2, 2, 1};
  const std::vector<int64_t> table = {0, 0, 1, 1, 1, 2};
  for (size_t i = 0; i < values.size(); ++i) {
    EXPECT_EQ(values[i].ordinal, static_cast<int64_t>(6 + i));
    EXPECT_EQ(values[i].allocation_index, allocation[i]) << i;
    EXPECT_EQ(values[i].table_ordinal, table[i]) << i;
    EXPECT_EQ(values[i].memory_space, -1);
    EXPECT_EQ(values[i].remaining_bytes_approx, -1);
  }
  EXPECT_EQ(values[1].offset_bytes, 1048576);
  EXPECT_EQ(values[1].value_count, 2);
  EXPECT_EQ(values[1].shapes, "f32[262144], s32[262144]");
  EXPECT_EQ(values[2].cumulative_bytes_approx, 524288);
  EXPECT_EQ(values[2].cumulative_percent, 50);
  EXPECT_EQ(values[3].shapes, "3\xC3\x97" "f32[131072]");  // UTF-8 U+00D7 kept as printed
  EXPECT_EQ(values[4].size_bytes_approx, 1024);
  EXPECT_EQ(values[4].shapes, "(f32[2], /*index=5*/s32[]), s32[256]");
  EXPECT_EQ(values[5].shapes, "2\xC3\x97(f32[1024], s32[])");
  EXPECT_TRUE(sink.report_omitted.empty());
}

TEST(MemoryReportParser, V1TruncationNotesBecomeOmittedRecords) {
  const std::string text = Fixture("v1_truncated.txt");
  ASSERT_FALSE(text.empty());
  VectorSink sink;
  MemoryReportParser parser(&sink);
  ASSERT_TRUE(ParseText(parser, text).ok());
  EXPECT_EQ(parser.unknown_lines(), 0);
  EXPECT_TRUE(sink.issues.empty()) << sink.issues.front().reason;
  EXPECT_EQ(RowsOf(sink, Section::kAllocationsBySize).size(), 51u);
  EXPECT_EQ(RowsOf(sink, Section::kAllocationValues).size(), 51u);
  ASSERT_EQ(sink.report_omitted.size(), 2u);
  EXPECT_EQ(sink.report_omitted[0].after_ordinal, 50);
  EXPECT_EQ(sink.report_omitted[0].omitted_count, 5);
  EXPECT_EQ(sink.report_omitted[0].threshold_percent, 5);
  EXPECT_FALSE(sink.report_omitted[0].values);
  EXPECT_EQ(sink.report_omitted[1].after_ordinal, 101);
  EXPECT_EQ(sink.report_omitted[1].omitted_count, 9);
  EXPECT_TRUE(sink.report_omitted[1].values);
}

TEST(MemoryReportParser, V2FixtureGroupsTablesByMemorySpace) {
  const std::string text = Fixture("v2_report.txt");
  ASSERT_FALSE(text.empty());
  VectorSink sink;
  MemoryReportParser parser(&sink);
  ASSERT_TRUE(ParseText(parser, text).ok());
  EXPECT_EQ(parser.unknown_lines(), 0);
  EXPECT_TRUE(sink.issues.empty()) << sink.issues.front().reason;

  ASSERT_EQ(sink.report_totals.size(), 2u);
  EXPECT_EQ(sink.report_totals[0].memory_space, 0);
  EXPECT_EQ(sink.report_totals[0].total_bytes, 1053724);
  EXPECT_EQ(sink.report_totals[1].memory_space, 1);
  EXPECT_EQ(sink.report_totals[1].total_bytes, 2097152);

  ASSERT_EQ(sink.report_rows.size(), 8u);
  const std::vector<int32_t> space = {0, 0, 0, 0, 0, 0, 1, 1};
  const std::vector<int64_t> table = {0, 0, 0, 1, 2, 4, 0, 0};  // table 3 (allocation 4) has no rows
  for (size_t i = 0; i < sink.report_rows.size(); ++i) {
    const auto& row = sink.report_rows[i];
    EXPECT_EQ(row.section, Section::kMemorySpace);
    EXPECT_EQ(row.ordinal, static_cast<int64_t>(i));
    EXPECT_EQ(row.allocation_index, -1);
    EXPECT_EQ(row.memory_space, space[i]) << i;
    EXPECT_EQ(row.memory_space_name, space[i] == 0 ? "default" : "vmem");
    EXPECT_EQ(row.table_ordinal, table[i]) << i;
  }
  EXPECT_EQ(sink.report_rows[3].shapes, "f32[1024]");
  EXPECT_EQ(sink.report_rows[3].value_count, 1);
  EXPECT_EQ(sink.report_rows[5].size_bytes_approx, 4);
  EXPECT_EQ(sink.report_rows[7].offset_bytes, 1048576);
  EXPECT_EQ(sink.report_rows[7].cumulative_bytes_approx, 2097152);
}

constexpr std::string_view kV1Head =
    "Total bytes used: 3072 (3.0KiB)\n\nAllocations sorted by size:\n\n"
    "cumulative_size; total_size - cumulative_size; allocation\n"
    "------------------------------------------------------------------------------\n";

TEST(MemoryReportParser, OrderingAndTotalViolationsAreInvariantIssues) {
  std::string text(kV1Head);
  text +=
      "    2.0KiB( 67%);     1.0KiB; allocation 1: size 1.0KiB, preallocated-temp:\n"  // size below the next
      "    1.5KiB( 50%);     1.0KiB; allocation 0: size 2.0KiB, constant:\n"          // cumulative drops
      "\n\nAllocations sorted by size with their values:\n";
  VectorSink sink;
  MemoryReportParser parser(&sink);
  ASSERT_TRUE(ParseText(parser, text).ok());
  EXPECT_EQ(sink.report_rows.size(), 2u);
  // cumulative decreases, percentage decreases, size increases, 1.5KiB + 1.0KiB is not 3072, and the last
  // cumulative is not the total.
  EXPECT_EQ(sink.CountIssues(Severity::kInvariant), 5u);
  bool named = false;
  for (const auto& issue : sink.issues) named |= issue.reason.find("'2.0KiB' to '1.5KiB'") != std::string::npos;
  EXPECT_TRUE(named);
}

TEST(MemoryReportParser, ZeroTotalTablePrintsNanPercentWithoutIssues) {
  std::string text =
      "Memory Space: default (color=0)\nTotal bytes: 0 (0B)\n"
      "  cumulative_size;       size;       offset; used_by_n_values; shapes_list\n"
      "  ------------------------------------------------------------\n"
      "         0B(nan%);         0B;            0;                2; 2\xC3\x97" "f32[0]\n\n\n";
  VectorSink sink;
  MemoryReportParser parser(&sink);
  ASSERT_TRUE(ParseText(parser, text).ok());
  ASSERT_EQ(sink.report_rows.size(), 1u);
  EXPECT_TRUE(std::isnan(sink.report_rows[0].cumulative_percent));
  EXPECT_EQ(sink.report_rows[0].value_count, 2);
  EXPECT_TRUE(sink.issues.empty());
}

TEST(MemoryReportParser, OutOfRangeNumbersAreReportedAndSkipped) {
  std::string text(kV1Head);
  text +=
      "    3.0KiB(100%);         0B; allocation 0: size 3.0KiB, preallocated-temp:\n"
      "\n\nAllocations sorted by size with their values:\nallocation 0: size 3.0KiB, preallocated-temp:\n\n"
      "\tcumulative_size;       size;       offset; used_by_n_values; shapes_list\n"
      "\t------------------------------------------------------------\n"
      "\t   2.0KiB( 67%);     2.0KiB; 99999999999999999999;                1; f32[512]\n"
      "\t   3.0KiB(100%);     1.0KiB;           -8;                1; f32[256]\n"
      "\t   3.0KiB(100%);     1.0KiB;         2048;                1; f32[256]\n\n";
  VectorSink sink;
  MemoryReportParser parser(&sink);
  ASSERT_TRUE(ParseText(parser, text).ok());
  ASSERT_EQ(RowsOf(sink, Section::kAllocationValues).size(), 1u);
  EXPECT_EQ(RowsOf(sink, Section::kAllocationValues)[0].offset_bytes, 2048);
  EXPECT_EQ(sink.CountIssues(Severity::kInvariant), 2u);
  EXPECT_EQ(parser.unknown_lines(), 0);
}

TEST(MemoryReportParser, HugeSizesAreComparedWithoutOverflow) {
  // 7.00EiB + 7.00EiB is past int64: the remaining-size check must report, not overflow.
  const std::string text =
      "Total bytes used: 8070450532247928832 (7.00EiB)\n\nAllocations sorted by size:\n\n"
      "cumulative_size; total_size - cumulative_size; allocation\n"
      "------------------------------------------------------------------------------\n"
      "   7.00EiB(100%);    7.00EiB; allocation 0: size 7.00EiB, preallocated-temp:\n";
  VectorSink sink;
  MemoryReportParser parser(&sink);
  ASSERT_TRUE(ParseText(parser, text).ok());
  ASSERT_EQ(sink.report_rows.size(), 1u);
  EXPECT_EQ(sink.report_rows[0].size_bytes_approx, int64_t{7} << 60);
  ASSERT_EQ(sink.CountIssues(Severity::kInvariant), 1u);  // cumulative + remaining overflows int64
  EXPECT_NE(sink.issues[0].reason.find("'7.00EiB' + remaining '7.00EiB'"), std::string::npos) << sink.issues[0].reason;
}

TEST(MemoryReportParser, UnknownLinesAreCountedNotFatal) {
  std::string text(kV1Head);
  text +=
      "    3.0KiB(100%);         0B; allocation 0: size 3.0KiB, preallocated-temp:\n"
      "something new in the first section\n"
      "\n\nAllocations sorted by size with their values:\nallocation 0: size 3.0KiB, preallocated-temp:\n"
      "Values sorted by size:\n";
  VectorSink sink;
  MemoryReportParser parser(&sink);
  ASSERT_TRUE(ParseText(parser, text).ok());
  EXPECT_EQ(parser.unknown_lines(), 2);
  EXPECT_EQ(sink.CountIssues(Severity::kUnknownLine), 2u);
  EXPECT_EQ(sink.report_rows.size(), 1u);
}

TEST(MemoryReportParser, OtherTextIsAnError) {
  VectorSink sink;
  MemoryReportParser parser(&sink);
  Status status = ParseText(parser, "BufferAssignment:\nallocation 0: size 4, constant:\n");
  EXPECT_EQ(status.code(), Status::Code::kDataLoss);
  EXPECT_EQ(sink.CountIssues(Severity::kError), 1u);
  EXPECT_TRUE(sink.report_rows.empty());
}

TEST(MemoryReportParser, TruncatedV1IsAWarning) {
  std::string text(kV1Head);
  text += "    3.0KiB(100%);         0B; allocation 0: size 3.0KiB, preallocated-temp:\n";
  VectorSink sink;
  MemoryReportParser parser(&sink);
  EXPECT_TRUE(ParseText(parser, text).ok());
  EXPECT_EQ(sink.CountIssues(Severity::kWarning), 1u);
  EXPECT_EQ(sink.CountIssues(Severity::kInvariant), 0u);
}

// ---------------------------------------------------------------------------------------------------
// Real files (skipped when the shared corpus is absent).

std::string CorpusPath(const std::string& relative) { return std::string(XLADB_CORPUS_DIR) + "/" + relative; }

TEST(MemoryReportParser, CorpusCpuReportRowCounts) {
  const std::string path = CorpusPath("public/cpu_fme_m0005_jit__threefry_split__memory-usage-report.txt");
  if (!std::filesystem::exists(path)) GTEST_SKIP() << "corpus not present: " << path;
  VectorSink sink;
  MemoryReportParser parser(&sink);
  ASSERT_TRUE(ParseText(parser, ReadTestFile(path)).ok());
  EXPECT_TRUE(sink.issues.empty());
  ASSERT_EQ(sink.report_totals.size(), 1u);
  EXPECT_EQ(sink.report_totals[0].total_bytes, 1032);
  const auto by_size = RowsOf(sink, Section::kAllocationsBySize);
  ASSERT_EQ(by_size.size(), 8u);
  EXPECT_EQ(by_size[0].allocation_index, 7);
  EXPECT_EQ(by_size[0].size_bytes_approx, 964);
  const auto values = RowsOf(sink, Section::kAllocationValues);
  ASSERT_EQ(values.size(), 17u);
  EXPECT_EQ(values[0].allocation_index, 7);
  EXPECT_EQ(values[0].value_count, 5);
  EXPECT_EQ(values[0].shapes, "5\xC3\x97(s32[], u32[2], u32[2], u32[], u32[], /*index=5*/u32[], u32[4], u32[4])");
  EXPECT_EQ(values[16].allocation_index, 1);
  EXPECT_EQ(values[16].table_ordinal, 1);
  EXPECT_EQ(values[16].value_count, 6);
}

TEST(MemoryReportParser, CorpusGpuReportWithBothTruncationNotes) {
  const std::string path = CorpusPath(
      "public/gpu_lorrax_C_lorrax_bse_bgweqp-profile_b1_rtol1e5_m0039_jit__full_run__memory-usage-report.txt");
  if (!std::filesystem::exists(path)) GTEST_SKIP() << "corpus not present: " << path;
  VectorSink sink;
  MemoryReportParser parser(&sink);
  ASSERT_TRUE(ParseText(parser, ReadTestFile(path)).ok());
  EXPECT_TRUE(sink.issues.empty());
  EXPECT_EQ(sink.report_totals.at(0).total_bytes, 846996975);
  EXPECT_EQ(RowsOf(sink, Section::kAllocationsBySize).size(), 51u);
  const auto values = RowsOf(sink, Section::kAllocationValues);
  ASSERT_EQ(values.size(), 54u);
  EXPECT_EQ(values[0].ordinal, 51);
  EXPECT_EQ(values[0].allocation_index, 116);
  EXPECT_EQ(values[0].cumulative_bytes_approx, 235929600);  // 225.00MiB
  EXPECT_EQ(values[0].offset_bytes, 471859200);
  EXPECT_EQ(values[0].value_count, 9);
  ASSERT_EQ(sink.report_omitted.size(), 2u);
  EXPECT_EQ(sink.report_omitted[0].after_ordinal, 50);
  EXPECT_EQ(sink.report_omitted[0].omitted_count, 66);
  EXPECT_EQ(sink.report_omitted[1].after_ordinal, 101);
  EXPECT_EQ(sink.report_omitted[1].omitted_count, 51);
}

TEST(MemoryReportParser, EveryCorpusReportParsesCleanly) {
  const std::filesystem::path corpus(XLADB_CORPUS_DIR);
  if (!std::filesystem::exists(corpus / "public")) GTEST_SKIP() << "corpus not present: " << corpus;
  std::vector<std::filesystem::path> files;
  for (const auto& entry : std::filesystem::recursive_directory_iterator(corpus)) {
    const std::string name = entry.path().filename().string();
    if (entry.is_regular_file() && name.ends_with("memory-usage-report.txt")) files.push_back(entry.path());
  }
  EXPECT_EQ(files.size(), 275u + 986u);  // public/ + the two runs/ folders
  for (const auto& file : files) {
    VectorSink sink;
    MemoryReportParser parser(&sink);
    ASSERT_TRUE(ParseText(parser, ReadTestFile(file.string())).ok()) << file;
    EXPECT_EQ(parser.unknown_lines(), 0) << file;
    EXPECT_TRUE(sink.issues.empty()) << file << ": " << sink.issues.front().reason;
    EXPECT_FALSE(sink.report_rows.empty()) << file;
  }
}

}  // namespace
}  // namespace xladb::ingest
