// The daemon's and the CLI's answers (service/query_answers.h) on a PostgreSQL store are the SQLite store's,
// field for field: every fixture folder is ingested into SQLite as the golden `fixtures` case does, copied
// into a real PostgreSQL (`xladb copy`), and each question is asked of both. The numbers the answers must
// hold come from the dumps (seed 000: 8 allocations, `Total bytes used: 18629632`); the rest must agree.
#include <gtest/gtest.h>

#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "service/query_answers.h"
#include "store/backend/database.h"
#include "store/admin/run_lifecycle.h"
#include "tests/postgres/both_backends.h"

namespace xladb {
namespace {

const std::vector<testing::DatedRun> kRuns = {
    {"buffer_assignment", "fixtures/buffer_assignment", 0}, {"hlo_module", "fixtures/hlo_module", 1},
    {"memory_report", "fixtures/memory_report", 2},         {"tpu_utilization", "fixtures/tpu_utilization", 4},
    {"seeds", "data/seeds", 6},                             {"gate_base", "fixtures/gate/base", 7},
    {"gate_head", "fixtures/gate/head", 8},                 {"report_base", "fixtures/report/base", 9},
    {"report_head", "fixtures/report/head", 10},
};

class AnswersOnBothBackends : public testing::CopiedStores {
 protected:
  AnswersOnBothBackends() : CopiedStores("answers") {}
  ::testing::AssertionResult Fill(store::Database& sqlite) override {
    const std::string tests_dir = std::string(XLADB_FIXTURE_DIR) + "/..";
    std::vector<testing::DatedRun> runs = kRuns;
    for (testing::DatedRun& run : runs) run.folder = tests_dir + "/" + run.folder;
    if (auto ingested = testing::IngestRuns(sqlite, runs); !ingested) return ingested;
    for (const auto& [run, commit] : {std::pair{"gate_base", "1111111"}, std::pair{"gate_head", "2222222"}}) {
      const Status relabeled = store::RelabelRun(sqlite, run, {{"branch", "main"}, {"commit", commit}}, {});
      if (!relabeled.ok()) return ::testing::AssertionFailure() << run << ": " << relabeled.ToString();
    }
    return ::testing::AssertionSuccess();
  }

