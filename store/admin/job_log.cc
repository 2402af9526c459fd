#include "store/admin/job_log.h"

#include <nlohmann/json.hpp>

#include "base/enum_names.h"
#include "base/unix_time.h"
#include "store/backend/row_binding.h"
#include "store/query/result_columns.h"

namespace xladb::store {

std::string_view JobStateName(JobState state) {
  switch (state) {
    case JobState::kQueued: return "QUEUED";
    case JobState::kRunning: return "RUNNING";
    case JobState::kSucceeded: return "SUCCEEDED";
    case JobState::kFailed: return "FAILED";
  }
  return "FAILED";
}

std::optional<JobState> ParseJobState(std::string_view name) { return ValueNamed(name, kJobStates, JobStateName); }

namespace {

// The columns every read of ingest_jobs starts with.
const ResultColumns<JobRecord> kJobHeadColumns = {
    {"job_id", &JobRecord::job_id},
    {"source", &JobRecord::source},
    {"path", &JobRecord::path},
    {"run_name", &JobRecord::run_name},
};

// A job's state, read as its text (kStateColumn, ReadState): JobRecord's is a JobState.
struct StoredState {
  std::string text;
};
const ResultColumns<StoredState> kStateColumn = {{"state", &StoredState::text}};

// The state in column `column` of q's row; throws SqlError for text no writer stores.
JobState ReadState(const SqlStatement& q, int column) {
  StoredState state;
  kStateColumn.ReadInto(q, &state, column);
  std::optional<JobState> parsed = ParseJobState(state.text);
  if (!parsed) throw SqlError("ingest_jobs holds the state '" + state.text + "', which is not a job state");
  return *parsed;
}

// A job to resume (Unfinished), then its state and its labels' JSON object.
const ResultColumns<JobRecord> kUnfinishedJobColumns = kJobHeadColumns.Then({
    {"run_time_us", &JobRecord::run_time_us},
    {"created_at_us", &JobRecord::created_at_us},
    {"append", &JobRecord::append},
    {"content_digest", &JobRecord::content_digest},
    {"source_description", &JobRecord::source_description},
    {"files_received", &JobRecord::files_received},
});
struct JobLabels {
  std::string json;
};
const ResultColumns<JobLabels> kJobLabelsColumns = {{"labels", &JobLabels::json}};

// A job as List shows it, then its state.
const ResultColumns<JobRecord> kListedJobColumns = kJobHeadColumns.Then({
    {"message", &JobRecord::message},
    {"created_at_us", &JobRecord::created_at_us},
    {"finished_at_us", &JobRecord::finished_at_us},
});

// The advisory lock of a job (JobClaims): of a bound job id, and of a row's. The one-bigint key space, where
// the schema's lock (store/schema/schema_dialect.h) is one fixed key.
constexpr const char* kJobLockKey = "hashtextextended(CAST(? AS TEXT), 0)";
constexpr const char* kJobLockKeyOfRow = "hashtextextended(job_id, 0)";

// Gives back this connection's advisory lock of a job.
void UnlockJob(SqlConnection& sql, const std::string& job_id) {
  auto unlock = sql.Prepare(std::string("SELECT pg_advisory_unlock(") + kJobLockKey + ")");
  unlock->Bind(1, job_id);
  unlock->Step();
}

// What a claim reads of its job, then its state.
const ResultColumns<JobClaims::Claim> kClaimColumns = {
    {"message", &JobClaims::Claim::message},
};

}  // namespace
Status JobLog::Insert(const JobRecord& job) {
  try {
    nlohmann::json labels = nlohmann::json::object();
    for (const auto& [k, v] : job.labels) labels[k] = v;
    auto ins = db_->connection().Prepare("INSERT INTO ingest_jobs(job_id, source, path, run_name, labels, run_time_us, state, "
                          "message, created_at_us, append, content_digest, source_description, files_received) "
                          "VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?)");
    BindRow(*ins, job.job_id, job.source, job.path, job.run_name, labels.dump(), NonNegative(job.run_time_us),
            JobStateName(job.state), job.message, job.created_at_us, job.append, NonEmpty(job.content_digest),
            NonEmpty(job.source_description), NonNegative(job.files_received));
    ins->Execute();
    return Status::Ok();
  } catch (const std::exception& e) {
    return Status::IoError(std::string("recording ingest job: ") + e.what());
  }
}

Status JobLog::SetState(const std::string& job_id, JobState state, const std::string& message,
                        const std::string& run_name) {
  try {
    auto up = db_->connection().Prepare(
        "UPDATE ingest_jobs SET state = ?, message = ?, finished_at_us = ?, "
        "run_name = CASE WHEN run_name = '' THEN ? ELSE run_name END WHERE job_id = ?");
    BindRow(*up, JobStateName(state), message, OnlyIf(IsFinal(state), UnixMicrosNow()), run_name, job_id);
    up->Execute();
    return Status::Ok();
  } catch (const std::exception& e) {
    return Status::IoError(std::string("updating ingest job: ") + e.what());
  }
}

StatusOr<std::vector<JobRecord>> JobLog::Unfinished() {
  try {
    std::vector<JobRecord> jobs;
    // On PostgreSQL, jobs another daemon holds (JobClaims' advisory lock) are not this daemon's to resume:
    // passed over. A lock this asks for and gets is given back at once.
    const bool shared = db_->dialect() == SqlDialect::kPostgresql;
    const std::string free_column =
        shared ? std::string(", CAST(pg_try_advisory_lock(") + kJobLockKeyOfRow + ") AS INTEGER)" : "";
    auto q = db_->connection().Prepare(
        "SELECT " + kUnfinishedJobColumns.SelectList() + ", " + kStateColumn.SelectList() + ", " +
        kJobLabelsColumns.SelectList() + free_column +
        " FROM ingest_jobs WHERE state IN (?, ?) ORDER BY created_at_us, job_id");
    BindRow(*q, JobStateName(JobState::kQueued), JobStateName(JobState::kRunning));
    std::vector<std::string> to_release;
    while (q->Step()) {
      JobRecord j;
      JobLabels json;
      const int state_column = kUnfinishedJobColumns.ReadInto(*q, &j);
      j.state = ReadState(*q, state_column);
      const int labels_column = state_column + kStateColumn.size();
      kJobLabelsColumns.ReadInto(*q, &json, labels_column);
      if (shared) {
        if (q->Int(labels_column + kJobLabelsColumns.size()) == 0) continue;  // held by another daemon
        to_release.push_back(j.job_id);
      }
      auto labels = nlohmann::json::parse(json.json, nullptr, /*allow_exceptions=*/false);
      if (labels.is_object()) {
        for (auto it = labels.begin(); it != labels.end(); ++it) {
          if (it.value().is_string()) j.labels.emplace_back(it.key(), it.value().get<std::string>());
        }
      }
      jobs.push_back(std::move(j));
    }
    q.reset();
    for (const std::string& job_id : to_release) UnlockJob(db_->connection(), job_id);
    return jobs;
  } catch (const std::exception& e) {
    return Status::IoError(std::string("reading ingest jobs: ") + e.what());
  }
}

StatusOr<std::vector<JobRecord>> JobLog::List(const JobFilter& filter) {
  try {
    auto q = db_->connection().Prepare(
        "SELECT " + kListedJobColumns.SelectList() + ", " + kStateColumn.SelectList() +
        " FROM ingest_jobs WHERE (? = '' OR run_name = ?) AND (? = '' OR state = ?) "
        "ORDER BY created_at_us DESC, job_id DESC LIMIT ?");
    const std::string state(filter.state ? JobStateName(*filter.state) : "");  // "" matches any
    BindRow(*q, filter.run_name, filter.run_name, state, state, filter.limit);
    std::vector<JobRecord> jobs;
    while (q->Step()) {
      JobRecord j;
      j.state = ReadState(*q, kListedJobColumns.ReadInto(*q, &j));
      jobs.push_back(std::move(j));
    }
    return jobs;
  } catch (const std::exception& e) {
    return Status::IoError(std::string("listing ingest jobs: ") + e.what());
  }
}

StatusOr<std::unique_ptr<JobClaims>> JobClaims::Open(const std::string& db_path) {
  auto db = Database::Open(db_path);
  if (!db.ok()) return db.status();
  return std::unique_ptr<JobClaims>(new JobClaims(std::move(db.value())));
}

StatusOr<JobClaims::Claim> JobClaims::Take(const std::string& job_id) {
  SqlConnection& sql = db_->connection();
  const bool shared = db_->dialect() == SqlDialect::kPostgresql;
  try {
    Release();  // a claim not finished (its job failed to start) ends with the next
    Claim claim;
    if (shared) {
      auto lock = sql.Prepare(std::string("SELECT CAST(pg_try_advisory_lock(") + kJobLockKey + ") AS INTEGER)");
      lock->Bind(1, job_id);
      if (!lock->Step() || lock->Int(0) == 0) {  // another daemon holds it: wait for it to end (or die)
        auto wait = sql.Prepare(std::string("SELECT pg_advisory_lock(") + kJobLockKey + ")");
        wait->Bind(1, job_id);
        wait->Step();
      }
      held_job_ = job_id;
    }
    auto q = sql.Prepare("SELECT " + kClaimColumns.SelectList() + ", " + kStateColumn.SelectList() +
                         " FROM ingest_jobs WHERE job_id = ?");
    q->Bind(1, job_id);
    const bool found = q->Step();
    if (found) claim.state = ReadState(*q, kClaimColumns.ReadInto(*q, &claim));
    q.reset();
    claim.claimed = found && !IsFinal(*claim.state);
    if (!claim.claimed) Release();
    if (!found) claim.state.reset();
    return claim;
  } catch (const std::exception& e) {
    Release();
    return Status::IoError(std::string("claiming ingest job ") + job_id + ": " + e.what());
  }
}

void JobClaims::Release() {
  if (held_job_.empty()) return;
  const std::string job_id = std::move(held_job_);
  held_job_.clear();
  try {
    UnlockJob(db_->connection(), job_id);
  } catch (...) {
    // A connection that failed has lost its locks with it.
  }
}

Status JobClaims::SetState(const std::string& job_id, JobState state, const std::string& message) {
  return log_.SetState(job_id, state, message);
}

Status JobClaims::Finish(const std::string& job_id, JobState state, const std::string& message,
                         const std::string& run_name) {
  Status set = log_.SetState(job_id, state, message, run_name);
  Release();
  return set;
}

}  // namespace xladb::store
