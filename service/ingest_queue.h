// IngestQueue: the daemon's one writer. Jobs (IngestPath, uploads, watched folders) wait in a FIFO and are
// ingested one at a time by a dedicated thread that owns the read-write database connection; queries run
// on their own read-only connections meanwhile (WAL), so readers never see a half-ingested file.
//
// Contract
//   * Submit() records the job in the database (ingest_jobs) before returning its id, so a job accepted is
//     never lost: Start() resumes jobs a crash or shutdown left QUEUED or RUNNING, except, on a store several
//     daemons share, an upload staged by another daemon (StagedByAnotherDaemon): its files are on that
//     daemon's disk, and it stays queued for that daemon.
//   * A watched folder already waiting in the queue is not queued twice.
//   * An upload's staged folder (source 'upload') belongs to the queue once submitted: it is removed when the
//     job ends, SUCCEEDED or FAILED; an upload job whose ingest saw another number of files than were
//     received FAILS saying so.
//   * Shutdown(): stop accepting (Submit returns kUnavailable), let the running job finish the file in hand
//     and stop there (the rest is resumed on the next start), then join. Idempotent.
//   * A job whose source could not be read at all (no file seen, an error for the source itself: a corrupt
//     archive) FAILS with that error; one that read files SUCCEEDS, files with errors listed in its status.
//   * When a job ends (SUCCEEDED or FAILED, not when a shutdown leaves it QUEUED), the `on_job_end` given to
//     Start() is called on the writer thread with its final status (JobEndLine words it for a log), before
//     Get() and WaitForChange() show the job finished.
//   * All methods are thread-safe.
#ifndef XLADB_SERVICE_INGEST_QUEUE_H_
#define XLADB_SERVICE_INGEST_QUEUE_H_

#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <deque>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "ingest/dump_ingester.h"
#include "ingest/source/dump_source.h"
#include "base/status.h"
#include "service/access_policy.h"
#include "store/backend/database.h"
#include "store/admin/job_log.h"

namespace xladb::store {
class RunWriter;
}  // namespace xladb::store

namespace xladb::service {

struct IngestRequest {
  std::string source;      // 'path', 'upload' or 'watch'
  std::string path;        // server path to ingest
  std::string run_name;    // "" = named after the folder
  std::vector<std::pair<std::string, std::string>> labels;
  int64_t run_time_us = -1;
  bool append = false;              // may add to a run from another source (RunSpec::append)
  std::string content_digest;       // uploads: what was uploaded (RunSpec::content_digest)
  std::string source_description;   // the run's recorded source; "" = `path`
  int64_t files_received = -1;      // uploads: files staged, checked against the files the ingest saw
};

struct JobStatus {
  using State = store::JobState;
  std::string job_id;
  State state = State::kQueued;
  std::string run_name;
  std::string source;
  int64_t files_done = 0;
  int64_t bytes_done = 0;
  // IngestSummary::FilesByVerdictWithRereads(): files by FileVerdictName, and the files read again.
  std::map<std::string, int64_t> files_by_verdict;
  int64_t rows = 0;
  int64_t issues = 0;
  std::vector<std::pair<std::string, std::string>> errors;  // (path, reason)
  std::string message;
  double seconds = 0;
  int64_t created_at_us = 0;
  int64_t files_received = 0;  // uploads: files received and staged
  int64_t modules = -1;    // modules with a buffer assignment in the run once the job ended (-1 = unknown)
  bool ran_here = true;    // false: another daemon sharing the store ran it, or it left the store unrun
  uint64_t version = 0;    // increases on every change
  bool finished() const { return store::IsFinal(state); }
};

// One line for a log saying how a finished job ended: the run, its files by verdict, modules and seconds,
// or why it failed. Names and messages are escaped (ingest/text/visible_text.h): the line is inert text.
//   "job job-3f… (watch) run nightly-42 SUCCEEDED in 1.25 s: 7 files (5 ingested, 2 not_ingested), 3 modules"
//   "job job-3f… (watch) run broken FAILED after 0.01 s: cannot open archive …"
[[nodiscard]] std::string JobEndLine(const JobStatus& job);

// Called on the writer thread when a job ends; must not block for long and must not throw.
using JobEndCallback = std::function<void(const JobStatus&)>;

// A random id with the given prefix ("job-3f9c…"), unique for practical purposes. Thread-safe.
std::string NewRandomId(const std::string& prefix);

class IngestQueue {
 public:
  // Opens the read-write connection, resumes unfinished jobs, starts the writer thread. Jobs of source 'path'
  // are opened beneath the `access` root they lie under when they run (nullptr: no such jobs allowed);
  // `limits` bound what archives and compressed files may expand to.
  static StatusOr<std::unique_ptr<IngestQueue>> Start(const std::string& db_path, const AccessPolicy* access,
                                                      ingest::SourceLimits limits,
                                                      JobEndCallback on_job_end = nullptr);
  // Whether `job` is an upload that another daemon staged: its folder is missing here and lies outside
  // `spool_dir` (this daemon's). An upload missing from this daemon's own spool folder is this daemon's, lost
  // (it is resumed, and fails saying so).
  static bool StagedByAnotherDaemon(const store::JobRecord& job, const std::string& spool_dir);
  // The unfinished jobs Start() left queued for the daemons that staged them.
  const std::vector<std::string>& left_to_other_daemons() const { return left_to_other_daemons_; }
  ~IngestQueue();

