// The gate's reports (cli/check_report.h) on answers built by hand with known numbers.
#include "cli/check_report.h"
#include "service/human_bytes.h"

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <string>

namespace xladb::cli {
namespace {

// A run pair: jit_a grew by 64 MiB at model.py:123 (three buffers), jit_b shrank, jit_c unchanged.
v1::CheckRunResponse Report() {
  v1::CheckRunResponse r;
  r.set_verdict(v1::CheckRunResponse::FAIL);
  r.set_reason("1 module regressed, 1 improved, 1 unchanged against nightly-1102");
  r.set_run_name("pr-7");
  r.set_baseline_run_name("nightly-1102");
  r.set_baseline_selected_by("label:branch=main");
  r.add_metrics("total_bytes");
  r.mutable_summary()->set_regressed(1);
  r.mutable_summary()->set_improved(1);
  r.mutable_summary()->set_unchanged(1);
  auto add = [&](const std::string& name, v1::CheckedModule::Status status, int64_t base, int64_t cur) {
    auto* m = r.add_modules();
    m->set_module(name);
    m->set_stage("after_optimizations");
    m->set_xla_module_id(7);
    m->set_baseline_xla_module_id(-1 + 8);
    m->set_matched_by("identity");
    m->set_status(status);
    auto* d = m->add_metrics();
    d->set_metric("total_bytes");
    d->set_baseline(base);
    d->set_current(cur);
    d->set_delta(cur - base);
    d->set_regressed(status == v1::CheckedModule::REGRESSED);
    m->set_baseline_peak_time(-1);
    m->set_current_peak_time(-1);
    return m;
  };
  add("jit_c", v1::CheckedModule::UNCHANGED, 100, 100);
  add("jit_b", v1::CheckedModule::IMPROVED, 2048, 1024);
  auto* a = add("jit_<a>&\"", v1::CheckedModule::REGRESSED, int64_t{1} << 30, (int64_t{1} << 30) + (int64_t{64} << 20));
  a->set_attribution_count(3);
  a->set_attribution_scope("values");
  a->set_baseline_peak_time(120);
  a->set_current_peak_time(340);
  a->set_baseline_schedule_length(800);
  a->set_current_schedule_length(800);
  auto* s = a->add_by_source();
  s->set_source("model.py:123");
  s->set_delta(int64_t{64} << 20);
  s->set_buffers(3);
  auto* b = a->add_attribution();
  b->set_change(v1::BufferChange::GREW);
  b->set_instruction_a("fusion.1");
  b->set_instruction_b("fusion.9");
  b->set_shape_index("{}");
  b->set_matched_by("origin");
  b->set_size_a(1024);
  b->set_size_b(1024 + (int64_t{32} << 20));
  b->set_delta(int64_t{32} << 20);
  b->set_source("model.py:123");
  auto* ret = r.add_retraces();
  ret->set_module("jit_step");
  ret->set_baseline_compiles(1);
  ret->set_current_compiles(3);
  return r;
}

TEST(CheckReport, JsonIsTheDocumentedSchema) {
  auto j = nlohmann::json::parse(RenderCheckReport(Report(), CheckReportFormat::kJson));
  EXPECT_EQ(j["verdict"], "fail");
  EXPECT_EQ(j["baseline"], "nightly-1102");
  EXPECT_EQ(j["baseline_selected_by"], "label:branch=main");
  EXPECT_EQ(j["summary"]["regressed"], 1);
  EXPECT_EQ(j["summary"]["ambiguous"], 0);
  ASSERT_EQ(j["modules"].size(), 3u);
  const auto& a = j["modules"][2];
  EXPECT_EQ(a["status"], "regressed");
  EXPECT_EQ(a["metrics"]["total_bytes"]["delta"], int64_t{64} << 20);
  EXPECT_EQ(a["attribution"][0]["buffer"], "fusion.9");
  EXPECT_EQ(a["attribution"][0]["baseline_buffer"], "fusion.1");
  EXPECT_EQ(a["attribution"][0]["matched_by"], "origin");
  EXPECT_EQ(a["by_source"][0]["buffers"], 3);
  EXPECT_EQ(a["peak"]["moved"], true);
  EXPECT_TRUE(j["modules"][0]["matched_by"].is_string());
  EXPECT_EQ(j["retraces"][0]["current_compiles"], 3);
  // Unknown values are null.
  v1::CheckRunResponse none;
  none.set_verdict(v1::CheckRunResponse::INCONCLUSIVE);
  auto n = nlohmann::json::parse(RenderCheckReport(none, CheckReportFormat::kJson));
  EXPECT_TRUE(n["baseline"].is_null());
  EXPECT_EQ(n["verdict"], "inconclusive");
}

TEST(CheckReport, MarkdownLeadsWithTheVerdictAndOrdersBySizeOfChange) {
  const std::string md = RenderCheckReport(Report(), CheckReportFormat::kMarkdown);
  EXPECT_EQ(md.substr(0, md.find('\n')),
            "**xladb check: FAIL**: 1 module regressed, 1 improved, 1 unchanged against `nightly-1102`");
  EXPECT_NE(md.find("- +64.0 MiB from `model.py:123` (3 buffers)"), std::string::npos) << md;
  // No peak_metric given: the peak is XLA's.
  EXPECT_NE(md.find("XLA's peak moved from t=120 of 800 to t=340 of 800."), std::string::npos);
  // The regressed module's row comes before the improved one; the unchanged one is not listed.
  EXPECT_LT(md.find("| regressed |"), md.find("| improved |"));
  EXPECT_EQ(md.find("jit_c"), std::string::npos);
  // The module name is a code span in the table (where < > are text and nothing is decoded) and HTML-escaped
  // in the raw HTML of the <details> summary; tests/e2e/test_inert_text.py renders hostile names.
  EXPECT_NE(md.find("| `jit_<a>&\"#"), std::string::npos) << md;
  EXPECT_NE(md.find("<summary><code>jit_&lt;a&gt;&amp;&quot;#"), std::string::npos) << md;
  EXPECT_NE(md.find("compiled 3 times, was 1"), std::string::npos);
}

TEST(CheckReport, MarkdownStaysUnderItsBudgetAndSaysItTruncated) {
  v1::CheckRunResponse r = Report();
  const v1::CheckedModule regressed = r.modules(2);
  for (int i = 0; i < 5000; ++i) {
    auto* m = r.add_modules();
    *m = regressed;
    m->set_module("jit_model_" + std::to_string(i) + "_with_a_rather_long_name_to_fill_the_table");
  }
  const std::string md = RenderCheckReport(r, CheckReportFormat::kMarkdown);
  EXPECT_LT(md.size(), size_t{1} << 20);
  EXPECT_NE(md.find("Truncated to stay under"), std::string::npos);
  EXPECT_EQ(md.back(), '\n');
  size_t open = 0, close = 0;
  for (size_t at = md.find("<details>"); at != std::string::npos; at = md.find("<details>", at + 1)) ++open;
  for (size_t at = md.find("</details>"); at != std::string::npos; at = md.find("</details>", at + 1)) ++close;
  EXPECT_EQ(open, close);
  EXPECT_GT(open, 0u);
}

TEST(CheckReport, JunitCountsAndEscapes) {
  const std::string xml = RenderCheckReport(Report(), CheckReportFormat::kJunit);
  EXPECT_NE(xml.find("tests=\"3\" failures=\"1\" errors=\"0\" skipped=\"0\""), std::string::npos) << xml;
  EXPECT_NE(xml.find("name=\"jit_&lt;a&gt;&amp;&quot;#7\""), std::string::npos) << xml;
  size_t cases = 0;
  for (size_t at = xml.find("<testcase "); at != std::string::npos; at = xml.find("<testcase ", at + 1)) ++cases;
  EXPECT_EQ(cases, 3u);
}

// Issue 26: the table is for a terminal, so names from dumps show their control and bidi characters escaped.
TEST(CheckReport, TheTableShowsControlCharactersAsEscapes) {
  v1::CheckRunResponse r = Report();
  r.mutable_modules(2)->set_module("jit_\x1b]0;PWN\x07\u202e");
  r.mutable_modules(2)->mutable_by_source(0)->set_source("m\x1b[2J.py:1");
  const std::string table = RenderCheckReport(r, CheckReportFormat::kTable);
  EXPECT_NE(table.find("jit_\\x1b]0;PWN\\x07\\u202e#7"), std::string::npos) << table;
  EXPECT_NE(table.find("from m\\x1b[2J.py:1"), std::string::npos) << table;
  EXPECT_EQ(table.find_first_of("\x1b\x07"), std::string::npos);
  EXPECT_EQ(table.find("\u202e"), std::string::npos);
}

// Issue 22: two significant digits, never "+0.0%" for a change that is there.
TEST(CheckReport, PercentChangeKeepsTwoSignificantDigits) {
  using service::PercentChange;
  // +1 MiB on a 5.3 GiB module: 1048576 / 5690831667 = 0.0184…%.
  EXPECT_EQ(PercentChange(5690831667, 1048576), "+0.018%");
  EXPECT_EQ(PercentChange(6144, 4096), "+67%");           // 66.67 → whole percents from 10
  EXPECT_EQ(PercentChange(580608, -435456), "-75%");
  EXPECT_EQ(PercentChange(1000, 15), "+1.5%");
  EXPECT_EQ(PercentChange(100000, 19), "+0.019%");
  EXPECT_EQ(PercentChange(100, 0), "0%");
  EXPECT_EQ(PercentChange(0, 5), "new");
}

TEST(CheckReport, OneBufferIsSingularInEveryFormat) {
  v1::CheckRunResponse r = Report();
  r.mutable_modules(2)->mutable_by_source(0)->set_buffers(1);
  for (CheckReportFormat f : {CheckReportFormat::kTable, CheckReportFormat::kMarkdown, CheckReportFormat::kJunit}) {
    const std::string text = RenderCheckReport(r, f);
    EXPECT_NE(text.find("(1 buffer)"), std::string::npos) << text;
    EXPECT_EQ(text.find("(1 buffers)"), std::string::npos) << text;
  }
}

// The peak named is the one of the metric that regressed.
TEST(CheckReport, NamesThePeakOfTheMetricThatRegressed) {
  v1::CheckRunResponse r = Report();
  r.mutable_modules(2)->set_peak_metric("live_peak_padded_bytes");
  r.mutable_modules(2)->set_baseline_peak_time(11);
  r.mutable_modules(2)->set_current_peak_time(11);
  std::string table = RenderCheckReport(r, CheckReportFormat::kTable);
  EXPECT_NE(table.find("The padded live peak stayed at t=11 of the schedule."), std::string::npos) << table;
  r.mutable_modules(2)->set_peak_metric("peak_bytes");
  table = RenderCheckReport(r, CheckReportFormat::kTable);
  EXPECT_NE(table.find("XLA's peak stayed at t=11 of the schedule."), std::string::npos) << table;
}

TEST(CheckReport, ReshapedPairsShowBothSignaturesAndTheRollUp) {
  v1::CheckRunResponse r = Report();
  auto* m = r.add_modules();
  m->set_module("jit__accumulate_tau_into_window");
  m->set_stage("after_optimizations");
  m->set_xla_module_id(12);
  m->set_baseline_xla_module_id(9);
  m->set_matched_by("name");
  m->set_status(v1::CheckedModule::RESHAPED);
  m->set_reshaped(true);
  m->set_entry_signature("(c128[21,9,40,40]) -> c128[21,9,40,40]");
  m->set_baseline_entry_signature("(c128[21,9,80,80]) -> c128[21,9,80,80]");
  auto* n = r.add_by_name();
  n->set_module("jit__accumulate_tau_into_window");
  n->set_stage("after_optimizations");
  n->set_baseline_compiles(8);
  n->set_current_compiles(4);
  n->set_headline_metric("total_bytes");
  auto* nm = n->add_metrics();
  nm->set_metric("total_bytes");
  nm->set_baseline_max(int64_t{40} << 20);
  nm->set_current_max(int64_t{10} << 20);
  nm->set_baseline_sum(int64_t{320} << 20);
  nm->set_current_sum(int64_t{40} << 20);
  const std::string sig = "(c128[21,9,80,80]) -> c128[21,9,80,80] → (c128[21,9,40,40]) -> c128[21,9,40,40]";
  const std::string line =
      "jit__accumulate_tau_into_window: 8 → 4 compiles, largest total_bytes 40.0 MiB → 10.0 MiB (-75%)";
  const std::string table = RenderCheckReport(r, CheckReportFormat::kTable);
  EXPECT_NE(table.find("signature: " + sig), std::string::npos) << table;
  EXPECT_NE(table.find(line), std::string::npos) << table;
  const std::string md = RenderCheckReport(r, CheckReportFormat::kMarkdown);
  EXPECT_NE(md.find("`(c128[21,9,80,80]) -> c128[21,9,80,80]` → `(c128[21,9,40,40]) -> c128[21,9,40,40]`"),
            std::string::npos) << md;
  EXPECT_NE(md.find("- `jit__accumulate_tau_into_window`: 8 → 4 compiles"), std::string::npos) << md;
  const std::string junit = RenderCheckReport(r, CheckReportFormat::kJunit);
  EXPECT_NE(junit.find("<skipped message=\"reshaped: (c128[21,9,80,80]) -&gt; c128[21,9,80,80] → "
                       "(c128[21,9,40,40]) -&gt; c128[21,9,40,40]"),
            std::string::npos) << junit;
  const auto j = nlohmann::json::parse(RenderCheckReport(r, CheckReportFormat::kJson));
  EXPECT_EQ(j["modules"][3]["status"], "reshaped");
  EXPECT_EQ(j["modules"][3]["reshaped"], true);
  EXPECT_EQ(j["modules"][3]["baseline_entry_signature"], "(c128[21,9,80,80]) -> c128[21,9,80,80]");
  EXPECT_EQ(j["modules"][0]["baseline_entry_signature"], "");
  EXPECT_EQ(j["modules"][0]["reshaped"], false);
  EXPECT_EQ(j["by_name"][0]["compiles"], (nlohmann::json{{"baseline", 8}, {"current", 4}}));
  EXPECT_EQ(j["by_name"][0]["metrics"]["total_bytes"]["baseline_sum"], int64_t{320} << 20);
}

TEST(CheckReport, HumanBytes) {
  using service::HumanBytes;
  EXPECT_EQ(HumanBytes(512), "512 B");
  EXPECT_EQ(HumanBytes(int64_t{64} << 20, true), "+64.0 MiB");
  EXPECT_EQ(HumanBytes(-1536, true), "-1.5 KiB");
  EXPECT_EQ(HumanBytes(0, true), "0 B");
}

}  // namespace
}  // namespace xladb::cli
