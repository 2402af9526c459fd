// The store's results in the API's messages (xladb.v1): one ToProto per result, each copying its plain fields
// through one ProtoFields table (service/proto_fields.h), so a field is named once, and adding by hand what is
// not a copy: enums, nested and repeated messages, computed values. The answers (query_answers.cc,
// change_answers.cc, job_oom_answers.cc) call these and nothing else to fill a message from a result.
//
// Contract: `out` is a message the caller has just added (fields not listed here stay as they were); pure
// functions, thread-safe.
#ifndef XLADB_SERVICE_RESULT_PROTOS_H_
#define XLADB_SERVICE_RESULT_PROTOS_H_

#include "store/admin/job_log.h"
#include "store/compare/change_points.h"
#include "store/compare/check_run.h"
#include "store/compare/memory_budget.h"
#include "store/compare/module_trend.h"
#include "store/compare/name_rollup.h"
#include "store/compare/run_diff.h"
#include "store/query/oom_reports.h"
#include "store/query/queries.h"
#include "xladb/v1/xladb.pb.h"

namespace xladb::service {

void ToProto(const store::RunInfo& run, v1::Run* out);
// Not has_oom_report or budget: the answer adds those.
void ToProto(const store::ModuleMemoryInfo& module, v1::Module* out);
void ToProto(const store::BudgetUse& use, v1::BudgetUse* out);
void ToProto(const store::TrendPoint& point, v1::TrendPoint* out);
void ToProto(const store::SpillRateRow& row, v1::SpillRate* out);
// The module picked, its figures and its buffers; not notes: the answer adds those.
void ToProto(const store::TopBuffersAnswer& answer, v1::TopBuffersResponse* out);
void ToProto(const store::NameRollup& rollup, v1::NameRollup* out);
void ToProto(const store::RunDiff& diff, v1::DiffRunsResponse* out);
void ToProto(const store::CheckResult& result, v1::CheckRunResponse* out);
void ToProto(const store::RetraceGroup& group, v1::RetraceGroup* out);
void ToProto(const store::ChangeHistory& history, v1::ListChangesResponse* out);
void ToProto(const store::JobRecord& job, v1::JobRecord* out);
void ToProto(const store::OomReportInfo& report, v1::OomReport* out);

}  // namespace xladb::service

#endif  // XLADB_SERVICE_RESULT_PROTOS_H_
