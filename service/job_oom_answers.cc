// AnswerListJobs, AnswerOomReports and MarkModulesWithOomReports (query_answers.h).
#include <string>

#include "service/query_answers.h"
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
  for (const store::JobRecord& j : *jobs) {
    v1::JobRecord* out = response->add_jobs();
    out->set_job_id(j.job_id);
    out->set_source(j.source);
    out->set_path(j.path);
    out->set_run_name(j.run_name);
    out->set_state(std::string(store::JobStateName(j.state)));
    out->set_message(j.message);
    out->set_created_at_us(j.created_at_us);
    out->set_finished_at_us(j.finished_at_us);
  }
  return Status::Ok();
}

Status AnswerOomReports(store::Database& db, const v1::OomReportsRequest& request, v1::OomReportsResponse* response) {
  if (request.run_name().empty()) return Status::InvalidArgument("run_name is required");
  auto reports = store::ListOomReports(db, request.run_name(), request.module());
  if (!reports.ok()) return reports.status();
  for (const store::OomReportInfo& r : *reports) {
    v1::OomReport* out = response->add_reports();
    out->set_path(r.path);
    out->set_module(r.module);
    out->set_xla_module_id(r.xla_module_id);
    out->set_stage(r.stage);
    out->set_folder(r.folder);
    out->set_failed_allocation_bytes(r.failed_allocation_bytes);
    out->set_limit_bytes(r.limit_bytes);
    out->set_total_allocation_bytes(r.total_allocation_bytes);
    for (const store::OomStatInfo& s : r.stats) {
      v1::OomStat* stat = out->add_stats();
      stat->set_label(s.label);
      stat->set_bytes(s.bytes);
      stat->set_bytes_text(s.bytes_text);
      stat->set_percent(s.percent);
    }
    for (const store::OomBufferInfo& b : r.buffers) {
      v1::OomBuffer* buffer = out->add_buffers();
      buffer->set_buffer_number(b.buffer_number);
      buffer->set_size_bytes(b.size_bytes);
      buffer->set_size_text(b.size_text);
      buffer->set_shape(b.shape);
      buffer->set_is_entry_parameter(b.is_entry_parameter);
      buffer->set_xla_label(b.xla_label);
      buffer->set_op_name(b.op_name);
      buffer->set_source_file(b.source_file);
      buffer->set_source_line(b.source_line);
    }
  }
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
