// AnswerListJobs, AnswerOomReports and MarkModulesWithOomReports (query_answers.h).
#include <string>

#include "service/query_answers.h"
#include "service/result_protos.h"
#include "store/admin/job_log.h"
#include "store/query/oom_reports.h"

namespace xladb::service {

Status AnswerListJobs(store::Database& db, const v1::ListJobsRequest& request, v1::ListJobsResponse* response) {
  if (request.limit() < 0 || request.limit() > 100000) {
    return Status::InvalidArgument("limit is 0 (= 1000) to 100000, got " + std::to_string(request.limit()));
  }
  store::JobFilter filter;
  filter.run_name = request.run_name();
  if (!request.state().empty()) {
    filter.state = store::ParseJobState(request.state());
    if (!filter.state) {
      return Status::InvalidArgument("state '" + request.state() + "' is not QUEUED, RUNNING, SUCCEEDED or FAILED");
    }
  }
  filter.limit = request.limit() > 0 ? request.limit() : 1000;
  store::JobLog log(&db);
  auto jobs = log.List(filter);
  if (!jobs.ok()) return jobs.status();
  for (const store::JobRecord& j : *jobs) ToProto(j, response->add_jobs());
  return Status::Ok();
}

Status AnswerOomReports(store::Database& db, const v1::OomReportsRequest& request, v1::OomReportsResponse* response) {
  if (request.run_name().empty()) return Status::InvalidArgument("run_name is required");
  auto reports = store::ListOomReports(db, request.run_name(), request.module());
  if (!reports.ok()) return reports.status();
  for (const store::OomReportInfo& r : *reports) ToProto(r, response->add_reports());
  return Status::Ok();
}

Status MarkModulesWithOomReports(store::Database& db, const std::string& run_name, v1::ListModulesResponse* response) {
  auto keys = store::ModulesWithOomReports(db, run_name);
  if (!keys.ok()) return keys.status();
  if (keys->empty()) return Status::Ok();
  for (v1::Module& m : *response->mutable_modules()) {
    m.set_has_oom_report(keys->count({m.name(), m.stage(), m.xla_module_id(), m.folder()}) > 0);
  }
  return Status::Ok();
}

}  // namespace xladb::service
