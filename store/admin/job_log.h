// JobLog: the daemon's ingest jobs, persisted in the ingest_jobs table so a restart resumes unfinished ones.
//
// Contract: each call is its own short transaction on the given connection; errors come back as Status.
// One thread at a time per JobLog (the daemon guards it with a mutex).
#ifndef XLADB_STORE_ADMIN_JOB_LOG_H_
#define XLADB_STORE_ADMIN_JOB_LOG_H_

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "base/status.h"
#include "store/backend/database.h"

namespace xladb::store {

// Where an ingest job is. The names (JobStateName) are the schema's ingest_jobs.state values and the state of
// the ListJobs answer's JobRecord (`xladb jobs --state`): spelled here only; code compares the enum.
enum class JobState {
  kQueued,     // waiting for the writer thread (also a job a shutdown interrupted: it resumes at the next start)
  kRunning,    // being ingested (left so by a crash: resumed at the next start)
  kSucceeded,  // every file has a verdict
  kFailed,     // the source could not be read, or the job could not run
};
inline constexpr JobState kJobStates[] = {JobState::kQueued, JobState::kRunning, JobState::kSucceeded,
                                          JobState::kFailed};
// "QUEUED", "RUNNING", "SUCCEEDED" or "FAILED".
std::string_view JobStateName(JobState state);
// The state `name` names (JobStateName, exactly); nullopt for any other text.
std::optional<JobState> ParseJobState(std::string_view name);
// SUCCEEDED or FAILED: the job has ended and will not run again.
inline bool IsFinal(JobState state) { return state == JobState::kSucceeded || state == JobState::kFailed; }

struct JobRecord {
  std::string job_id;
  std::string source;      // 'path', 'upload' or 'watch'
  std::string path;
  std::string run_name;
  std::vector<std::pair<std::string, std::string>> labels;
  int64_t run_time_us = -1;
  JobState state = JobState::kQueued;
  std::string message;
  int64_t created_at_us = 0;
  bool append = false;             // RunSpec::append
  std::string content_digest;      // RunSpec::content_digest ("" = none)
  std::string source_description;  // what the run records as its source ("" = `path`)
  int64_t files_received = -1;     // uploads: files staged (checked against what the ingest finds); -1 = n/a
  int64_t finished_at_us = 0;      // when it ended (0 = not yet); filled by List
};

// Which jobs JobLog::List returns.
struct JobFilter {
  std::string run_name;            // "" matches any run
  std::optional<JobState> state;   // nullopt matches any state
  int64_t limit = 1000;
};

// Contract (JobLog and JobClaims): a stored state that is not a JobStateName is a kIoError naming it.
class JobLog {
 public:
  explicit JobLog(Database* db) : db_(db) {}
  Status Insert(const JobRecord& job);
  // `run_name` not empty: the run the job ingested, recorded where the job was queued without one (a folder
  // named at ingest time), so the job can be found by its run. A final state (IsFinal) records the time too.
  Status SetState(const std::string& job_id, JobState state, const std::string& message,
                  const std::string& run_name = "");
  // Jobs left QUEUED or RUNNING (by a crash or a shutdown), oldest first; on PostgreSQL without those another
  // daemon holds now (JobClaims).
  StatusOr<std::vector<JobRecord>> Unfinished();
  // The jobs `filter` selects, newest first (created_at_us, then job_id, descending), at most filter.limit.
  // Read-only: works on a read-only connection.
  [[nodiscard]] StatusOr<std::vector<JobRecord>> List(const JobFilter& filter);

 private:
  Database* db_;
};

// JobClaims: which daemon runs an unfinished job when several share one PostgreSQL store. The writer thread
// takes a job before it runs it: a session-level advisory lock on the job id (pg_try_advisory_lock of
// hashtextextended(job_id, 0)) held by the claims' own connection until Finish. A second daemon (one resuming
// unfinished jobs at its start) skips a job whose lock another session holds, and a crash of the holder (its
// connection gone) releases it. A job another daemon holds is waited for (pg_advisory_lock) and its end
// reported, so each job is run once and its submitter still learns how it ended. No transaction stays open
// while a job runs: an open transaction would hold back PostgreSQL's cleanup horizon, and the writer's
// updates of the same module rows, file after file, would leave ever longer chains of dead row versions (it
// made a real run folder's ingest 1.7-2x slower). A 64-bit hash collision of two job ids makes one wait for
// the other. On SQLite (one daemon per file) Take only reads the job's state.
//
// Contract: Take, then (when claimed) SetState and Finish for that job; one job at a time, from one thread.
// Errors come back as Status; a failed Finish leaves the job unfinished (it runs again at the next start).
class JobClaims {
 public:
  struct Claim {
    bool claimed = false;
    std::optional<JobState> state;  // when not claimed: how the job ended (nullopt: it is gone)
    std::string message;
  };
  [[nodiscard]] static StatusOr<std::unique_ptr<JobClaims>> Open(const std::string& db_path);
  [[nodiscard]] StatusOr<Claim> Take(const std::string& job_id);
  // The claimed job's state while it runs (RUNNING), visible to others once it ends.
  [[nodiscard]] Status SetState(const std::string& job_id, JobState state, const std::string& message);
  // The claimed job's last state (SUCCEEDED, FAILED, or QUEUED to resume it later); the claim ends.
  [[nodiscard]] Status Finish(const std::string& job_id, JobState state, const std::string& message,
                              const std::string& run_name = "");

 private:
  explicit JobClaims(std::unique_ptr<Database> db) : db_(std::move(db)), log_(db_.get()) {}
  // Releases the advisory lock of the job held (PostgreSQL), if any.
  void Release();
  std::unique_ptr<Database> db_;
  JobLog log_;
  std::string held_job_;  // the job whose lock this connection holds, or ""
};

}  // namespace xladb::store

#endif  // XLADB_STORE_ADMIN_JOB_LOG_H_
