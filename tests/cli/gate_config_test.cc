// The gate's TOML config (cli/gate_config.h): every field read into the request, and every kind of mistake
// refused with the key and the line it is on (counted in the test's own text).
#include "cli/gate_config.h"

#include <gtest/gtest.h>

#include <string>
#include <tuple>

namespace xladb::cli {
namespace {

v1::CheckRunRequest Parse(const std::string& text, Status* st) {
  v1::CheckRunRequest req;
  *st = ParseGateConfig(text, "gate.toml", &req);
  return req;
}

TEST(GateConfig, ReadsEveryField) {
  const std::string text =
      "metrics = [\"total_bytes\", \"color0_total_bytes\"]\n"
      "max_growth_bytes = 1024\n"
      "max_growth_percent = 2\n"
      "fail_on_retrace_growth = true\n"
      "ignore = [\"jit_debug_*\"]\n"
      "[[module]]\n"
      "pattern = \"jit_train_step*\"\n"
      "max_growth_percent = 1.5\n"
      "[[accept]]\n"
      "pattern = \"jit_fft\"\n"
      "metric = \"total_bytes\"\n"
      "up_to_bytes = 123456789\n"
      "reason = \"PR 1234\"\n";
  Status st;
  v1::CheckRunRequest req = Parse(text, &st);
  ASSERT_TRUE(st.ok()) << st.ToString();
  ASSERT_EQ(req.metrics_size(), 2);
  EXPECT_EQ(req.metrics(1), "color0_total_bytes");
  EXPECT_EQ(req.limit().max_growth_bytes(), 1024);
  EXPECT_DOUBLE_EQ(req.limit().max_growth_percent(), 2.0);
  EXPECT_TRUE(req.fail_on_retrace_growth());
  ASSERT_EQ(req.ignore_size(), 1);
  EXPECT_EQ(req.ignore(0), "jit_debug_*");
  ASSERT_EQ(req.module_limits_size(), 1);
  EXPECT_EQ(req.module_limits(0).pattern(), "jit_train_step*");
  EXPECT_EQ(req.module_limits(0).limit().max_growth_bytes(), 0);
  EXPECT_DOUBLE_EQ(req.module_limits(0).limit().max_growth_percent(), 1.5);
  ASSERT_EQ(req.accepted_size(), 1);
  EXPECT_EQ(req.accepted(0).pattern(), "jit_fft");
  EXPECT_EQ(req.accepted(0).metric(), "total_bytes");
  EXPECT_EQ(req.accepted(0).up_to_bytes(), 123456789);
  EXPECT_EQ(req.accepted(0).reason(), "PR 1234");
}

// Each mistake: the message names the file, the line and the key.
TEST(GateConfig, MistakesNameTheKeyAndLine) {
  struct Case {
    const char* text;
    const char* wanted;  // in the message
  };
  const Case cases[] = {
      {"max_growth_bytes = 0\nmax_growth_byte = 5\n", "gate.toml:2: max_growth_byte: unknown key"},
      {"[[module]]\npattern = \"x\"\n\nmax_growth_byte = 5\n", "gate.toml:4: module[1].max_growth_byte: unknown key"},
      {"max_growth_bytes = -1\n", "gate.toml:1: max_growth_bytes: must be at least 0"},
      {"max_growth_bytes = \"big\"\n", "gate.toml:1: max_growth_bytes: must be an integer"},
      {"\nmax_growth_percent = -0.5\n", "gate.toml:2: max_growth_percent: must not be negative"},
      {"metrics = [\"total_bytes\", \"peak\"]\n", "gate.toml:1: metrics: unknown metric 'peak'"},
      {"ignore = [\"jit_[\"]\n", "has a '[' without a closing ']'"},
      {"[[accept]]\npattern = \"x\"\n", "gate.toml:1: accept[1]: needs `reason`"},
      {"[[accept]]\npattern = \"x\"\nreason = \"\"\n", "gate.toml:3: accept[1].reason: must not be empty"},
      {"[[accept]]\npattern = \"x\"\nreason = \"r\"\nup_to_bytes = 0\n", "gate.toml:4: accept[1].up_to_bytes: must be at least 1"},
      {"[[module]]\npattern = \"x\"\n", "gate.toml:1: module[1]: needs max_growth_bytes or max_growth_percent"},
      {"fail_on_retrace_growth = 1\n", "gate.toml:1: fail_on_retrace_growth: must be true or false"},
      {"max_growth_bytes = 99999999999999999999\n", "gate.toml:1"},
      {"max_growth_bytes = \n", "gate.toml:1"},
      {"\non_added = \"judge\"\n", "gate.toml:2: on_added: unknown policy 'judge' (report, fail or inconclusive)"},
      {"on_removed = \"warn\"\n", "gate.toml:1: on_removed: unknown policy 'warn'"},
      {"\n\non_reshaped = \"ignore\"\n",
       "gate.toml:3: on_reshaped: unknown policy 'ignore' (report, judge, fail or inconclusive)"},
      {"on_reshaped = true\n", "gate.toml:1: on_reshaped: must be a string"},
  };
  for (const Case& c : cases) {
    Status st;
    Parse(c.text, &st);
    EXPECT_EQ(st.code(), Status::Code::kInvalidArgument) << c.text;
    EXPECT_NE(st.message().find(c.wanted), std::string::npos) << c.text << "\ngot: " << st.message();
  }
}

TEST(GateConfig, ReadsThePolicies) {
  Status st;
  v1::CheckRunRequest r = Parse("on_added = \"fail\"\non_removed = \"inconclusive\"\non_reshaped = \"judge\"\n", &st);
  ASSERT_TRUE(st.ok()) << st.message();
  EXPECT_EQ(r.on_added(), "fail");
  EXPECT_EQ(r.on_removed(), "inconclusive");
  EXPECT_EQ(r.on_reshaped(), "judge");
  v1::CheckRunRequest none = Parse("max_growth_bytes = 0\n", &st);
  ASSERT_TRUE(st.ok()) << st.message();
  EXPECT_EQ(none.on_added(), "");  // "" is report
}

TEST(GateConfig, SizesWithUnits) {
  EXPECT_EQ(ParseByteSize("16106127360"), 16106127360);
  EXPECT_EQ(ParseByteSize("15.5GiB"), 16642998272);  // 15.5 × 2^30
  EXPECT_EQ(ParseByteSize("512 MiB"), 536870912);
  EXPECT_EQ(ParseByteSize("8KiB"), 8192);
  EXPECT_EQ(ParseByteSize("1.5GB"), 1500000000);
  EXPECT_EQ(ParseByteSize("100B"), 100);
  for (const char* bad : {"", "GiB", "1.5", "-5", "3 parsecs", "1..5GiB", ".5GiB", "5.GiB", "1  GiB", "1gib",
                          "99999999999TiB"}) {
    EXPECT_EQ(ParseByteSize(bad), std::nullopt) << bad;
  }
}

TEST(GateConfig, ReadsBudgetsInOrder) {
  Status st;
  v1::CheckRunRequest r = Parse("warn_percent = 80\n[[budget]]\npattern = \"jit_train*\"\nmetric = "
                                "\"live_peak_padded_bytes\"\nmax_bytes = \"15.5GiB\"\n[[budget]]\nmetric = "
                                "\"total_bytes\"\nmax_bytes = 1024\n",
                                &st);
  ASSERT_TRUE(st.ok()) << st.message();
  EXPECT_EQ(r.warn_percent(), 80);
  ASSERT_EQ(r.budgets_size(), 2);
  EXPECT_EQ((std::tuple(r.budgets(0).pattern(), r.budgets(0).metric(), r.budgets(0).max_bytes())),
            (std::tuple(std::string("jit_train*"), std::string("live_peak_padded_bytes"), int64_t{16642998272})));
  EXPECT_EQ((std::tuple(r.budgets(1).pattern(), r.budgets(1).metric(), r.budgets(1).max_bytes())),
            (std::tuple(std::string(""), std::string("total_bytes"), int64_t{1024})));
  Parse("[[budget]]\nmetric = \"total_bytes\"\nmax_bytes = 0\n", &st);
  EXPECT_NE(st.message().find("gate.toml:3: budget[1].max_bytes: must be a size above 0"), std::string::npos)
      << st.message();
  Parse("[[budget]]\nmetric = \"peak\"\nmax_bytes = 1\n", &st);
  EXPECT_NE(st.message().find("budget[1].metric: unknown metric 'peak'"), std::string::npos) << st.message();
  Parse("[[budget]]\nmax_bytes = 1\n", &st);
  EXPECT_NE(st.message().find("needs `metric`"), std::string::npos) << st.message();
}

TEST(GateConfig, MissingFileIsNotFound) {
  v1::CheckRunRequest req;
  Status st = LoadGateConfig("/nonexistent/gate.toml", &req);
  EXPECT_EQ(st.code(), Status::Code::kNotFound);
  EXPECT_NE(st.message().find("/nonexistent/gate.toml"), std::string::npos);
}

}  // namespace
}  // namespace xladb::cli
