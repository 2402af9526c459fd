#include "ingest/formats/oom_report/oom_report_parser.h"

#include <filesystem>
#include <string>

#include <gtest/gtest.h>

#include "tests/ingest/vector_sink.h"

namespace xladb::ingest {
namespace {

using Severity = IssueRecord::Severity;

std::string Fixture(const std::string& name) {
  return ReadTestFile(std::string(XLADB_FIXTURE_DIR) + "/oom_report/" + name);
}

TEST(OomReportParser, FullReportAfterLogPreamble) {
  const std::string text = Fixture("report_with_log_preamble.txt");
  ASSERT_FALSE(text.empty());
  VectorSink sink;
  OomReportParser parser(&sink);
  ASSERT_TRUE(ParseText(parser, text).ok());
  EXPECT_EQ(parser.unknown_lines(), 0);
  EXPECT_TRUE(sink.issues.empty()) << sink.issues.front().reason;
  EXPECT_EQ(parser.preamble_lines(), 2);
  EXPECT_EQ(parser.trailing_lines(), 0);

  // Line 2 of the preamble says what failed: `… Out of memory while trying to allocate 1073741824 bytes.`
  ASSERT_EQ(sink.oom_stats.size(), 8u);
  EXPECT_EQ(sink.oom_stats[0].label, kOomFailedAllocationLabel);
  EXPECT_EQ(sink.oom_stats[0].bytes_approx, 1073741824);
  EXPECT_EQ(sink.oom_stats[0].bytes_text, "1073741824 bytes");
  EXPECT_EQ(sink.oom_stats[1].label, "parameter allocation");
  EXPECT_EQ(sink.oom_stats[1].bytes_text, "1.50GiB");
  EXPECT_EQ(sink.oom_stats[1].bytes_approx, 1610612736);
  EXPECT_EQ(sink.oom_stats[1].percent, -1);
  EXPECT_EQ(sink.oom_stats[2].label, "constant allocation");
  EXPECT_EQ(sink.oom_stats[2].bytes_approx, 128);
  EXPECT_EQ(sink.oom_stats[5].label, "preallocated temp fragmentation");
  EXPECT_EQ(sink.oom_stats[5].bytes_approx, 12288);
  EXPECT_EQ(sink.oom_stats[5].percent, 0);
  EXPECT_EQ(sink.oom_stats[7].label, "total fragmentation");
  EXPECT_EQ(sink.oom_stats[7].bytes_text, "256.00MiB");
  EXPECT_DOUBLE_EQ(sink.oom_stats[7].percent, 5.26);

  ASSERT_EQ(sink.oom_buffers.size(), 3u);
  const auto& dot = sink.oom_buffers[0];
  EXPECT_EQ(dot.buffer_number, 1);
  EXPECT_EQ(dot.size_text, "1.00GiB");
  EXPECT_EQ(dot.size_bytes_approx, 1073741824);
  EXPECT_EQ(dot.op_name, "jit(train_step)/jit(main)/dot_general[dimension_numbers=(((1,), (0,)), ((), ()))]");
  EXPECT_EQ(dot.source_file, "/home/user/model.py");
  EXPECT_EQ(dot.source_line, 88);
  EXPECT_EQ(dot.op_metadata.rfind("op_type=\"dot_general\" op_name=", 0), 0u);
  EXPECT_EQ(dot.xla_label, "custom-call");
  EXPECT_EQ(dot.shape, "f32[16384,16384]");
  EXPECT_FALSE(dot.is_entry_parameter);

  const auto& param = sink.oom_buffers[1];
  EXPECT_EQ(param.buffer_number, 2);
  EXPECT_TRUE(param.is_entry_parameter);
  EXPECT_EQ(param.shape, "bf16[16384,16384]");
  EXPECT_EQ(param.xla_label, "");
  EXPECT_EQ(param.op_metadata, "");
  EXPECT_EQ(param.source_line, -1);

  const auto& fusion = sink.oom_buffers[2];
  EXPECT_EQ(fusion.size_bytes_approx, 393216);
  EXPECT_EQ(fusion.source_file, "/home/user/say \"hi\".py");  // C-escaped in the text
  EXPECT_EQ(fusion.shape, "(f32[256,128,3], s32[])");
}

TEST(OomReportParser, AllocatorLimitAndFailedAllocationFromTheLogAroundTheReport) {
  // The BFC allocator's stats dump before the report (tests/fixtures/oom_run): `Limit:  15739125760`; its
  // `InUse:` and `MaxInUse:` lines are not limits.
  const std::string text =
      ReadTestFile(std::string(XLADB_FIXTURE_DIR) + "/oom_run/module_0042.jit_train_step.oom.txt");
  ASSERT_FALSE(text.empty());
  VectorSink sink;
  OomReportParser parser(&sink);
  ASSERT_TRUE(ParseText(parser, text).ok());
  EXPECT_TRUE(sink.issues.empty());
  ASSERT_EQ(sink.oom_stats.size(), 9u);
  EXPECT_EQ(sink.oom_stats[0].label, kOomLimitLabel);
  EXPECT_EQ(sink.oom_stats[0].bytes_approx, 15739125760);
  EXPECT_EQ(sink.oom_stats[0].bytes_text, "15739125760 bytes");
  EXPECT_EQ(sink.oom_stats[1].label, kOomFailedAllocationLabel);
  EXPECT_EQ(sink.oom_stats[1].bytes_approx, 1073741824);
  EXPECT_EQ(sink.oom_buffers.size(), 3u);
}

TEST(OomReportParser, PastedWithSpacesAndTruncatedLastBufferIsAWarning) {
  const std::string text = Fixture("pasted_truncated.txt");
  ASSERT_FALSE(text.empty());
  VectorSink sink;
  OomReportParser parser(&sink);
  ASSERT_TRUE(ParseText(parser, text).ok());
  EXPECT_EQ(parser.unknown_lines(), 0);
  EXPECT_EQ(parser.preamble_lines(), 1);
  EXPECT_EQ(sink.oom_stats.size(), 8u);  // 7 printed, and the failed allocation of line 1
  ASSERT_EQ(sink.oom_buffers.size(), 2u);  // buffer 3 is cut off
  EXPECT_EQ(sink.oom_buffers[1].buffer_number, 2);
  EXPECT_EQ(sink.CountIssues(Severity::kInvariant), 0u);
  ASSERT_EQ(sink.CountIssues(Severity::kWarning), 1u);
  EXPECT_NE(sink.issues[0].reason.find("buffer 3"), std::string::npos) << sink.issues[0].reason;
}

TEST(OomReportParser, ExcerptFromTheMiddleWithTrailingLogLine) {
  const std::string text = Fixture("excerpt_from_buffer_7.txt");
  ASSERT_FALSE(text.empty());
  VectorSink sink;
  OomReportParser parser(&sink);
  ASSERT_TRUE(ParseText(parser, text).ok());
  EXPECT_EQ(parser.unknown_lines(), 0);
  EXPECT_EQ(parser.preamble_lines(), 0);
  EXPECT_EQ(parser.trailing_lines(), 1);
  EXPECT_TRUE(sink.oom_stats.empty());
  ASSERT_EQ(sink.oom_buffers.size(), 2u);
  EXPECT_EQ(sink.oom_buffers[0].buffer_number, 7);
  EXPECT_EQ(sink.oom_buffers[1].buffer_number, 8);
  EXPECT_EQ(sink.oom_buffers[1].op_name, "jit(train_step)/jit(main)/concatenate[dimension=0]");
  EXPECT_EQ(sink.CountIssues(Severity::kWarning), 1u);  // starts mid-way
  EXPECT_EQ(sink.CountIssues(Severity::kInvariant), 0u);
}

TEST(OomReportParser, NumberingAndOrderViolationsAreInvariantIssues) {
  VectorSink sink;
  OomReportParser parser(&sink);
  ASSERT_TRUE(ParseText(parser,
                        "BufferAssignment OOM Debugging.\n"
                        "BufferAssignment stats:\n"
                        "                 total allocation:    3.00MiB\n"
                        "Peak buffers:\n"
                        "\tBuffer 1:\n\t\tSize: 1.00MiB\n\t\tXLA Label: copy\n\t\tShape: f32[262144]\n"
                        "\t\t==========================\n\n"
                        "\tBuffer 3:\n\t\tSize: 2.00MiB\n\t\tXLA Label: copy\n\t\tShape: f32[524288]\n"
                        "\t\t==========================\n\n"
                        "\tBuffer 4:\n\t\tSize: lots\n\t\tShape: f32[1]\n\t\tWhat: is this\n"
                        "\t\t==========================\n")
                  .ok());
  ASSERT_EQ(sink.oom_buffers.size(), 3u);
  EXPECT_EQ(parser.unknown_lines(), 1);  // `What: is this`
  // 3 after 1; 2.00MiB after 1.00MiB; buffer 4 lacks a label; buffer 4 size unreadable.
  EXPECT_EQ(sink.CountIssues(Severity::kInvariant), 4u);
}

TEST(OomReportParser, TextWithoutReportIsAnError) {
  VectorSink sink;
  OomReportParser parser(&sink);
  EXPECT_EQ(ParseText(parser, "Traceback (most recent call last):\n  File \"x.py\", line 1\n").code(),
            Status::Code::kDataLoss);
  EXPECT_EQ(sink.CountIssues(Severity::kError), 1u);
}

std::string CorpusFile(const std::string& name) { return std::string(XLADB_CORPUS_DIR) + "/public/" + name; }

TEST(OomReportParser, CorpusJaxIssueExcerpt) {
  const std::string path = CorpusFile("issue_jax-13428_gpu__oom-bufferassignment-report.txt");
  if (!std::filesystem::exists(path)) GTEST_SKIP() << "corpus not present: " << path;
  VectorSink sink;
  OomReportParser parser(&sink);
  ASSERT_TRUE(ParseText(parser, ReadTestFile(path)).ok());
  EXPECT_EQ(parser.unknown_lines(), 0);
  EXPECT_EQ(parser.preamble_lines(), 1);
  ASSERT_EQ(sink.oom_stats.size(), 7u);  // 6 printed, and line 1's `trying to allocate 6291456 bytes`
  EXPECT_EQ(sink.oom_stats[0].label, kOomFailedAllocationLabel);
  EXPECT_EQ(sink.oom_stats[0].bytes_approx, 6291456);
  EXPECT_EQ(sink.oom_stats[6].label, "total fragmentation");
  EXPECT_EQ(sink.oom_stats[6].percent, 0);
  ASSERT_EQ(sink.oom_buffers.size(), 2u);  // buffer 3 is truncated in the issue
  EXPECT_EQ(sink.oom_buffers[0].source_line, 689);
  EXPECT_EQ(sink.oom_buffers[0].xla_label, "concatenate");
  EXPECT_TRUE(sink.oom_buffers[1].is_entry_parameter);
  EXPECT_EQ(sink.oom_buffers[1].shape, "f32[256,128,3]");
  EXPECT_EQ(sink.CountIssues(Severity::kWarning), 1u);
  EXPECT_EQ(sink.CountIssues(Severity::kInvariant), 0u);
}

TEST(OomReportParser, CorpusT5xIssueExcerpt) {
  const std::string path = CorpusFile("issue_t5x-870_gpu__oom-peak-buffers-excerpt.txt");
  if (!std::filesystem::exists(path)) GTEST_SKIP() << "corpus not present: " << path;
  VectorSink sink;
  OomReportParser parser(&sink);
  ASSERT_TRUE(ParseText(parser, ReadTestFile(path)).ok());
  EXPECT_EQ(parser.unknown_lines(), 0);
  EXPECT_EQ(parser.trailing_lines(), 1);
  ASSERT_EQ(sink.oom_buffers.size(), 3u);
  EXPECT_EQ(sink.oom_buffers[0].buffer_number, 13);
  EXPECT_EQ(sink.oom_buffers[1].source_file, "/usr/lib/python3.9/contextlib.py");
  EXPECT_EQ(sink.oom_buffers[1].source_line, 79);
  EXPECT_EQ(sink.oom_buffers[2].buffer_number, 15);
  EXPECT_EQ(sink.oom_buffers[2].size_bytes_approx, 100663296);
  EXPECT_EQ(sink.CountIssues(Severity::kWarning), 1u);  // starts at Buffer 13
  EXPECT_EQ(sink.CountIssues(Severity::kInvariant), 0u);
}

}  // namespace
}  // namespace xladb::ingest
