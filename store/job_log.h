// JobLog: the daemon's ingest jobs, persisted in the ingest_jobs table so a restart resumes unfinished ones.
//
// Contract: each call is its own short transaction on the given connection; errors come back as Status.
// One thread at a time per JobLog (the daemon guards it with a mutex).
#ifndef XLADB_STORE_JOB_LOG_H_
#define XLADB_STORE_JOB_LOG_H_

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "ingest/status.h"
#include "store/database.h"

namespace xladb::store {

struct JobRecord {
  std::string job_id;
  std::string source;      // 'path', 'upload' or 'watch'
  std::string path;
  std::string run_name;
  std::vector<std::pair<std::string, std::string>> labels;
  int64_t run_time_us = -1;
  std::string state;       // 'QUEUED', 'RUNNING', 'SUCCEEDED', 'FAILED'
  std::string message;
  int64_t created_at_us = 0;
  bool append = false;             // RunSpec::append
  std::string content_digest;      // RunSpec::content_digest ("" = none)
  std::string source_description;  // what the run records as its source ("" = `path`)
  int64_t files_received = -1;     // uploads: files staged (checked against what the ingest finds); -1 = n/a
};

class JobLog {
 public:
  explicit JobLog(Database* db) : db_(db) {}
  Status Insert(const JobRecord& job);
  Status SetState(const std::string& job_id, const std::string& state, const std::string& message);
  // Jobs left QUEUED or RUNNING (by a crash or a shutdown), oldest first.
  StatusOr<std::vector<JobRecord>> Unfinished();

 private:
  Database* db_;
};

}  // namespace xladb::store

#endif  // XLADB_STORE_JOB_LOG_H_
