#include "ingest/formats/tpu_utilization/tpu_per_bundle_utilization_parser.h"

#include <filesystem>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "tests/ingest/vector_sink.h"

namespace xladb::ingest {
namespace {

using Severity = IssueRecord::Severity;

struct Expected {
  const char* unit;
  int64_t numerator;
  int64_t denominator;
  const char* ratio;
};

void ExpectCounters(const VectorSink& sink, const std::vector<Expected>& expected) {
  ASSERT_EQ(sink.blocks.size(), 1u);
  EXPECT_EQ(sink.blocks[0].ordinal, 0);
  EXPECT_EQ(sink.blocks[0].kernel, "<all-bundles>");
  ASSERT_EQ(sink.counters.size(), expected.size());
  for (size_t i = 0; i < expected.size(); ++i) {
    const auto& c = sink.counters[i];
    EXPECT_EQ(c.block_ordinal, 0);
    EXPECT_EQ(c.kernel, "<all-bundles>");
    EXPECT_EQ(c.counter, expected[i].unit);
    EXPECT_EQ(c.numerator, expected[i].numerator) << c.counter;
    EXPECT_EQ(c.denominator, expected[i].denominator) << c.counter;
    EXPECT_EQ(c.ratio_text, expected[i].ratio) << c.counter;
    EXPECT_DOUBLE_EQ(c.ratio, static_cast<double>(expected[i].numerator) / expected[i].denominator);
  }
}

TEST(TpuPerBundleUtilizationParser, FixtureSumsCountsAndScalesCapacity) {
  const std::string text =
      ReadTestFile(std::string(XLADB_FIXTURE_DIR) + "/tpu_utilization/per_bundle_utilization.txt");
  ASSERT_FALSE(text.empty());
  VectorSink sink;
  TpuPerBundleUtilizationParser parser(&sink);
  ASSERT_TRUE(ParseText(parser, text).ok());
  EXPECT_EQ(parser.unknown_lines(), 0);
  EXPECT_TRUE(sink.issues.empty()) << sink.issues.front().reason;
  // 5 bundles; capacities 2 2 4 1 3 2 2.
  ExpectCounters(sink, {{"MXU", 3, 10, "0.3"},
                        {"XLU", 1, 10, "0.1"},
                        {"VALU", 7, 20, "0.35"},
                        {"EUP", 1, 5, "0.2"},
                        {"LOAD", 4, 15, "0.266667"},
                        {"STORE", 3, 10, "0.3"},
                        {"SALU", 5, 10, "0.5"}});
}

TEST(TpuPerBundleUtilizationParser, CountAboveCapacityIsAnInvariantIssue) {
  VectorSink sink;
  TpuPerBundleUtilizationParser parser(&sink);
  ASSERT_TRUE(ParseText(parser,
                        "== CAPACITY:\n"  // the corrected spelling is accepted too
                        "  MXU| VALU\n"
                        "    2     4\n"
                        "== UTILIZATION:\n"
                        "3 1\n"
                        "0 4\n")
                  .ok());
  ASSERT_EQ(sink.CountIssues(Severity::kInvariant), 1u);
  EXPECT_NE(sink.issues[0].reason.find("bundle 0: unit MXU count 3 exceeds its capacity 2"), std::string::npos)
      << sink.issues[0].reason;
  ASSERT_EQ(sink.counters.size(), 2u);
  EXPECT_EQ(sink.counters[0].numerator, 3);
  EXPECT_EQ(sink.counters[0].denominator, 4);
  EXPECT_EQ(sink.counters[1].numerator, 5);
  EXPECT_EQ(sink.counters[1].denominator, 8);
}

TEST(TpuPerBundleUtilizationParser, BadRowsAreReportedAndSkipped) {
  VectorSink sink;
  TpuPerBundleUtilizationParser parser(&sink);
  ASSERT_TRUE(ParseText(parser,
                        "== CAPACTIY:\n  MXU| VALU\n    2     4\n== UTILIZATION:\n"
                        "1 1\n"
                        "1\n"                       // too few counts
                        "99999999999999999999 0\n"  // past int64
                        "x y\n"                     // not a row
                        "1 2\n")
                  .ok());
  EXPECT_EQ(sink.CountIssues(Severity::kInvariant), 2u);
  EXPECT_EQ(parser.unknown_lines(), 1);
  ASSERT_EQ(sink.counters.size(), 2u);
  EXPECT_EQ(sink.counters[0].numerator, 2);
  EXPECT_EQ(sink.counters[0].denominator, 4);  // 2 bundles kept
  EXPECT_EQ(sink.counters[1].numerator, 3);
}

TEST(TpuPerBundleUtilizationParser, MissingUtilizationIsAnError) {
  VectorSink sink;
  TpuPerBundleUtilizationParser parser(&sink);
  EXPECT_EQ(ParseText(parser, "== CAPACTIY:\n  MXU| VALU\n    2     4\n").code(), Status::Code::kDataLoss);
  EXPECT_EQ(sink.CountIssues(Severity::kError), 1u);
  EXPECT_TRUE(sink.counters.empty());
}

std::string CorpusFile(const std::string& name) { return std::string(XLADB_CORPUS_DIR) + "/public/" + name; }

// Expected sums counted with awk over the rows after `== UTILIZATION:`.
TEST(TpuPerBundleUtilizationParser, CorpusCompilerReport) {
  const std::string path = CorpusFile("tpu_jab_comp_llo_1766453541462737132_TLP__per-bundle-utilization.txt");
  if (!std::filesystem::exists(path)) GTEST_SKIP() << "corpus not present: " << path;
  VectorSink sink;
  TpuPerBundleUtilizationParser parser(&sink);
  ASSERT_TRUE(ParseText(parser, ReadTestFile(path)).ok());
  EXPECT_EQ(parser.unknown_lines(), 0);
  EXPECT_TRUE(sink.issues.empty());
  // 207 bundles.
  ExpectCounters(sink, {{"MXU", 0, 414, "0"},
                        {"XLU", 0, 414, "0"},
                        {"VALU", 110, 828, "0.13285"},
                        {"EUP", 0, 207, "0"},
                        {"LOAD", 53, 621, "0.0853462"},
                        {"STORE", 7, 414, "0.0169082"},
                        {"SALU", 108, 414, "0.26087"}});
}

TEST(TpuPerBundleUtilizationParser, CorpusPallasKernelReport) {
  const std::string path =
      CorpusFile("tpu_jab_pk_llo_1768084151761831794_splash_mha_fwd_e9701070__per-bundle-utilization.txt");
  if (!std::filesystem::exists(path)) GTEST_SKIP() << "corpus not present: " << path;
  VectorSink sink;
  TpuPerBundleUtilizationParser parser(&sink);
  ASSERT_TRUE(ParseText(parser, ReadTestFile(path)).ok());
  EXPECT_EQ(parser.unknown_lines(), 0);
  EXPECT_TRUE(sink.issues.empty());
  // 1486 bundles.
  ExpectCounters(sink, {{"MXU", 754, 2972, "0.253701"},
                        {"XLU", 512, 2972, "0.172275"},
                        {"VALU", 2542, 5944, "0.427658"},
                        {"EUP", 384, 1486, "0.258412"},
                        {"LOAD", 1074, 4458, "0.240915"},
                        {"STORE", 1108, 2972, "0.372813"},
                        {"SALU", 451, 2972, "0.15175"}});
}

}  // namespace
}  // namespace xladb::ingest