  // Asks both stores; the answers (or the errors) must be the same. Returns SQLite's answer.
  template <typename Req, typename Resp>
  Resp Same(Status (*answer)(store::Database&, const Req&, Resp*), const Req& request) {
    Resp on_sqlite, on_postgres;
    const Status a = answer(*sqlite_, request, &on_sqlite);
    const Status b = answer(*postgres_, request, &on_postgres);
    EXPECT_EQ(a.ToString(), b.ToString()) << request.ShortDebugString();
    EXPECT_EQ(on_sqlite.DebugString(), on_postgres.DebugString()) << request.ShortDebugString();
    return on_sqlite;
  }
  std::string SameReport(const v1::ReportRequest& request) {
    std::string on_sqlite, on_postgres;
    const Status a = service::AnswerReport(*sqlite_, request, &on_sqlite);
    const Status b = service::AnswerReport(*postgres_, request, &on_postgres);
    EXPECT_TRUE(a.ok()) << a.ToString();
    EXPECT_EQ(a.ToString(), b.ToString()) << request.ShortDebugString();
    EXPECT_TRUE(on_sqlite == on_postgres) << request.ShortDebugString() << ": the HTML differs";
    return on_sqlite;
  }

};

v1::Label MakeLabel(const std::string& key, const std::string& value) {
  v1::Label l;
  l.set_key(key);
  l.set_value(value);
  return l;
}

TEST_F(AnswersOnBothBackends, ThePostgresStoreIsReadOnlyAndSaysSo) {
  EXPECT_EQ(postgres_->dialect(), store::SqlDialect::kPostgresql);
  EXPECT_FALSE(postgres_->is_sqlite());
  Status write = postgres_->Exec("DELETE FROM runs");
  EXPECT_FALSE(write.ok());
  EXPECT_NE(write.message().find("read-only"), std::string::npos) << write.ToString();
}

TEST_F(AnswersOnBothBackends, ListRunsWithLabelsPatternsAndPages) {
  v1::ListRunsRequest all;
  EXPECT_EQ(Same(&service::AnswerListRuns, all).runs_size(), std::size(kRuns));
  v1::ListRunsRequest main;
  *main.add_labels() = MakeLabel("branch", "main");
  const v1::ListRunsResponse labeled = Same(&service::AnswerListRuns, main);
  ASSERT_EQ(labeled.runs_size(), 2);
  for (const v1::Run& run : labeled.runs()) {  // each run its own labels, by key (set in Fill above)
    ASSERT_EQ(run.labels_size(), 2) << run.name();
    EXPECT_EQ(run.labels(0).key() + "=" + run.labels(0).value(), "branch=main");
    EXPECT_EQ(run.labels(1).key() + "=" + run.labels(1).value(),
              run.name() == "gate_base" ? "commit=1111111" : "commit=2222222");
  }
  v1::ListRunsRequest glob;
  glob.set_name_pattern("gate_*");
  EXPECT_EQ(Same(&service::AnswerListRuns, glob).runs_size(), 2);
  v1::ListRunsRequest klass;
  klass.set_name_pattern("[hm]*_[^x]*");  // hlo_module, memory_report
  EXPECT_EQ(Same(&service::AnswerListRuns, klass).runs_size(), 2);
  v1::ListRunsRequest paged;
  paged.set_page_size(4);
  auto first = Same(&service::AnswerListRuns, paged);
  ASSERT_EQ(first.runs_size(), 4);
  paged.set_page_token(first.next_page_token());
  EXPECT_EQ(Same(&service::AnswerListRuns, paged).runs_size(), 4);
  v1::GetRunRequest get;
  get.set_run_name("seeds");
  EXPECT_EQ(Same(&service::AnswerGetRun, get).name(), "seeds");
  get.set_run_name("no-such-run");
  Same(&service::AnswerGetRun, get);
}

TEST_F(AnswersOnBothBackends, ModulesHoldWhatTheDumpsSay) {
  v1::ListModulesRequest seeds;
  seeds.set_run_name("seeds");
  seeds.set_name_pattern("00[0-2]_*");
  auto modules = Same(&service::AnswerListModules, seeds);
  bool seen = false;
  for (const auto& m : modules.modules()) {
    if (m.name() != "000_edd6dfbd09ed8e41") continue;
    seen = true;
    EXPECT_EQ(m.allocation_count(), 8);  // seed 000
    EXPECT_EQ(m.total_bytes(), 18629632);
  }
  EXPECT_TRUE(seen) << modules.DebugString();
  v1::ListModulesRequest head;
  head.set_run_name("gate_head");
  EXPECT_GE(Same(&service::AnswerListModules, head).modules_size(), 5);
}

TEST_F(AnswersOnBothBackends, TrendsSpillsAndTopBuffers) {
  v1::PeakMemoryTrendRequest step;
  step.set_module("jit_step");
  step.set_metric(v1::TOTAL_BYTES);
  auto trend = Same(&service::AnswerPeakMemoryTrend, step);
  ASSERT_EQ(trend.points_size(), 2);  // gate_base, gate_head: `Total bytes used` 6144, then 71680
  EXPECT_EQ(trend.points(0).value(), 6144);
  EXPECT_EQ(trend.points(1).value(), 71680);
  v1::PeakMemoryTrendRequest any_jit;
  any_jit.set_module("jit_*");
  any_jit.set_metric(v1::TOTAL_BYTES);
  EXPECT_GT(Same(&service::AnswerPeakMemoryTrend, any_jit).points_size(), 2);
  v1::PeakMemoryTrendRequest missing;
  missing.set_module("jit_nothing_like_it");
  Same(&service::AnswerPeakMemoryTrend, missing);

  v1::SpillRatesRequest spills;
  EXPECT_GT(Same(&service::AnswerSpillRates, spills).rates_size(), 0);
  spills.set_limit(3);
  spills.set_kernel_pattern("*");
  EXPECT_LE(Same(&service::AnswerSpillRates, spills).rates_size(), 3);
  spills.set_run_name("tpu_utilization");
  Same(&service::AnswerSpillRates, spills);

  v1::TopBuffersRequest top;
  top.set_run_name("seeds");
  top.set_module("000_edd6dfbd09ed8e41");
  top.set_n(5);
  EXPECT_EQ(Same(&service::AnswerTopBuffers, top).buffers_size(), 5);
}

TEST_F(AnswersOnBothBackends, DiffGateAndRetraces) {
  v1::DiffRunsRequest diff;
  diff.set_run_a("gate_base");
  diff.set_run_b("gate_head");
  diff.set_include_unchanged(true);
  diff.set_buffer_level(true);
  EXPECT_GT(Same(&service::AnswerDiffRuns, diff).modules_size(), 0);
  diff.set_module("jit_t*");
  Same(&service::AnswerDiffRuns, diff);

  for (const char* baseline : {"gate_base", "label:branch=main", "commit:1111111", "commit:11111", "no-such-run"}) {
    v1::CheckRunRequest check;
    check.set_run_name("gate_head");
    check.set_baseline(baseline);
    check.set_fail_on_retrace_growth(true);
    const auto verdict = Same(&service::AnswerCheckRun, check);
    if (std::string(baseline).rfind("commit:1111111", 0) == 0 || std::string(baseline) == "gate_base" ||
        std::string(baseline) == "label:branch=main") {
      // jit_step's `Total bytes used` went from 6144 to 71680 between the two dumps: the gate fails.
      EXPECT_EQ(verdict.verdict(), v1::CheckRunResponse::FAIL) << baseline << ": " << verdict.reason();
      EXPECT_EQ(verdict.baseline_run_name(), "gate_base") << baseline;
    }
  }
  v1::ListRetracesRequest retraces;
  retraces.set_run_name("gate_head");
  EXPECT_GT(Same(&service::AnswerListRetraces, retraces).groups_size(), 0);  // jit_twice, compiled twice

  // Change points over the nine runs: jit_step's `Total bytes used` 6144 -> 71680 from gate_base to
  // gate_head, with its attribution; then narrower questions, and the ones answered with a note or an error.
  v1::ListChangesRequest changes;
  changes.set_attribute(-1);
  const auto history = Same(&service::AnswerListChanges, changes);
  bool step_grew = false;
  for (const auto& c : history.changes()) {
    if (c.module() == "jit_step" && c.run_name() == "gate_head" && c.metric() == "total_bytes") {
      step_grew = c.before() == 6144 && c.after() == 71680 && c.attribution_size() > 0;
    }
  }
  EXPECT_TRUE(step_grew) << history.ShortDebugString();
  changes.set_module("jit_*");
  changes.add_labels()->set_key("branch");
  changes.mutable_labels(0)->set_value("main");
  changes.set_first_above_bytes(8192);
  Same(&service::AnswerListChanges, changes);
  changes.set_since_run("gate_base");
  Same(&service::AnswerListChanges, changes);
  v1::ListChangesRequest last;
  last.set_last_n(3);
  last.set_min_percent(10);
  Same(&service::AnswerListChanges, last);
  v1::ListChangesRequest unknown;
  unknown.set_module("no_such_module");
  Same(&service::AnswerListChanges, unknown);
}

// The SQL endpoint ends each query with DISCARD ALL on the daemon's connection when it has no reader role of
// its own, which forgets the statements the gate prepared. The gate and diff prepare them again on their
// next call (each statement runs in autocommit on PostgreSQL; an open transaction would not survive the
// failed first try).
TEST_F(AnswersOnBothBackends, TheGateAndDiffAnswerAfterTheSessionForgotTheirStatements) {
  v1::CheckRunRequest check;
  check.set_run_name("gate_head");
  check.set_baseline("gate_base");
  v1::DiffRunsRequest diff;
  diff.set_run_a("gate_base");
  diff.set_run_b("gate_head");
  diff.set_buffer_level(true);
  v1::CheckRunResponse first_check, second_check;
  v1::DiffRunsResponse first_diff, second_diff;
  ASSERT_TRUE(service::AnswerCheckRun(*postgres_, check, &first_check).ok());
  ASSERT_TRUE(service::AnswerDiffRuns(*postgres_, diff, &first_diff).ok());
  postgres_->connection().Exec("DISCARD ALL");
  const Status checked = service::AnswerCheckRun(*postgres_, check, &second_check);
  ASSERT_TRUE(checked.ok()) << checked.ToString();
  const Status diffed = service::AnswerDiffRuns(*postgres_, diff, &second_diff);
  ASSERT_TRUE(diffed.ok()) << diffed.ToString();
  EXPECT_EQ(second_check.verdict(), v1::CheckRunResponse::FAIL);
  EXPECT_EQ(first_check.DebugString(), second_check.DebugString());
  EXPECT_EQ(first_diff.DebugString(), second_diff.DebugString());
}

TEST_F(AnswersOnBothBackends, ReportPages) {
  v1::ReportRequest run;
  run.set_run_name("report_head");
  EXPECT_NE(SameReport(run).find("jit_mlp"), std::string::npos);
  v1::ReportRequest module = run;
  module.set_module("jit_mlp");
  SameReport(module);
  v1::ReportRequest diff = run;
  diff.set_baseline("report_base");
  SameReport(diff);
}

}  // namespace
}  // namespace xladb
