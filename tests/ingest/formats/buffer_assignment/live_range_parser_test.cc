#include "ingest/formats/buffer_assignment/live_range_parser.h"

#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "tests/ingest/vector_sink.h"

namespace xladb::ingest {
namespace {

using Severity = IssueRecord::Severity;

struct Parsed {
  VectorSink sink;
  Status status;
  int64_t unknown_lines = 0;
};

Parsed ParseLiveRange(const std::string& text) {
  Parsed parsed;
  LiveRangeParser parser(&parsed.sink);
  parsed.status = ParseText(parser, text);
  parsed.unknown_lines = parser.unknown_lines();
  return parsed;
}

std::string ReadFixture(const std::string& name) {
  std::string text = ReadTestFile(std::string(XLADB_FIXTURE_DIR) + "/buffer_assignment/" + name);
  EXPECT_FALSE(text.empty()) << "missing fixture " << name;
  return text;
}

std::string IssueText(const VectorSink& sink) {
  std::string out;
  for (const auto& issue : sink.issues) {
    out += "line " + std::to_string(issue.line) + " [" + std::to_string(static_cast<int>(issue.severity)) +
           "] " + issue.reason + "\n";
  }
  return out;
}

TEST(LiveRangeParser, File2026WithV3PeakAndStackTree) {
  Parsed p = ParseLiveRange(ReadFixture("2026_07_gpu-live-range.txt"));
  ASSERT_TRUE(p.status.ok()) << p.status.ToString();
  const VectorSink& s = p.sink;
  EXPECT_EQ(p.unknown_lines, 0);
  EXPECT_TRUE(s.issues.empty()) << IssueText(s);
  ASSERT_EQ(s.live_range_headers.size(), 1u);
  EXPECT_EQ(s.live_range_headers[0].schedule_end_time, 5);
  ASSERT_EQ(s.schedule.size(), 5u);
  EXPECT_EQ(s.schedule[3].time, 3);
  EXPECT_EQ(s.schedule[3].instruction, "fusion.4");
  ASSERT_EQ(s.live_ranges.size(), 5u);
  EXPECT_EQ(s.live_ranges[2].instruction, "fusion.3");
  EXPECT_EQ(s.live_ranges[2].shape_index, "{}");
  EXPECT_EQ(s.live_ranges[2].start, 2);
  EXPECT_EQ(s.live_ranges[2].end, 4);
  ASSERT_EQ(s.peak_moments.size(), 1u);
  EXPECT_EQ(s.peak_moments[0].time, 4);
  ASSERT_EQ(s.peak_buffers.size(), 4u);
  EXPECT_EQ(s.peak_buffers[0].instruction, "add.5");
  EXPECT_TRUE(s.peak_buffers[0].index_printed);
  EXPECT_EQ(s.peak_buffers[3].cumulative_bytes, 16384);
  ASSERT_EQ(s.stack_trace_headers.size(), 1u);
  EXPECT_EQ(s.stack_trace_headers[0].peak_bytes, 16384);
  ASSERT_EQ(s.stack_trace_nodes.size(), 7u);
  const std::vector<int32_t> depths = {0, 1, 2, 3, 3, 1, 1};
  const std::vector<std::string> names = {"main.6",     "call.7", "wrapped_body", "fusion.3", "fusion.4",
                                          "jit(f)/add", "x"};
  for (size_t i = 0; i < depths.size(); ++i) {
    EXPECT_EQ(s.stack_trace_nodes[i].depth, depths[i]) << i;
    EXPECT_EQ(s.stack_trace_nodes[i].name, names[i]) << i;
  }
  EXPECT_EQ(s.stack_trace_nodes[3].total_bytes, 4096);
  EXPECT_EQ(s.stack_trace_nodes[3].remaining_bytes, 12288);
  EXPECT_DOUBLE_EQ(s.stack_trace_nodes[1].percent, 50.0);
}

TEST(LiveRangeParser, NotAvailableIsAWarningNotAnError) {
  Parsed p = ParseLiveRange(ReadFixture("2026_07_not_available-live-range.txt"));
  ASSERT_TRUE(p.status.ok()) << p.status.ToString();
  ASSERT_EQ(p.sink.issues.size(), 1u);
  EXPECT_EQ(p.sink.issues[0].severity, Severity::kWarning);
  EXPECT_EQ(p.sink.issues[0].line, 1);
  EXPECT_TRUE(p.sink.live_range_headers.empty());
}

TEST(LiveRangeParser, EmptyOrForeignTextIsDataLoss) {
  Parsed empty = ParseLiveRange("");
  EXPECT_EQ(empty.status.code(), Status::Code::kDataLoss);
  EXPECT_EQ(empty.sink.CountIssues(Severity::kError), 1u);
  Parsed foreign = ParseLiveRange("BufferAssignment:\n");
  EXPECT_EQ(foreign.status.code(), Status::Code::kDataLoss);
  EXPECT_EQ(foreign.unknown_lines, 1);
}

// One value, live at the peak of 8 bytes, up to the stack-trace breakdown's header: its nodes follow.
constexpr const char* kOneValueUpToItsStackTrace =
    "HloLiveRange (max 1):\n"
    "  InstructionSequence:\n"
    "    0:p\n"
    "  BufferLiveRange:\n"
    "    p{}:0-1\n"
    "  Live ranges at 0 (peak):\n"
    "    p{}: 8 bytes (cumulative: 8 bytes)\n"
    "  Stack trace breakdown for peak usage: 8 bytes\n";

TEST(LiveRangeParser, FirstStackTraceFormWithoutCurrentAndRemaining) {
  const std::string text =
      std::string(kOneValueUpToItsStackTrace) +
      "    main (100.0%, 8 bytes)\n"
      "      └── weights (a) (100.0%, 8 bytes)\n";
  Parsed p = ParseLiveRange(text);
  ASSERT_TRUE(p.status.ok());
  EXPECT_TRUE(p.sink.issues.empty()) << IssueText(p.sink);
  ASSERT_EQ(p.sink.stack_trace_nodes.size(), 2u);
  const StackTraceNodeRecord& leaf = p.sink.stack_trace_nodes[1];
  EXPECT_EQ(leaf.name, "weights (a)");
  EXPECT_EQ(leaf.depth, 1);
  EXPECT_EQ(leaf.total_bytes, 8);
  EXPECT_EQ(leaf.current_bytes, -1);
  EXPECT_EQ(leaf.remaining_bytes, -1);
}

// A percentage that is not a finite number keeps its node, with the share its bytes stand for: stored as NaN,
// SQLite's REAL would take it as NULL and refuse the file's rows (stack_trace_nodes.percent is NOT NULL).
TEST(LiveRangeParser, AStackTracePercentageThatIsNotAFiniteNumberKeepsItsNode) {
  const std::string text =
      std::string(kOneValueUpToItsStackTrace) +
      "    main (nan%, total: 8 bytes, current: 0 bytes, remaining: 8 bytes)\n"
      "      └── weights (inf%, total: 2 bytes, current: 2 bytes, remaining: 6 bytes)\n";
  Parsed p = ParseLiveRange(text);
  ASSERT_TRUE(p.status.ok());
  ASSERT_EQ(p.sink.stack_trace_nodes.size(), 2u);
  EXPECT_EQ(p.sink.stack_trace_nodes[0].percent, 100.0);
  EXPECT_EQ(p.sink.stack_trace_nodes[1].percent, 25.0);
  ASSERT_EQ(p.sink.CountIssues(Severity::kInvariant), 2u) << IssueText(p.sink);
  EXPECT_NE(p.sink.issues[0].reason.find("stack trace node 'main': percentage nan is not a finite number"),
            std::string::npos)
      << IssueText(p.sink);
}

TEST(LiveRangeParser, V2PeakListOutOfOrderIsAnInvariant) {
  const std::string text =
      "HloLiveRange (max 2):\n"
      "  InstructionSequence:\n"
      "    0:a\n"
      "    1:b\n"
      "  BufferLiveRange:\n"
      "    a{}:0-2\n"
      "    b{0}:1-2\n"
      "  Live ranges at 1 (peak):\n"
      "    b{0}: 4 bytes\n"
      "    a{}: 4 bytes\n";
  Parsed p = ParseLiveRange(text);
  ASSERT_TRUE(p.status.ok());
  EXPECT_EQ(p.sink.CountIssues(Severity::kInvariant), 2u) << IssueText(p.sink);
  EXPECT_NE(IssueText(p.sink).find("`b{0}` skips 1 live range(s) spanning t=1, first `a{}`"),
            std::string::npos)
      << IssueText(p.sink);
  EXPECT_EQ(p.sink.peak_buffers.size(), 2u);
}

TEST(LiveRangeParser, TruncatedInsideInstructionSequenceWarnsWithoutInvariant) {
  const std::string text =
      "HloLiveRange (max 4):\n"
      "  InstructionSequence:\n"
      "    0:a\n"
      "    1:b\n";
  Parsed p = ParseLiveRange(text);
  ASSERT_TRUE(p.status.ok());
  EXPECT_EQ(p.sink.CountIssues(Severity::kInvariant), 0u) << IssueText(p.sink);
  ASSERT_EQ(p.sink.CountIssues(Severity::kWarning), 1u) << IssueText(p.sink);
  EXPECT_NE(IssueText(p.sink).find("inside the InstructionSequence section"), std::string::npos);
  EXPECT_EQ(p.sink.schedule.size(), 2u);
}

TEST(LiveRangeParser, ScheduleTimeOutOfStepAndBadNumbers) {
  const std::string text =
      "HloLiveRange (max 2):\n"
      "  InstructionSequence:\n"
      "    0:a\n"
      "    5:b\n"
      "  BufferLiveRange:\n"
      "    a{}:0-99999999999999999999\n"
      "    b{}:x-2\n"
      "  Live ranges at 1 (peak):\n";
  Parsed p = ParseLiveRange(text);
  ASSERT_TRUE(p.status.ok());
  EXPECT_EQ(p.sink.CountIssues(Severity::kInvariant), 2u) << IssueText(p.sink);
  EXPECT_NE(IssueText(p.sink).find("entry 1 is printed with time 5"), std::string::npos) << IssueText(p.sink);
  EXPECT_NE(IssueText(p.sink).find("does not fit in int64"), std::string::npos) << IssueText(p.sink);
  EXPECT_EQ(p.unknown_lines, 1);  // `b{}:x-2`
  EXPECT_TRUE(p.sink.live_ranges.empty());
}

// ---------------------------------------------------------------------------------------------------
// Invariant fixtures

TEST(LiveRangeParserInvariant, CumulativeIsNotTheRunningSum) {
  Parsed p = ParseLiveRange(ReadFixture("invariant_cumulative-live-range.txt"));
  ASSERT_TRUE(p.status.ok());
  ASSERT_EQ(p.sink.issues.size(), 1u) << IssueText(p.sink);
  EXPECT_EQ(p.sink.issues[0].severity, Severity::kInvariant);
  EXPECT_EQ(p.sink.issues[0].line, 17);
  EXPECT_NE(p.sink.issues[0].reason.find("cumulative 12288 bytes, but the running sum of sizes is 12192"),
            std::string::npos)
      << p.sink.issues[0].reason;
}

TEST(LiveRangeParserInvariant, V3PeakListLacksASpanningRange) {
  Parsed p = ParseLiveRange(ReadFixture("invariant_peak_list_v3-live-range.txt"));
  ASSERT_TRUE(p.status.ok());
  ASSERT_EQ(p.sink.issues.size(), 1u) << IssueText(p.sink);
  EXPECT_EQ(p.sink.issues[0].severity, Severity::kInvariant);
  EXPECT_NE(p.sink.issues[0].reason.find("lacks 1 of the 4 live ranges spanning t (first `fusion.4{}`)"),
            std::string::npos)
      << p.sink.issues[0].reason;
  EXPECT_EQ(p.sink.peak_buffers.size(), 3u);
}

TEST(LiveRangeParserInvariant, V3PeakLineThatDoesNotSpanThePeak) {
  std::string text = ReadFixture("2026_07_gpu-live-range.txt");
  const std::string line = "    fusion.4{}: 4096 bytes (cumulative: 12288 bytes)\n";
  text.replace(text.find(line), line.size(), "    fusion.2{}: 4096 bytes (cumulative: 12288 bytes)\n");
  Parsed p = ParseLiveRange(text);
  ASSERT_TRUE(p.status.ok());
  EXPECT_EQ(p.sink.CountIssues(Severity::kInvariant), 2u)
      << IssueText(p.sink);  // extra fusion.2, no fusion.4
  EXPECT_NE(IssueText(p.sink).find("`fusion.2{}` is not a live range spanning t=4"), std::string::npos)
      << IssueText(p.sink);
}

TEST(LiveRangeParserInvariant, MaxTimeIsNotTheScheduleLength) {
  Parsed p = ParseLiveRange(ReadFixture("invariant_max_time-live-range.txt"));
  ASSERT_TRUE(p.status.ok());
  ASSERT_EQ(p.sink.issues.size(), 1u) << IssueText(p.sink);
  EXPECT_EQ(p.sink.issues[0].severity, Severity::kInvariant);
  EXPECT_NE(p.sink.issues[0].reason.find("HloLiveRange (max 6) but InstructionSequence has 5 entries"),
            std::string::npos)
      << p.sink.issues[0].reason;
}

}  // namespace
}  // namespace xladb::ingest