  StatusOr<std::string> Submit(IngestRequest request);
  // Runs `task` on the writer's connection, between ingest jobs (the job in hand finishes first), and returns
  // its Status once it ran: how label and delete changes serialize with ingest. The writer's caches are
  // rebuilt after a task. kFailedPrecondition when Shutdown() begins before the writer takes the task; one it
  // has taken runs to its end, and its Status is returned (Shutdown waits for it).
  Status RunOnWriter(std::function<Status(store::Database&)> task);
  std::optional<JobStatus> Get(const std::string& job_id) const;
  // Blocks until the job's version exceeds `after_version`, it finishes, or `timeout` passes.
  std::optional<JobStatus> WaitForChange(const std::string& job_id, uint64_t after_version,
                                         std::chrono::milliseconds timeout) const;
  void Shutdown();

  int64_t jobs_finished() const;
  // The queue now, for the daemon's metrics: jobs waiting, whether one is being ingested, and when the
  // oldest waiting one was submitted (-1: none waits).
  struct Backlog {
    int64_t queued = 0;
    bool running = false;
    int64_t oldest_queued_created_at_us = -1;
  };
  Backlog backlog() const;
  // True once Shutdown() has begun.
  bool stopping() const;
  // The staged folders of upload jobs not finished yet (queued, running, or waiting to be resumed).
  std::vector<std::string> PendingUploadPaths() const;

 private:
  struct WriterTask;

  IngestQueue() = default;
  // The writer thread: label and delete tasks and ingest jobs, one at a time, until Shutdown().
  void Run();
  // Every job not finished FAILS with `reason` (the writer's connection could not be opened).
  void FailUnfinished(const std::string& reason);
  // Runs a label or delete task on the writer's connection; what it throws is its failure.
  static Status RunWriterTask(WriterTask& task, store::Database& db);
  // One job, from its claim (JobClaims) to its end: ingested with `writer`, its end recorded in the store,
  // in its status and through End().
  void RunJob(const std::string& job_id, const IngestRequest& request, store::Database& db,
              store::RunWriter* writer, StatusOr<std::unique_ptr<store::JobClaims>>& claims);
  // A job this daemon could not claim: it ended as the store says another daemon ended it, or FAILED.
  void EndUnclaimed(const std::string& job_id, const StatusOr<store::JobClaims::Claim>& claim);
  // The ingest options of a job: its request's, the queue's source limits, and a stop at Shutdown().
  ingest::IngestOptions OptionsFor(const IngestRequest& request) const;
  // Ingests the job's source (a 'path' job opened beneath its allowed root now), reporting progress in its
  // status. What the ingest throws is its failure.
  StatusOr<ingest::IngestSummary> IngestJob(const std::string& job_id, const IngestRequest& request,
                                            const ingest::IngestOptions& options, store::RunWriter* writer);
  void ClearRunningUpload();
  void Update(const std::string& job_id, const std::function<void(JobStatus&)>& change);
  // Ends a job: `change` gives it its final status, on_job_end_ hears of it (SUCCEEDED or FAILED only), and
  // only then is the end published, so whoever sees the job finished sees it counted too (the metrics).
  void End(const std::string& job_id, const std::function<void(JobStatus&)>& change);

  std::string db_path_;
  const AccessPolicy* access_ = nullptr;
  ingest::SourceLimits source_limits_;
  JobEndCallback on_job_end_;  // set by Start, then read-only
  std::vector<std::string> left_to_other_daemons_;  // set by Start, then read-only
  std::unique_ptr<store::Database> jobs_db_;   // job bookkeeping, used under log_mu_
  std::unique_ptr<store::JobLog> job_log_;     // on jobs_db_, under log_mu_
  std::mutex log_mu_;                          // never held with mu_ waiting on it
  mutable std::mutex mu_;
  mutable std::condition_variable changed_;
  std::deque<std::pair<std::string, IngestRequest>> queue_;
  struct WriterTask {
    std::function<Status(store::Database&)> run;
    std::optional<Status> result;  // set by the writer thread
    bool started = false;          // the writer thread took it: its caller waits for `result`, shutdown or not
  };
  std::deque<WriterTask*> tasks_;  // owned by the callers of RunOnWriter, who wait for `result`
  std::map<std::string, JobStatus> jobs_;
  bool stopping_ = false;
  std::string running_upload_;  // the staged folder of the upload being ingested, or ""
  bool job_running_ = false;    // the writer is ingesting a job
  int64_t jobs_finished_ = 0;
  std::thread thread_;
};

}  // namespace xladb::service

#endif  // XLADB_SERVICE_INGEST_QUEUE_H_
