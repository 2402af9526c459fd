// service/proto_fields.h and service/result_protos.h: a table fills a message exactly as the generated setters
// do, and every table of the answers names fields its message has (a table that does not aborts when it is built,
// so building each once here is the check).
#include "service/result_protos.h"

#include <gtest/gtest.h>

#include <string>

#include "service/proto_fields.h"

namespace xladb::service {
namespace {

struct Figures : store::ModuleMetricValues {
  std::string name;
  int64_t xla_module_id = -1;
  bool has_buffer_assignment = false;
};

TEST(ProtoFields, CopiesAsTheSettersDo) {
  Figures f;
  f.name = "jit_step";
  f.xla_module_id = 7;
  f.has_buffer_assignment = true;
  f.peak_bytes = 100;
  f.total_bytes = 300;
  const auto fields = ProtoFields<Figures, v1::Module>{
      {"name", &Figures::name},
      {"xla_module_id", &Figures::xla_module_id},
      {"has_buffer_assignment", &Figures::has_buffer_assignment},
  }.WithModuleMetrics();
  v1::Module copied;
  fields.Copy(f, &copied);

  v1::Module set;
  set.set_name("jit_step");
  set.set_xla_module_id(7);
  set.set_has_buffer_assignment(true);
  set.set_peak_bytes(100);
  set.set_live_peak_padded_bytes(-1);
  set.set_total_bytes(300);
  set.set_color0_total_bytes(-1);
  set.set_temp_bytes(-1);
  set.set_parameter_bytes(-1);
  set.set_output_bytes(-1);
  EXPECT_EQ(copied.SerializeAsString(), set.SerializeAsString());
}

TEST(ProtoFields, NarrowsIntoAnInt32FieldAsItsSetterDoes) {
  struct Limit {
    int64_t limit = 0;
    double percent = 0;
  };
  const ProtoFields<Limit, v1::ListModulesRequest> fields = {{"limit", &Limit::limit},
                                                              {"warn_percent", &Limit::percent}};
  v1::ListModulesRequest copied, set;
  fields.Copy({int64_t{1} << 33 | 5, 92.5}, &copied);
  set.set_limit(static_cast<int32_t>(int64_t{1} << 33 | 5));
  set.set_warn_percent(92.5);
  EXPECT_EQ(copied.SerializeAsString(), set.SerializeAsString());
}

TEST(ProtoFieldsDeathTest, AFieldTheMessageLacksAbortsWhenTheTableIsBuilt) {
  struct Row {
    std::string name;
  };
  EXPECT_DEATH((ProtoFields<Row, v1::Module>{{"no_such_field", &Row::name}}), "v1.Module.no_such_field");
  EXPECT_DEATH((ProtoFields<Row, v1::Module>{{"xla_module_id", &Row::name}}), "not a singular field");
}

TEST(ResultProtos, EveryTableNamesFieldsOfItsMessage) {
  // One of each result, nested ones included, so every table is built.
  store::CheckResult check;
  check.modules.emplace_back().metrics.emplace_back();
  check.modules.back().budget.emplace();
  check.modules.back().attribution.emplace().changes.emplace_back();
  check.modules.back().attribution->by_source.emplace_back();
  check.modules.back().attribution->baseline_peak_time = 5;
  check.by_name.emplace_back().metrics.emplace_back();
  check.error_files.emplace_back();
  check.retraces.emplace_back();
  store::RunDiff diff;
  diff.modules.emplace_back();
  store::ChangeHistory history;
  history.changes.emplace_back();
  history.first_above.emplace_back();
  store::TopBuffersAnswer top;
  top.buffers.emplace_back();
  store::OomReportInfo oom;
  oom.stats.emplace_back();
  oom.buffers.emplace_back();

  v1::CheckRunResponse check_out;
  ToProto(check, &check_out);
  EXPECT_EQ(check_out.modules(0).baseline_peak_time(), 5);  // the attribution's, over the -1 of none
  EXPECT_EQ(check_out.modules(0).current_peak_time(), -1);
  v1::DiffRunsResponse diff_out;
  ToProto(diff, &diff_out);
  v1::ListChangesResponse changes_out;
  ToProto(history, &changes_out);
  EXPECT_EQ(changes_out.changes(0).baseline_peak_time(), -1);  // no attribution
  v1::TopBuffersResponse top_out;
  ToProto(top, &top_out);
  v1::OomReport oom_out;
  ToProto(oom, &oom_out);
  v1::Run run;
  ToProto(store::RunInfo{}, &run);
  v1::Module module;
  ToProto(store::ModuleMemoryInfo{}, &module);
  EXPECT_EQ(module.live_peak_padded_bytes(), -1);
  v1::TrendPoint point;
  ToProto(store::TrendPoint{}, &point);
  v1::SpillRate rate;
  ToProto(store::SpillRateRow{}, &rate);
  v1::RetraceGroup group;
  ToProto(store::RetraceGroup{}, &group);
  v1::JobRecord job;
  ToProto(store::JobRecord{}, &job);
}

}  // namespace
}  // namespace xladb::service
