#include "store/job_log.h"

#include <SQLiteCpp/SQLiteCpp.h>

#include <nlohmann/json.hpp>

#include "store/unix_time.h"

namespace xladb::store {
Status JobLog::Insert(const JobRecord& job) {
  try {
    nlohmann::json labels = nlohmann::json::object();
    for (const auto& [k, v] : job.labels) labels[k] = v;
    SQLite::Statement ins(db_->sql(),
                          "INSERT INTO ingest_jobs(job_id, source, path, run_name, labels, run_time_us, state, "
                          "message, created_at_us, append, content_digest, source_description, files_received) "
                          "VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?)");
    ins.bind(1, job.job_id);
    ins.bind(2, job.source);
    ins.bind(3, job.path);
    ins.bind(4, job.run_name);
    ins.bind(5, labels.dump());
    if (job.run_time_us >= 0) ins.bind(6, job.run_time_us); else ins.bind(6);
    ins.bind(7, job.state);
    ins.bind(8, job.message);
    ins.bind(9, job.created_at_us);
    ins.bind(10, job.append ? 1 : 0);
    if (job.content_digest.empty()) ins.bind(11); else ins.bind(11, job.content_digest);
    if (job.source_description.empty()) ins.bind(12); else ins.bind(12, job.source_description);
    if (job.files_received >= 0) ins.bind(13, job.files_received); else ins.bind(13);
    ins.exec();
    return Status::Ok();
  } catch (const std::exception& e) {
    return Status::IoError(std::string("recording ingest job: ") + e.what());
  }
}

Status JobLog::SetState(const std::string& job_id, const std::string& state, const std::string& message) {
  try {
    bool finished = state == "SUCCEEDED" || state == "FAILED";
    SQLite::Statement up(db_->sql(),
                         "UPDATE ingest_jobs SET state = ?, message = ?, finished_at_us = ? WHERE job_id = ?");
    up.bind(1, state);
    up.bind(2, message);
    if (finished) up.bind(3, UnixMicrosNow()); else up.bind(3);
    up.bind(4, job_id);
    up.exec();
    return Status::Ok();
  } catch (const std::exception& e) {
    return Status::IoError(std::string("updating ingest job: ") + e.what());
  }
}

StatusOr<std::vector<JobRecord>> JobLog::Unfinished() {
  try {
    std::vector<JobRecord> jobs;
    SQLite::Statement q(db_->sql(),
                        "SELECT job_id, source, path, run_name, labels, run_time_us, state, created_at_us, append, "
                        "       IFNULL(content_digest, ''), IFNULL(source_description, ''), "
                        "       IFNULL(files_received, -1) "
                        "FROM ingest_jobs WHERE state IN ('QUEUED', 'RUNNING') ORDER BY created_at_us, job_id");
    while (q.executeStep()) {
      JobRecord j;
      j.job_id = q.getColumn(0).getString();
      j.source = q.getColumn(1).getString();
      j.path = q.getColumn(2).getString();
      j.run_name = q.getColumn(3).getString();
      auto labels = nlohmann::json::parse(q.getColumn(4).getString(), nullptr, /*allow_exceptions=*/false);
      if (labels.is_object()) {
        for (auto it = labels.begin(); it != labels.end(); ++it) {
          if (it.value().is_string()) j.labels.emplace_back(it.key(), it.value().get<std::string>());
        }
      }
      j.run_time_us = q.getColumn(5).isNull() ? -1 : q.getColumn(5).getInt64();
      j.state = q.getColumn(6).getString();
      j.created_at_us = q.getColumn(7).getInt64();
      j.append = q.getColumn(8).getInt() != 0;
      j.content_digest = q.getColumn(9).getString();
      j.source_description = q.getColumn(10).getString();
      j.files_received = q.getColumn(11).getInt64();
      jobs.push_back(std::move(j));
    }
    return jobs;
  } catch (const std::exception& e) {
    return Status::IoError(std::string("reading ingest jobs: ") + e.what());
  }
}

}  // namespace xladb::store
