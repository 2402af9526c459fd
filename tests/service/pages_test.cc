// The pieces of the report pages that need no browser: escaping (service/pages/html_text.h), downsampling and
// drawing the memory chart (memory_chart.h), and the Report answer's request checks (query_answers.h). The
// pages themselves are loaded in Chromium by tests/e2e/test_pages.py.
#include <gtest/gtest.h>

#include <algorithm>
#include <numeric>
#include <random>
#include <regex>
#include <string>
#include <vector>

#include "service/pages/html_text.h"
#include "service/pages/memory_chart.h"
#include "service/query_answers.h"
#include "tests/store/test_dirs.h"

namespace xladb::service::pages {
namespace {

TEST(HtmlText, MarkupAndInvalidUtf8BecomeText) {
  EXPECT_EQ(Html("<script>alert('x') & \"y\"</script>"),
            "&lt;script&gt;alert(&#39;x&#39;) &amp; &quot;y&quot;&lt;/script&gt;");
  EXPECT_EQ(Html("jit_\xff\xfe"), "jit_\xEF\xBF\xBD\xEF\xBF\xBD");  // U+FFFD twice
  EXPECT_EQ(Html("plain_name.1{0}"), "plain_name.1{0}");
}

// Issue 26: a right-to-left override in a name would reorder what a page shows after it (a module read as
// another); pages show it as the text \u202e. Line breaks and other text stay.
TEST(HtmlText, BidiControlsAreShownNotApplied) {
  EXPECT_EQ(Html("jit_\u202egnp.exe<"), "jit_\\u202egnp.exe&lt;");
  EXPECT_EQ(Html("a\u2066b\u2069\n\u00e9"), "a\\u2066b\\u2069\n\u00e9");
  EXPECT_EQ(JsonText("dot.\u202b1\xff"), "dot.\\u202b1\xEF\xBF\xBD");
}

TEST(HtmlText, ScriptJsonCannotCloseItsBlock) {
  const std::string json = ScriptJson({{"name", "</script><!-- & -->"}});
  EXPECT_EQ(json.find('<'), std::string::npos);
  EXPECT_EQ(json.find('>'), std::string::npos);
  EXPECT_EQ(json.find('&'), std::string::npos);
  EXPECT_EQ(nlohmann::json::parse(json)["name"], "</script><!-- & -->");  // still the same string when parsed
}

TEST(HtmlText, UrlsAndNumbers) {
  EXPECT_EQ(UrlComponent("jit_step #1/a&b=c"), "jit_step%20%231%2Fa%26b%3Dc");
  EXPECT_EQ(GroupedNumber(18629632), "18,629,632");
  EXPECT_EQ(GroupedNumber(-1024), "-1,024");
  EXPECT_EQ(GroupedNumber(999), "999");
}

// A 100,000-time schedule with one spike: the chart keeps at most kChartPoints buckets, and the spike's
// bucket shows it exactly.
TEST(MemoryChart, DownsamplingKeepsThePeakExact) {
  std::mt19937_64 rng(7);
  std::vector<int64_t> bytes(100000);
  for (auto& b : bytes) b = static_cast<int64_t>(rng() % 1000000);
  bytes[71234] = 5000000;
  const ChartBuckets b = Downsample({&bytes}, kChartPoints);
  EXPECT_LE(b.starts.size(), kChartPoints);
  EXPECT_EQ(b.width, (100000 + kChartPoints - 1) / kChartPoints);
  const auto spike = static_cast<size_t>(71234 / b.width);
  EXPECT_EQ(*b.values[0][spike], 5000000);
  EXPECT_EQ(b.name_times[spike], 71234);
  for (size_t i = 0; i < b.starts.size(); ++i) {  // every bucket is the maximum of its times
    const auto first = bytes.begin() + b.starts[i];
    const auto last = bytes.begin() + std::min<int64_t>(b.starts[i] + b.width, 100000);
    ASSERT_EQ(*b.values[0][i], *std::max_element(first, last)) << i;
  }
}

TEST(MemoryChart, ShorterSeriesEndAndMarkersCarryExactFigures) {
  const std::vector<int64_t> head = {10, 40, 30}, base = {10, 20};
  const ChartBuckets b = Downsample({&head, &base}, 100);
  EXPECT_EQ(b.values[1][2], std::nullopt);
  const std::string html = RenderMemoryChart("chart-x", {{"logical", "head", &head}, {"base-logical", "base", &base}},
                                             {{"xla", "XLA <peak>", 1, 40}});
  EXPECT_NE(html.find("id=\"chart-x-peak-xla\" data-time=\"1\" data-bytes=\"40\""), std::string::npos);
  EXPECT_NE(html.find("XLA &lt;peak&gt;"), std::string::npos);
  EXPECT_EQ(html.find("XLA <peak>"), std::string::npos);
  const std::regex polyline("<polyline class=\"([a-z-]+)\"");
  EXPECT_EQ(std::distance(std::sregex_iterator(html.begin(), html.end(), polyline), std::sregex_iterator()), 2);
  EXPECT_NE(html.find("data-last-time=\"3\""), std::string::npos);  // times 0..2 drawn as [t, t+1)
}

TEST(MemoryChart, AMillionTimesStayASmallPage) {
  std::vector<int64_t> bytes(1000000);
  std::iota(bytes.begin(), bytes.end(), 0);
  std::vector<std::string> names(bytes.size(), "fusion.123456");
  const std::string html = RenderMemoryChart("chart-big", {{"logical", "logical", &bytes, &names}}, {});
  EXPECT_LT(html.size(), size_t{256} << 10);
}

TEST(ReportAnswer, RequestsAreChecked) {
  xladb::testing::TempDir tmp;
  auto db = store::Database::Open(tmp / "x.db");
  ASSERT_TRUE(db.ok());
  std::string html;
  v1::ReportRequest r;
  EXPECT_EQ(AnswerReport(**db, r, &html).code(), Status::Code::kInvalidArgument);  // no run
  r.set_run_name("nightly");
  EXPECT_EQ(AnswerReport(**db, r, &html).code(), Status::Code::kNotFound);  // no such run
  r.set_module("jit_step");
  r.set_baseline("base");
  EXPECT_EQ(AnswerReport(**db, r, &html).code(), Status::Code::kInvalidArgument);  // module and baseline
  v1::ReportRequest picks;
  picks.set_run_name("nightly");
  picks.set_xla_module_id(3);
  EXPECT_EQ(AnswerReport(**db, picks, &html).code(), Status::Code::kInvalidArgument);  // a pick without a module
  EXPECT_TRUE(html.empty());
}

}  // namespace
}  // namespace xladb::service::pages
