// The buffer-assignment parser on damaged and odd input: files cut mid-line, numbers that break the format's
// invariants, lines no rule knows. Each keeps what can be kept and says why in an issue.
#include "tests/ingest/formats/buffer_assignment/buffer_assignment_parse.h"

namespace xladb::ingest::testing {
namespace {

// ---------------------------------------------------------------------------------------------------
// Truncated files

TEST(BufferAssignmentParserTruncated, MidFromInstructionLine) {
  Parsed p = ParseBufferAssignment(ReadFixture("truncated_mid_value-buffer-assignment.txt"));
  ASSERT_TRUE(p.status.ok()) << p.status.ToString();
  const VectorSink& s = p.sink;
  EXPECT_EQ(s.CountIssues(Severity::kWarning), 1u) << IssueText(s);
  EXPECT_EQ(s.CountIssues(Severity::kInvariant), 0u) << IssueText(s);
  EXPECT_NE(IssueText(s).find("from-instruction text of add.4 cut short"), std::string::npos) << IssueText(s);
  EXPECT_EQ(s.instructions.size(), 3u);  // the cut one too, as far as it goes
  EXPECT_EQ(s.value_details.size(), 5u);
  EXPECT_TRUE(s.live_range_headers.empty());
}

TEST(BufferAssignmentParserTruncated, MidRepeatedFromInstructionLine) {
  const std::string text = ReadFixture("2025_04_gpu_v2_peak-buffer-assignment.txt");
  size_t block = text.find("\n<3 custom-call.2{1} @0>\n");
  size_t from = text.find(" from instruction:", block);
  ASSERT_NE(from, std::string::npos);
  // The third printing of custom-call.2, cut: its text is shorter than the first printing.
  Parsed p = ParseBufferAssignment(text.substr(0, from + 60));
  ASSERT_TRUE(p.status.ok()) << p.status.ToString();
  EXPECT_EQ(p.sink.CountIssues(Severity::kWarning), 1u) << IssueText(p.sink);
  EXPECT_NE(IssueText(p.sink).find("custom-call.2 cut short"), std::string::npos) << IssueText(p.sink);
  EXPECT_EQ(p.sink.value_details.size(), 4u);
  // Ending right after the complete line is no warning.
  Parsed whole = ParseBufferAssignment(text.substr(0, text.find('\n', from) + 1));
  EXPECT_TRUE(whole.sink.issues.empty()) << IssueText(whole.sink);
  EXPECT_EQ(whole.sink.value_details.size(), 4u);
}

// An instruction printed by several value blocks is one record, the first printing, even when a later one
// prints it otherwise: the writer relies on one record per name in a file (records.h).
TEST(BufferAssignmentParser, AnInstructionPrintedByManyValuesIsOneRecord) {
  std::string text = ReadFixture("2025_04_gpu_v2_peak-buffer-assignment.txt");
  const std::string printed = "custom_call_target=\"__cublas$gemm\"";
  size_t third = text.find(printed, text.find(printed, text.find(printed) + 1) + 1);
  ASSERT_NE(third, std::string::npos);
  text.replace(third, printed.size(), "custom_call_target=\"__cublas$lt$matmul\"");
  Parsed p = ParseBufferAssignment(text);
  ASSERT_TRUE(p.status.ok()) << p.status.ToString();
  int printings = 0;
  for (const auto& r : p.sink.instructions) {
    if (r.name != "custom-call.2") continue;
    ++printings;
    EXPECT_EQ(r.custom_call_target, "__cublas$gemm");
  }
  EXPECT_EQ(printings, 1);
}

TEST(BufferAssignmentParserTruncated, MidValueBlock) {
  std::string text = ReadFixture("2025_04_gpu_v2_peak-buffer-assignment.txt");
  text = text.substr(0, text.find("  add.4\n uses:"));  // cut inside the positions of value 4
  text += "  add";
  Parsed p = ParseBufferAssignment(text);
  ASSERT_TRUE(p.status.ok()) << p.status.ToString();
  EXPECT_EQ(p.unknown_lines, 0);
  EXPECT_EQ(p.sink.CountIssues(Severity::kWarning), 1u) << IssueText(p.sink);
  EXPECT_NE(IssueText(p.sink).find("ends inside the Used-values block of value 4 add.4"), std::string::npos)
      << IssueText(p.sink);
  ASSERT_EQ(p.sink.value_details.size(), 5u);
  EXPECT_EQ(p.sink.value_details[4].positions.at(0).instruction, "add");
}

TEST(BufferAssignmentParserTruncated, MidLiveRange) {
  Parsed p = ParseBufferAssignment(ReadFixture("truncated_mid_live_range-buffer-assignment.txt"));
  ASSERT_TRUE(p.status.ok()) << p.status.ToString();
  const VectorSink& s = p.sink;
  EXPECT_EQ(p.unknown_lines, 1);                                     // `    params.2{0}:1-`
  EXPECT_EQ(s.CountIssues(Severity::kWarning), 2u) << IssueText(s);  // section cut short, last line cut
  EXPECT_EQ(s.CountIssues(Severity::kInvariant), 0u) << IssueText(s);
  EXPECT_NE(IssueText(s).find("inside the BufferLiveRange section"), std::string::npos) << IssueText(s);
  EXPECT_EQ(s.value_details.size(), 7u);
  EXPECT_EQ(s.live_ranges.size(), 2u);
  EXPECT_TRUE(s.peak_moments.empty());
}

// ---------------------------------------------------------------------------------------------------
// Invariant violations

TEST(BufferAssignmentParserInvariant, ValueBeyondItsAllocation) {
  Parsed p = ParseBufferAssignment(ReadFixture("invariant_value_beyond_allocation-buffer-assignment.txt"));
  ASSERT_TRUE(p.status.ok());
  ASSERT_EQ(p.sink.issues.size(), 1u) << IssueText(p.sink);
  EXPECT_EQ(p.sink.issues[0].severity, Severity::kInvariant);
  EXPECT_EQ(p.sink.issues[0].line, 9);
  EXPECT_NE(p.sink.issues[0].reason.find("offset 56 + size 16 exceeds the size 64 of allocation 3"),
            std::string::npos)
      << p.sink.issues[0].reason;
  EXPECT_EQ(p.sink.allocated_values.size(), 4u);  // reported, still emitted
}

TEST(BufferAssignmentParserInvariant, AllocationsDoNotSumToTotal) {
  Parsed p = ParseBufferAssignment(ReadFixture("invariant_total_bytes-buffer-assignment.txt"));
  ASSERT_TRUE(p.status.ok());
  ASSERT_EQ(p.sink.issues.size(), 1u) << IssueText(p.sink);
  EXPECT_EQ(p.sink.issues[0].severity, Severity::kInvariant);
  EXPECT_NE(p.sink.issues[0].reason.find("Total bytes used 120 but the 4 allocation sizes sum to 112"),
            std::string::npos)
      << p.sink.issues[0].reason;
}

TEST(BufferAssignmentParserInvariant, V1PeakListOutOfBufferLiveRangeOrder) {
  Parsed p = ParseBufferAssignment(ReadFixture("invariant_peak_order_v1-buffer-assignment.txt"));
  ASSERT_TRUE(p.status.ok());
  EXPECT_EQ(p.sink.CountIssues(Severity::kInvariant), 2u) << IssueText(p.sink);
  EXPECT_EQ(p.sink.issues.size(), 2u) << IssueText(p.sink);
  EXPECT_NE(IssueText(p.sink).find("`p1` skips 1 live range(s) spanning t=3, first `p0{}`"),
            std::string::npos)
      << IssueText(p.sink);
  EXPECT_EQ(p.sink.peak_buffers.size(), 4u);
}

TEST(BufferAssignmentParserInvariant, NumbersPastInt64OrNegativeAreReportedAndSkipped) {
  const std::string text =
      "BufferAssignment:\n"
      "allocation 0: size 99999999999999999999, maybe-live-out:\n"
      " value: <0 a @0> (size=16,offset=0): f32[4]{0}\n"
      "allocation 1: size 64, preallocated-temp:\n"
      " value: <1 b @0> (size=16,offset=-16): f32[4]{0}\n"
      " value: <2 c @0> (size=16,offset=16): f32[4]{0}\n";
  Parsed p = ParseBufferAssignment(text);
  ASSERT_TRUE(p.status.ok());
  EXPECT_EQ(p.sink.CountIssues(Severity::kInvariant), 2u) << IssueText(p.sink);
  EXPECT_NE(IssueText(p.sink).find("allocation size 99999999999999999999 does not fit in int64"),
            std::string::npos)
      << IssueText(p.sink);
  EXPECT_NE(IssueText(p.sink).find("value offset -16 is negative"), std::string::npos) << IssueText(p.sink);
  EXPECT_EQ(p.unknown_lines, 1);  // the value of the skipped allocation has no allocation to belong to
  ASSERT_EQ(p.sink.allocations.size(), 1u);
  EXPECT_EQ(p.sink.allocations[0].index, 1);
  ASSERT_EQ(p.sink.allocated_values.size(), 1u);
  EXPECT_EQ(p.sink.allocated_values[0].value.id, 2);
}

// ---------------------------------------------------------------------------------------------------
// Unknown lines and inputs that are not buffer assignments

TEST(BufferAssignmentParserUnknown, EveryFlagCombinationAndUnknownFlag) {
  const std::string text =
      "BufferAssignment:\n"
      "allocation 0: size 8, color 3, parameter 2, shape |(f32[], f32[])| at ShapeIndex {}, output shape is "
      "|(f32[], f32[])|, constant, thread-local, maybe-live-out, preallocated-temp:\n"
      "allocation 1: size 8, shiny:\n"
      "allocation 2: size 8, constant:\n"
      " value: <0 k @0> (size=8,offset=0): f32[2]{0}\n";
  Parsed p = ParseBufferAssignment(text);
  ASSERT_TRUE(p.status.ok());
  ASSERT_EQ(p.sink.allocations.size(), 2u);
  const AllocationRecord& a = p.sink.allocations[0];
  EXPECT_EQ(a.color, 3);
  EXPECT_EQ(a.parameter_number, 2);
  EXPECT_EQ(a.parameter_shape, "(f32[], f32[])");
  EXPECT_EQ(a.output_shape, "(f32[], f32[])");
  EXPECT_TRUE(a.is_constant && a.is_thread_local && a.is_maybe_live_out && a.is_preallocated_temp);
  EXPECT_EQ(p.unknown_lines, 1);
  ASSERT_EQ(p.sink.issues.size(), 1u);
  EXPECT_EQ(p.sink.issues[0].severity, Severity::kUnknownLine);
  EXPECT_EQ(p.sink.issues[0].line, 3);
  EXPECT_EQ(p.sink.allocated_values.at(0).allocation_index, 2);
}

TEST(BufferAssignmentParserUnknown, StrayLineInUsedValuesIsCountedNotFatal) {
  std::string text = ReadFixture("2026_07_gpu-buffer-assignment-values.txt");
  text.insert(text.find(" positions:"), "something odd\n");
  Parsed p = ParseBufferAssignment(text);
  ASSERT_TRUE(p.status.ok());
  EXPECT_EQ(p.unknown_lines, 1);
  EXPECT_EQ(p.sink.value_details.size(), 5u);
  EXPECT_EQ(p.sink.value_details[0].positions.size(), 1u);
}

TEST(BufferAssignmentParserUnknown, UnreadableLiveRangeHeaderDoesNotLoseTheFile) {
  std::string text = ReadFixture("2021_06_cpu-buffer-assignment.txt");
  text.replace(text.find("HloLiveRange (max 4):"), 21, "HloLiveRange (max four):");
  Parsed p = ParseBufferAssignment(text);
  ASSERT_TRUE(p.status.ok()) << p.status.ToString();
  EXPECT_EQ(p.sink.CountIssues(Severity::kError), 0u) << IssueText(p.sink);
  EXPECT_EQ(p.sink.CountIssues(Severity::kWarning), 1u) << IssueText(p.sink);  // no readable header
  EXPECT_EQ(p.unknown_lines, 16);  // the header (line 36) and every line after it, to line 51
  EXPECT_EQ(p.sink.value_details.size(), 4u);
}

TEST(BufferAssignmentParserUnknown, TextWithoutAnySectionIsDataLoss) {
  Parsed p = ParseBufferAssignment("hello\nworld\n");
  EXPECT_EQ(p.status.code(), Status::Code::kDataLoss);
  EXPECT_EQ(p.sink.CountIssues(Severity::kError), 1u);
  Parsed empty = ParseBufferAssignment("");
  EXPECT_EQ(empty.status.code(), Status::Code::kDataLoss);
}

}  // namespace
}  // namespace xladb::ingest::testing
