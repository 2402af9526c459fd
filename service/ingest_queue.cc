#include "service/ingest_queue.h"

#include <algorithm>
#include <filesystem>
#include <random>

#include "ingest/dump_ingester.h"
#include "ingest/source/run_name.h"
#include "ingest/text/visible_text.h"
#include "store/query/queries.h"
#include "store/write/run_writer.h"
#include "base/unix_time.h"

namespace xladb::service {
std::string NewRandomId(const std::string& prefix) {
  static std::mt19937_64 rng(std::random_device{}());
  static std::mutex mu;
  std::lock_guard<std::mutex> lock(mu);
  char buf[20];
  std::snprintf(buf, sizeof buf, "%016llx", static_cast<unsigned long long>(rng()));
  return prefix + buf;
}

std::string JobEndLine(const JobStatus& job) {
  char seconds[32];
  std::snprintf(seconds, sizeof seconds, "%.2f", job.seconds);
  std::string line = "job " + job.job_id + " (" + ingest::EscapeControlCharacters(job.source) + ") run " +
                     (job.run_name.empty() ? std::string("?") : ingest::EscapeControlCharacters(job.run_name));
  if (job.state != JobStatus::State::kSucceeded) {
    return line + " FAILED after " + seconds + " s: " +
           (job.message.empty() ? std::string("no reason given") : ingest::EscapeControlCharacters(job.message));
  }
  int64_t files = 0;
  std::string verdicts;
  for (const auto& [verdict, n] : job.files_by_verdict) {
    if (n == 0) continue;
    if (verdict != ingest::kFilesRereadKey) files += n;
    verdicts += (verdicts.empty() ? "" : ", ") + std::to_string(n) + " " + verdict;
  }
  line += std::string(" SUCCEEDED in ") + seconds + " s: " + std::to_string(files) + (files == 1 ? " file" : " files") +
          (verdicts.empty() ? "" : " (" + verdicts + ")");
  if (job.modules >= 0) line += ", " + std::to_string(job.modules) + (job.modules == 1 ? " module" : " modules");
  return line;
}

StatusOr<std::unique_ptr<IngestQueue>> IngestQueue::Start(const std::string& db_path, const AccessPolicy* access,
                                                          ingest::SourceLimits limits, JobEndCallback on_job_end) {
  std::unique_ptr<IngestQueue> q(new IngestQueue());
  q->on_job_end_ = std::move(on_job_end);
  q->db_path_ = db_path;
  q->access_ = access;
  q->source_limits_ = std::move(limits);
  auto jobs_db = store::Database::Open(db_path);
  if (!jobs_db.ok()) return jobs_db.status();
  q->jobs_db_ = std::move(jobs_db.value());
  q->job_log_ = std::make_unique<store::JobLog>(q->jobs_db_.get());
  auto unfinished = q->job_log_->Unfinished();
  if (!unfinished.ok()) return unfinished.status();
  for (auto& job : unfinished.value()) {
    if (StagedByAnotherDaemon(job, q->source_limits_.spool_dir)) {
      q->left_to_other_daemons_.push_back(job.job_id);
      continue;
    }
    IngestRequest r{job.source,         job.path,           job.run_name,
                    job.labels,         job.run_time_us,    job.append,
                    job.content_digest, job.source_description, job.files_received};
    JobStatus st;
    st.job_id = job.job_id;
    st.run_name = job.run_name;
    st.source = job.source;
    st.created_at_us = job.created_at_us;
    st.message = "resumed after restart";
    st.files_received = std::max<int64_t>(job.files_received, 0);
    q->jobs_[job.job_id] = st;
    q->queue_.emplace_back(job.job_id, std::move(r));
  }
  q->thread_ = std::thread([raw = q.get()] { raw->Run(); });
  return q;
}

bool IngestQueue::StagedByAnotherDaemon(const store::JobRecord& job, const std::string& spool_dir) {
  namespace fs = std::filesystem;
  if (job.source != "upload" || spool_dir.empty()) return false;
  std::error_code ec;
  if (fs::exists(job.path, ec)) return false;
  const fs::path inside = fs::path(job.path).lexically_normal().lexically_relative(fs::path(spool_dir).lexically_normal());
  return inside.empty() || *inside.begin() == "..";
}

IngestQueue::~IngestQueue() { Shutdown(); }

StatusOr<std::string> IngestQueue::Submit(IngestRequest request) {
  {
    std::lock_guard<std::mutex> lock(mu_);
    if (stopping_) return Status(Status::FailedPrecondition("the server is shutting down; retry after restart"));
    if (request.source == "watch") {
      for (const auto& [id, queued] : queue_) {
        if (queued.source == "watch" && queued.path == request.path) return id;  // already waiting
      }
    }
  }
  store::JobRecord rec;
  rec.job_id = NewRandomId("job-");
  rec.source = request.source;
  rec.path = request.path;
  rec.run_name = request.run_name;
  rec.labels = request.labels;
  rec.run_time_us = request.run_time_us;
  rec.append = request.append;
  rec.content_digest = request.content_digest;
  rec.source_description = request.source_description;
  rec.files_received = request.files_received;
  rec.state = store::JobState::kQueued;
  rec.created_at_us = UnixMicrosNow();
  {
    // Not under mu_: the insert may wait for the writer's transaction, and readers of job states must not.
    std::lock_guard<std::mutex> log_lock(log_mu_);
    Status st = job_log_->Insert(rec);
    if (!st.ok()) return st;
  }
  std::lock_guard<std::mutex> lock(mu_);  // recorded: from here the job is never lost (resumed on restart)
  JobStatus js;
  js.job_id = rec.job_id;
  js.run_name = request.run_name;
  js.source = request.source;
  js.created_at_us = rec.created_at_us;
  js.files_received = std::max<int64_t>(request.files_received, 0);
  jobs_[rec.job_id] = js;
  queue_.emplace_back(rec.job_id, std::move(request));
  changed_.notify_all();
  return rec.job_id;
}

std::optional<JobStatus> IngestQueue::Get(const std::string& job_id) const {
  std::lock_guard<std::mutex> lock(mu_);
  auto it = jobs_.find(job_id);
  if (it == jobs_.end()) return std::nullopt;
  return it->second;
}

std::optional<JobStatus> IngestQueue::WaitForChange(const std::string& job_id, uint64_t after_version,
                                                    std::chrono::milliseconds timeout) const {
  std::unique_lock<std::mutex> lock(mu_);
  auto done = [&] {
    auto it = jobs_.find(job_id);
    return it == jobs_.end() || it->second.version > after_version || it->second.finished() || stopping_;
  };
  changed_.wait_for(lock, timeout, done);
  auto it = jobs_.find(job_id);
  if (it == jobs_.end()) return std::nullopt;
  return it->second;
}

void IngestQueue::Shutdown() {
  {
    std::lock_guard<std::mutex> lock(mu_);
    stopping_ = true;
    changed_.notify_all();
  }
  if (thread_.joinable()) thread_.join();
}

std::vector<std::string> IngestQueue::PendingUploadPaths() const {
  std::lock_guard<std::mutex> lock(mu_);
  std::vector<std::string> paths;
  for (const auto& [id, request] : queue_) {
    if (request.source == "upload") paths.push_back(request.path);
  }
  if (!running_upload_.empty()) paths.push_back(running_upload_);
  return paths;
}

bool IngestQueue::stopping() const {
  std::lock_guard<std::mutex> lock(mu_);
  return stopping_;
}

int64_t IngestQueue::jobs_finished() const {
  std::lock_guard<std::mutex> lock(mu_);
  return jobs_finished_;
}

IngestQueue::Backlog IngestQueue::backlog() const {
  std::lock_guard<std::mutex> lock(mu_);
  Backlog backlog;
  backlog.queued = static_cast<int64_t>(queue_.size());
  backlog.running = job_running_;
  for (const auto& [id, request] : queue_) {
    const auto job = jobs_.find(id);
    if (job == jobs_.end()) continue;
    const int64_t created = job->second.created_at_us;
    if (backlog.oldest_queued_created_at_us < 0 || created < backlog.oldest_queued_created_at_us) {
      backlog.oldest_queued_created_at_us = created;
    }
  }
  return backlog;
}

Status IngestQueue::RunOnWriter(std::function<Status(store::Database&)> task) {
  WriterTask t{std::move(task), std::nullopt};
  std::unique_lock<std::mutex> lock(mu_);
  if (stopping_) return Status::FailedPrecondition("the server is shutting down; retry after restart");
  tasks_.push_back(&t);
  changed_.notify_all();
  // A task the writer has taken is waited for even once Shutdown() has begun: the writer thread runs it to
  // its end (Shutdown joins it) and writes its result into `t`, which must still exist then.
  changed_.wait(lock, [&] { return t.result.has_value() || (stopping_ && !t.started); });
  if (!t.result) {  // shut down before the writer got to it
    tasks_.erase(std::remove(tasks_.begin(), tasks_.end(), &t), tasks_.end());
    return Status::FailedPrecondition("the server is shutting down; retry after restart");
  }
  return *t.result;
}

void IngestQueue::Update(const std::string& job_id, const std::function<void(JobStatus&)>& change) {
  std::lock_guard<std::mutex> lock(mu_);
  JobStatus& js = jobs_[job_id];
  change(js);
  ++js.version;
  changed_.notify_all();
}

void IngestQueue::End(const std::string& job_id, const std::function<void(JobStatus&)>& change) {
  JobStatus ended;
  {
    std::lock_guard<std::mutex> lock(mu_);
    ended = jobs_[job_id];
  }
  change(ended);  // only the writer thread changes a job it runs: nothing changes the original meanwhile
  if (ended.finished() && on_job_end_) on_job_end_(ended);
  std::lock_guard<std::mutex> lock(mu_);
  ++jobs_finished_;
  JobStatus& js = jobs_[job_id];
  ended.version = js.version + 1;
  js = std::move(ended);
  changed_.notify_all();
}

void IngestQueue::Run() {
  auto db = store::Database::Open(db_path_);
  if (!db.ok()) {
    FailUnfinished(db.status().message());
    return;
  }
  auto claims = store::JobClaims::Open(db_path_);
  auto writer = std::make_unique<store::RunWriter>(db.value().get());
  for (;;) {
    std::unique_lock<std::mutex> lock(mu_);
    changed_.wait(lock, [&] { return stopping_ || !queue_.empty() || !tasks_.empty(); });
    if (stopping_) return;  // queued jobs stay QUEUED in ingest_jobs and resume on the next start
    if (!tasks_.empty()) {  // label and delete changes, between jobs
      WriterTask* task = tasks_.front();
      tasks_.pop_front();
      task->started = true;
      lock.unlock();
      const Status result = RunWriterTask(*task, *db.value());
      writer = std::make_unique<store::RunWriter>(db.value().get());  // its cached ids may be gone
      lock.lock();
      task->result = result;
      changed_.notify_all();
      continue;
    }
    const std::pair<std::string, IngestRequest> next = std::move(queue_.front());
    queue_.pop_front();
    if (next.second.source == "upload") running_upload_ = next.second.path;
    job_running_ = true;
    lock.unlock();
    RunJob(next.first, next.second, *db.value(), writer.get(), claims);
    lock.lock();
    job_running_ = false;
  }
}

void IngestQueue::FailUnfinished(const std::string& reason) {
  std::lock_guard<std::mutex> lock(mu_);
  for (auto& [id, js] : jobs_) {
    if (!js.finished()) {
      js.state = JobStatus::State::kFailed;
      js.message = reason;
    }
  }
}

Status IngestQueue::RunWriterTask(WriterTask& task, store::Database& db) {
  try {
    return task.run(db);
  } catch (const std::exception& e) {
    return Status::Internal(std::string("writer task failed: ") + e.what());
  }
}

void IngestQueue::ClearRunningUpload() {
  std::lock_guard<std::mutex> lock(mu_);
  running_upload_.clear();
}

namespace {

// How a job ended: the state it is left in (QUEUED: resumed at the next start) and why, and, for its status,
// the run it ingested and the modules that run has.
struct JobEnd {
  store::JobState state = store::JobState::kSucceeded;
  std::string message;
  std::string ran_as;  // the run's name
  int64_t modules = -1;
};

// The state and message a job ends with, from its ingest (IngestQueue's contract in ingest_queue.h).
JobEnd JobEndOf(const StatusOr<ingest::IngestSummary>& summary, const IngestRequest& request) {
  JobEnd end;
  if (!summary.ok()) {
    end.state = store::JobState::kFailed;
    end.message = summary.status().message();
  } else if (summary->interrupted) {
    end.state = store::JobState::kQueued;  // resumed on the next start
    end.message = "interrupted by shutdown after " + std::to_string(summary->files) + " files";
  } else if (summary->files == 0 && !summary->errors.empty()) {
    // Nothing was read: the folder or archive itself could not be opened (a corrupt archive).
    end.state = store::JobState::kFailed;
    end.message = summary->errors.front().path + ": " + summary->errors.front().reason;
  } else if (request.files_received >= 0 && summary->files != request.files_received) {
    end.state = store::JobState::kFailed;
    end.message = "received " + std::to_string(request.files_received) + " files but the ingest found " +
                  std::to_string(summary->files) + " of them";
  }
  return end;
}

// Modules with a buffer assignment in the run; -1 when that cannot be read.
int64_t ModuleCount(store::Database& db, const std::string& run_name) {
  auto run = store::GetRun(db, run_name);
  return run.ok() ? run->module_count : -1;
}

// The job's status once it ended: its ingest's counts (or, when it failed, the seconds since `started`),
// and `end`.
void RecordJobEnd(JobStatus& js, const StatusOr<ingest::IngestSummary>& summary, const JobEnd& end,
                  std::chrono::steady_clock::time_point started) {
  if (summary.ok()) {
    js.run_name = summary->run_name;
    js.files_by_verdict = summary->FilesByVerdictWithRereads();
    js.rows = summary->rows;
    js.issues = summary->issues;
    js.seconds = summary->seconds;
    js.bytes_done = summary->bytes_read;
    js.files_done = summary->files;
    js.errors.clear();
    for (const auto& e : summary->errors) js.errors.emplace_back(e.path, e.reason);
  } else {
    js.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();
  }
  js.message = end.message;
  js.modules = end.modules;
  if (js.run_name.empty()) js.run_name = end.ran_as;
  js.state = end.state;
}

}  // namespace

void IngestQueue::RunJob(const std::string& job_id, const IngestRequest& request, store::Database& db,
                         store::RunWriter* writer, StatusOr<std::unique_ptr<store::JobClaims>>& claims) {
  // Several daemons may share a PostgreSQL store: run the job only once it is ours (store/admin/job_log.h).
  auto claim = claims.ok() ? (*claims)->Take(job_id) : StatusOr<store::JobClaims::Claim>(claims.status());
  if (!claim.ok() || !claim->claimed) {
    EndUnclaimed(job_id, claim);
    return;
  }
  store::JobClaims& held = *claims.value();
  // RUNNING is only shown to others; what matters is the end, which Finish records.
  held.SetState(job_id, store::JobState::kRunning, "").IgnoreError();
  Update(job_id, [](JobStatus& js) { js.state = JobStatus::State::kRunning; });

  const ingest::IngestOptions options = OptionsFor(request);
  const auto started = std::chrono::steady_clock::now();
  const StatusOr<ingest::IngestSummary> summary = IngestJob(job_id, request, options, writer);
  JobEnd end = JobEndOf(summary, request);
  end.ran_as = summary.ok() ? summary->run_name : options.run_name;
  // A job whose end cannot be recorded stays unfinished in the store and runs again at the next start.
  held.Finish(job_id, end.state, end.message, end.ran_as).IgnoreError();
  if (summary.ok() && end.state == store::JobState::kSucceeded) end.modules = ModuleCount(db, summary->run_name);
  if (end.state != store::JobState::kQueued && request.source == "upload") {
    std::error_code ec;  // staged uploads are ours to remove once the job has ended, either way
    std::filesystem::remove_all(request.path, ec);
  }
  ClearRunningUpload();
  End(job_id, [&](JobStatus& js) { RecordJobEnd(js, summary, end, started); });
}

void IngestQueue::EndUnclaimed(const std::string& job_id, const StatusOr<store::JobClaims::Claim>& claim) {
  const bool ended_elsewhere = claim.ok() && claim->state.has_value();
  ClearRunningUpload();
  End(job_id, [&](JobStatus& js) {
    js.ran_here = false;
    js.state = ended_elsewhere && claim->state == store::JobState::kSucceeded ? store::JobState::kSucceeded
                                                                               : store::JobState::kFailed;
    js.message = !claim.ok()          ? claim.status().message()
                 : ended_elsewhere ? "run by another daemon sharing the store: " +
                                         std::string(store::JobStateName(*claim->state)) +
                                         (claim->message.empty() ? "" : " (" + claim->message + ")")
                                   : "the job is no longer in the store";
  });
}

ingest::IngestOptions IngestQueue::OptionsFor(const IngestRequest& request) const {
  ingest::IngestOptions options;
  options.run_name = request.run_name.empty() ? ingest::DefaultRunNameForPath(request.path) : request.run_name;
  options.labels = request.labels;
  options.time_us = request.run_time_us;
  options.source_description = request.source_description;
  options.append = request.append;
  options.content_digest = request.content_digest;
  options.should_stop = [this] {
    std::lock_guard<std::mutex> lock(mu_);
    return stopping_;
  };
  options.source_limits = source_limits_;
  return options;
}

StatusOr<ingest::IngestSummary> IngestQueue::IngestJob(const std::string& job_id, const IngestRequest& request,
                                                       const ingest::IngestOptions& options,
                                                       store::RunWriter* writer) {
  ingest::DumpIngester ingester(writer);
  auto progress = [&](const ingest::IngestProgress& p) {
    Update(job_id, [&](JobStatus& js) {
      js.files_done = p.files_done;
      js.bytes_done = p.bytes_done;
    });
  };
  try {  // a bug that throws fails this job, not the daemon (a crash would resume and repeat it forever)
    if (request.source != "path") return ingester.Ingest(request.path, options, progress);
    // Checked when asked, and opened beneath its root now: a symlink swapped in while the job waited is refused.
    if (access_ == nullptr) return Status::PermissionDenied("IngestPath is disabled: the server has no --allow-root");
    auto allowed = access_->FindRoot(request.path);
    if (!allowed.ok()) return allowed.status();
    auto source = ingest::DumpSource::OpenBeneath(allowed->root, allowed->relative, source_limits_);
    if (!source.ok()) return source.status();
    return ingester.Ingest(*source.value(), request.path, options, progress);
  } catch (const std::exception& e) {
    return Status::Internal(std::string("ingest failed: ") + e.what());
  }
}

}  // namespace xladb::service
