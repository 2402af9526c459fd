#include "ingest/formats/tpu_utilization/tpu_bundle_profile_parser.h"

#include <filesystem>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "tests/ingest/vector_sink.h"

namespace xladb::ingest {
namespace {

using Severity = IssueRecord::Severity;

TEST(TpuBundleProfileParser, FormatUtilizationRatioIsPrintfG) {
  EXPECT_EQ(FormatUtilizationRatio(105, 748), "0.140374");
  EXPECT_EQ(FormatUtilizationRatio(1, 15135), "6.6072e-05");
  EXPECT_EQ(FormatUtilizationRatio(28, 28), "1");
  EXPECT_EQ(FormatUtilizationRatio(0, 187), "0");
  EXPECT_EQ(FormatUtilizationRatio(0, 0), "0");
}

TEST(TpuBundleProfileParser, Seed001) {
  const std::string text = ReadTestFile(SeedPath("001"));
  ASSERT_FALSE(text.empty());
  VectorSink sink;
  TpuBundleProfileParser parser(&sink);
  ASSERT_TRUE(ParseText(parser, text).ok());
  EXPECT_EQ(parser.unknown_lines(), 0);
  EXPECT_EQ(sink.CountIssues(Severity::kInvariant), 0u);
  EXPECT_TRUE(sink.issues.empty());

  ASSERT_EQ(sink.blocks.size(), 4u);
  int no_instruction = 0;
  for (size_t i = 0; i < sink.blocks.size(); ++i) {
    EXPECT_EQ(sink.blocks[i].ordinal, static_cast<int64_t>(i));
    no_instruction += sink.blocks[i].kernel == "<no-hlo-instruction>";
  }
  EXPECT_EQ(no_instruction, 2);
  EXPECT_EQ(sink.blocks[2].kernel, "splash_mha_fwd_08d1d988.1");
  EXPECT_EQ(sink.blocks[3].kernel, "iota.1");

  ASSERT_EQ(sink.counters.size(), 134u);
  EXPECT_EQ(sink.counters[0].counter, "MXU_0 matpush");
  EXPECT_EQ(sink.counters[0].numerator, 0);
  EXPECT_EQ(sink.counters[0].denominator, 94);
  EXPECT_EQ(sink.counters[0].kernel, "<no-hlo-instruction>");
  EXPECT_EQ(sink.counters[20].counter, "VECTOR_ALU");
  EXPECT_EQ(sink.counters[20].numerator, 105);
  EXPECT_EQ(sink.counters[20].denominator, 748);
  EXPECT_EQ(sink.counters[20].ratio_text, "0.140374");
  EXPECT_DOUBLE_EQ(sink.counters[20].ratio, 0.140374);

  // One InstructionRecord per kernel with instruction text.
  ASSERT_EQ(sink.instructions.size(), 2u);
  EXPECT_EQ(sink.instructions[0].name, "splash_mha_fwd_08d1d988.1");
  EXPECT_EQ(sink.instructions[1].name, "iota.1");
  EXPECT_EQ(sink.instructions[1].opcode, "iota");
}

TEST(TpuBundleProfileParser, FixtureWithRepeatedKernelAndScientificRatio) {
  const std::string text =
      ReadTestFile(std::string(XLADB_FIXTURE_DIR) + "/tpu_utilization/bundle_profile.txt");
  ASSERT_FALSE(text.empty());
  VectorSink sink;
  TpuBundleProfileParser parser(&sink);
  ASSERT_TRUE(ParseText(parser, text).ok());
  EXPECT_EQ(parser.unknown_lines(), 0);
  EXPECT_TRUE(sink.issues.empty()) << sink.issues.front().reason;

  ASSERT_EQ(sink.blocks.size(), 4u);
  const std::vector<std::string> kernels = {"<no-hlo-instruction>", "fusion.3", "<no-hlo-instruction>", "fusion.3"};
  for (size_t i = 0; i < kernels.size(); ++i) EXPECT_EQ(sink.blocks[i].kernel, kernels[i]);

  ASSERT_EQ(sink.instructions.size(), 1u);  // fusion.3 appears twice, is emitted once
  EXPECT_EQ(sink.instructions[0].opcode, "fusion");
  EXPECT_EQ(sink.instructions[0].op_name, "jit(step)/add");
  EXPECT_EQ(sink.instructions[0].source_line, 42);

  ASSERT_EQ(sink.counters.size(), 17u);
  const auto& tiny = sink.counters[10];
  EXPECT_EQ(tiny.block_ordinal, 1);
  EXPECT_EQ(tiny.kernel, "fusion.3");
  EXPECT_EQ(tiny.counter, "XLU_0 transpose");
  EXPECT_EQ(tiny.numerator, 1);
  EXPECT_EQ(tiny.denominator, 15135);
  EXPECT_EQ(tiny.ratio_text, "6.6072e-05");
  EXPECT_DOUBLE_EQ(tiny.ratio, 6.6072e-05);
  EXPECT_EQ(sink.counters[16].block_ordinal, 3);
  EXPECT_EQ(sink.counters[16].counter, "VECTOR_EUP");
}

TEST(TpuBundleProfileParser, InvariantViolationsNameTheValues) {
  VectorSink sink;
  TpuBundleProfileParser parser(&sink);
  ASSERT_TRUE(ParseText(parser,
                        "HLO: <no-hlo-instruction>\n"
                        " - VECTOR_ALU: (5/4) - 1.25\n"
                        " - SCALAR_ALU: (1/3) - 0.3\n"
                        " - VECTOR_EUP: (1/3) - 0.333333\n")
                  .ok());
  EXPECT_EQ(sink.counters.size(), 3u);
  ASSERT_EQ(sink.CountIssues(Severity::kInvariant), 2u);
  EXPECT_NE(sink.issues[0].reason.find("achieved 5 exceeds peak 4"), std::string::npos) << sink.issues[0].reason;
  EXPECT_NE(sink.issues[1].reason.find("ratio 0.3 is not 1/3 = 0.333333"), std::string::npos) << sink.issues[1].reason;
}

// A ratio printed as `nan` or `inf` (0/0, a division libtpu might make) keeps its counter: the ratio is the
// quotient (0 for 0/0), its text as printed, and the line an invariant issue. Stored as NaN, SQLite's REAL
// would take it as NULL and refuse the file's rows (utilization_counters.ratio is NOT NULL).
TEST(TpuBundleProfileParser, ARatioThatIsNotAFiniteNumberKeepsItsCounter) {
  VectorSink sink;
  TpuBundleProfileParser parser(&sink);
  ASSERT_TRUE(ParseText(parser,
                        "HLO: <no-hlo-instruction>\n"
                        " - SMEM_SPILL_COUNT: (0/0) - nan\n"
                        " - VECTOR_ALU: (1/4) - inf\n"
                        " - SCALAR_ALU: (1/2) - 0.5\n")
                  .ok());
  ASSERT_EQ(sink.counters.size(), 3u);
  EXPECT_EQ(sink.counters[0].ratio, 0.0);
  EXPECT_EQ(sink.counters[0].ratio_text, "nan");
  EXPECT_EQ(sink.counters[1].ratio, 0.25);
  EXPECT_EQ(sink.counters[1].ratio_text, "inf");
  EXPECT_EQ(sink.counters[2].ratio, 0.5);
  ASSERT_EQ(sink.CountIssues(Severity::kInvariant), 2u);
  EXPECT_NE(sink.issues[0].reason.find("ratio nan is not a finite number; stored as 0/0 = 0"), std::string::npos)
      << sink.issues[0].reason;
  EXPECT_NE(sink.issues[1].reason.find("ratio inf is not a finite number; stored as 1/4 = 0.25"), std::string::npos)
      << sink.issues[1].reason;
}

TEST(TpuBundleProfileParser, BadNumbersAndStrayLinesDoNotCrash) {
  VectorSink sink;
  TpuBundleProfileParser parser(&sink);
  ASSERT_TRUE(ParseText(parser,
                        " - VECTOR_ALU: (1/2) - 0.5\n"                       // before any block
                        "HLO: <no-hlo-instruction>\n"
                        " - VECTOR_ALU: (99999999999999999999/2) - 0.5\n"     // past int64
                        " - VECTOR_EUP: (-1/2) - -0.5\n"                     // negative
                        " - CMEM_LOAD (1/2) 0.5\n"                           // not the counter shape
                        "HLO: not an instruction\n"
                        " - SCALAR_ALU: (1/2) - 0.5\n")
                  .ok());
  EXPECT_EQ(parser.unknown_lines(), 2);
  EXPECT_EQ(sink.CountIssues(Severity::kInvariant), 2u);
  EXPECT_EQ(sink.CountIssues(Severity::kWarning), 1u);
  ASSERT_EQ(sink.blocks.size(), 2u);
  EXPECT_EQ(sink.blocks[1].kernel, "not an instruction");
  ASSERT_EQ(sink.counters.size(), 1u);
  EXPECT_EQ(sink.counters[0].kernel, "not an instruction");
}

TEST(TpuBundleProfileParser, TextWithoutBlocksIsAnError) {
  VectorSink sink;
  TpuBundleProfileParser parser(&sink);
  EXPECT_EQ(ParseText(parser, "== CAPACTIY:\n  MXU|  XLU\n").code(), Status::Code::kDataLoss);
  EXPECT_EQ(sink.CountIssues(Severity::kError), 1u);
}

TEST(TpuBundleProfileParser, EveryCorpusProfileParsesCleanly) {
  const std::filesystem::path dir = std::filesystem::path(XLADB_CORPUS_DIR) / "public";
  if (!std::filesystem::exists(dir)) GTEST_SKIP() << "corpus not present: " << dir;
  int files = 0;
  size_t blocks = 0;
  size_t counters = 0;
  for (const auto& entry : std::filesystem::directory_iterator(dir)) {
    if (!entry.path().filename().string().ends_with("__bundle-profile.txt")) continue;
    ++files;
    VectorSink sink;
    TpuBundleProfileParser parser(&sink);
    ASSERT_TRUE(ParseText(parser, ReadTestFile(entry.path().string())).ok()) << entry.path();
    EXPECT_EQ(parser.unknown_lines(), 0) << entry.path();
    EXPECT_TRUE(sink.issues.empty()) << entry.path() << ": " << sink.issues.front().reason;
    blocks += sink.blocks.size();
    counters += sink.counters.size();
  }
  EXPECT_EQ(files, 30);
  EXPECT_EQ(blocks, 135u);     // grep -c '^HLO: '
  EXPECT_EQ(counters, 4557u);  // grep -c '^ - '
}

}  // namespace
}  // namespace xladb::ingest
