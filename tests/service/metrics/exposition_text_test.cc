// ExpositionText (service/metrics/exposition_text.h): the bytes of Prometheus's text format 0.0.4, written by
// hand here from the format's rules, not from the writer.
#include "service/metrics/exposition_text.h"

#include <gtest/gtest.h>

#include <cmath>
#include <cstdlib>
#include <limits>

namespace xladb::service::metrics {
namespace {

TEST(ExpositionText, FamilyHeaderThenSamples) {
  ExpositionText out;
  out.Family("xladb_ingest_files_total", MetricType::kCounter, "Files ingested, by verdict.");
  out.Sample("xladb_ingest_files_total", {{"verdict", "error"}}, int64_t{3});
  out.Sample("xladb_ingest_files_total", {{"verdict", "ingested"}, {"source", "watch"}}, int64_t{12});
  out.Family("xladb_ingest_queue_depth", MetricType::kGauge, "Jobs waiting.");
  out.Sample("xladb_ingest_queue_depth", {}, int64_t{0});
  EXPECT_EQ(out.Take(),
            "# HELP xladb_ingest_files_total Files ingested, by verdict.\n"
            "# TYPE xladb_ingest_files_total counter\n"
            "xladb_ingest_files_total{verdict=\"error\"} 3\n"
            "xladb_ingest_files_total{verdict=\"ingested\",source=\"watch\"} 12\n"
            "# HELP xladb_ingest_queue_depth Jobs waiting.\n"
            "# TYPE xladb_ingest_queue_depth gauge\n"
            "xladb_ingest_queue_depth 0\n");
}

TEST(ExpositionText, LabelValuesEscapeBackslashQuoteAndNewline) {
  ExpositionText out;
  out.Sample("m", {{"path", "C:\\dumps\\\"new\"\nline"}}, int64_t{1});
  EXPECT_EQ(out.Take(), "m{path=\"C:\\\\dumps\\\\\\\"new\\\"\\nline\"} 1\n");
}

TEST(ExpositionText, HelpEscapesBackslashAndNewlineButNotQuotes) {
  ExpositionText out;
  out.Family("m", MetricType::kHistogram, "a \"quoted\" back\\slash\nsecond line");
  EXPECT_EQ(out.Take(), "# HELP m a \"quoted\" back\\\\slash\\nsecond line\n# TYPE m histogram\n");
}

TEST(ExpositionText, NamesOutsideTheGrammarAreRepairedNotWritten) {
  ExpositionText out;
  out.Sample("9bad-name", {{"le:x", "v"}, {"", "w"}}, int64_t{1});
  out.Sample("ok:colon_name", {}, int64_t{2});
  // A metric name may not start with a digit or hold '-'; a label name may hold no ':' and not be empty.
  EXPECT_EQ(out.Take(), "_bad_name{le_x=\"v\",_=\"w\"} 1\nok:colon_name 2\n");
}

TEST(ExpositionText, ValuesAsTheFormatSpellsThem) {
  EXPECT_EQ(FormatMetricValue(std::numeric_limits<double>::infinity()), "+Inf");
  EXPECT_EQ(FormatMetricValue(-std::numeric_limits<double>::infinity()), "-Inf");
  EXPECT_EQ(FormatMetricValue(std::nan("")), "NaN");
  EXPECT_EQ(FormatMetricValue(0.1), "0.1");
  EXPECT_EQ(FormatMetricValue(2.5), "2.5");
  EXPECT_EQ(FormatMetricValue(0), "0");
  EXPECT_EQ(FormatMetricValue(1795771786.139917), "1795771786.139917");
  // Shortest text that reads back the same double.
  for (double v : {1.0 / 3, 1e-7, 123456789.123, 6.02214076e23}) {
    EXPECT_EQ(std::strtod(FormatMetricValue(v).c_str(), nullptr), v) << FormatMetricValue(v);
  }
  ExpositionText out;
  out.Sample("big", {}, int64_t{9007199254740993});  // 2^53 + 1: exact, not rounded through a double
  EXPECT_EQ(out.Take(), "big 9007199254740993\n");
}

}  // namespace
}  // namespace xladb::service::metrics
