// Replays every input the fuzzers ever broke something with (tests/fuzz/regressions/<target>/<input>) through
// the same entry point the libFuzzer target uses (tests/fuzz/fuzz_entry_points.h), in the plain build: no clang
// or libFuzzer needed. Under the ASan + UBSan build of scripts/test.sh a regressed leak or overflow fails here
// too; in every build a broken contract (the entry point's return value) fails.
#include <gtest/gtest.h>

#include <algorithm>
#include <cctype>
#include <filesystem>
#include <fstream>
#include <memory>
#include <sstream>
#include <string>
#include <vector>

#include "ingest/source/byte_source.h"
#include "ingest/source/file_kind.h"
#include "ingest/source/line_reader.h"
#include "ingest/parser_registry.h"
#include "tests/fuzz/fuzz_entry_points.h"
#include "tests/ingest/vector_sink.h"

namespace xladb {
namespace {

namespace fs = std::filesystem;

struct RegressionInput {
  std::string target;
  fs::path path;
};

std::vector<RegressionInput> AllRegressionInputs() {
  std::vector<RegressionInput> inputs;
  std::error_code ec;
  for (const auto& target_dir : fs::directory_iterator(XLADB_FUZZ_REGRESSION_DIR, ec)) {
    if (!target_dir.is_directory()) continue;
    for (const auto& file : fs::directory_iterator(target_dir.path())) {
      if (file.is_regular_file()) inputs.push_back({target_dir.path().filename().string(), file.path()});
    }
  }
  std::sort(inputs.begin(), inputs.end(), [](const auto& a, const auto& b) { return a.path < b.path; });
  return inputs;
}

std::string ReadBytes(const fs::path& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

class FuzzRegression : public ::testing::TestWithParam<RegressionInput> {};

TEST_P(FuzzRegression, ReplaysCleanly) {
  const RegressionInput& input = GetParam();
  const fuzz::FuzzTarget* target = fuzz::FindFuzzTarget(input.target);
  ASSERT_NE(target, nullptr) << "regressions/" << input.target << "/ names no fuzz target";
  std::string bytes = ReadBytes(input.path);
  ASSERT_FALSE(bytes.empty() && fs::file_size(input.path) > 0) << "cannot read " << input.path;
  EXPECT_EQ(target->run(bytes), "") << input.path;
}

std::string TestName(const ::testing::TestParamInfo<RegressionInput>& info) {
  std::string name = info.param.target + "_" + info.param.path.filename().string();
  for (char& c : name) {
    if (!std::isalnum(static_cast<unsigned char>(c))) c = '_';
  }
  return name;
}

INSTANTIATE_TEST_SUITE_P(SavedInputs, FuzzRegression, ::testing::ValuesIn(AllRegressionInputs()), TestName);
GTEST_ALLOW_UNINSTANTIATED_PARAMETERIZED_TEST(FuzzRegression);

// Every regression folder belongs to a fuzz target, and every target's entry point accepts the empty input and
// a few hostile classics (so the replay path itself is exercised even before any regression is saved).
TEST(FuzzEntryPoints, RegressionFoldersNameTargets) {
  std::error_code ec;
  int folders = 0;
  for (const auto& dir : fs::directory_iterator(XLADB_FUZZ_REGRESSION_DIR, ec)) {
    if (!dir.is_directory()) continue;
    ++folders;
    EXPECT_NE(fuzz::FindFuzzTarget(dir.path().filename().string()), nullptr) << dir.path();
  }
  EXPECT_GT(folders, 0) << "no regression folders under " << XLADB_FUZZ_REGRESSION_DIR;
}

TEST(FuzzEntryPoints, EveryTargetSurvivesHostileClassics) {
  const std::string classics[] = {
      std::string(),
      std::string("\0\0\0\n\0", 5),
      std::string("\r\n\r\n\r"),
      std::string(100000, '('),
      std::string(100000, '"'),
      std::string("Buffer 99999999999999999999999:\n\tSize: -1B\n"),
      std::string("\xff\xfe\xc3\x28\n\xe2\x82", 7),
  };
  EXPECT_EQ(fuzz::AllFuzzTargets().size(), 10u);
  for (const fuzz::FuzzTarget& target : fuzz::AllFuzzTargets()) {
    for (const std::string& input : classics) {
      EXPECT_EQ(target.run(input), "") << target.name << " on " << input.size() << " bytes";
    }
  }
}

// The first fuzz finding, checked by behaviour so the plain build (no ASan) catches a regression too:
// regressions/oom_report_parser/leak_unnumbered_buffer_header_then_size. `Buffer :` (no number) inside an open
// buffer dropped that buffer but left the parser in the buffer state, and the next line was written into the
// empty std::optional (a leak under ASan, undefined behaviour anywhere). Now no buffer is open after it, so
// `Size: …` is an unknown line like the `Buffer :` before it.
TEST(FuzzFindings, OomUnnumberedBufferHeaderClosesTheOpenBuffer) {
  const std::string input = "\tBuffer 2:\n\tBuffer :\n\tSize: 512.00MiB\n";
  ingest::VectorSink sink;
  std::unique_ptr<ingest::LineParser> parser = ingest::MakeParser(ingest::FileKind::kOomReport, &sink);
  std::unique_ptr<ingest::ByteSource> source = ingest::MakeMemorySource(input);
  ingest::LineReader reader(source.get());
  std::string_view line;
  while (reader.Next(&line)) parser->ParseLine(line, reader.line_number());
  Status finished = parser->Finish();
  EXPECT_EQ(parser->unknown_lines(), 2);
  EXPECT_TRUE(sink.oom_buffers.empty());
  EXPECT_FALSE(finished.ok());  // no report header and no complete buffer: not an OOM report
  bool dropped = false;
  for (const auto& issue : sink.issues) dropped |= issue.reason.find("buffer 2 has no") != std::string::npos;
  EXPECT_TRUE(dropped) << "the cut-short buffer 2 is reported";
}

// regressions/live_range_parser/ubsan_peak_sizes_past_int64: two peak lines of 2^63-1 bytes overflowed the running
// sum of sizes (undefined behaviour, silently wrapping in a plain build). The sum is now checked, and the
// mismatch says the sum is past int64 instead of printing a wrapped negative number.
TEST(FuzzFindings, LiveRangePeakSizesPastInt64AreReportedNotWrapped) {
  const std::string input =
      "HloLiveRange (max 2):\n  InstructionSequence:\n    0:a\n    1:b\n  BufferLiveRange:\n    a{}:0-2\n"
      "    b{}:1-2\n  Live ranges at 1 (peak):\n"
      "    a{}: 9223372036854775807 bytes (cumulative: 9223372036854775807 bytes)\n"
      "    b{}: 9223372036854775807 bytes (cumulative: 9223372036854775807 bytes)\n";
  ingest::VectorSink sink;
  std::unique_ptr<ingest::LineParser> parser = ingest::MakeParser(ingest::FileKind::kLiveRange, &sink);
  std::unique_ptr<ingest::ByteSource> source = ingest::MakeMemorySource(input);
  ingest::LineReader reader(source.get());
  std::string_view line;
  while (reader.Next(&line)) parser->ParseLine(line, reader.line_number());
  EXPECT_TRUE(parser->Finish().ok());
  int overflow_reports = 0;
  for (const auto& issue : sink.issues) {
    overflow_reports += issue.reason.find("running sum of sizes is more than int64") != std::string::npos;
  }
  EXPECT_EQ(overflow_reports, 1);
}

}  // namespace
}  // namespace xladb
