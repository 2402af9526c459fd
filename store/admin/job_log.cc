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
    // On PostgreSQL, jobs another daemon holds (JobClaims) are not this daemon's to resume: passed over.
    const bool shared = db_->dialect() == SqlDialect::kPostgresql;
    if (shared) db_->connection().Exec("BEGIN");
    auto q = db_->connection().Prepare(
        "SELECT " + kUnfinishedJobColumns.SelectList() + ", " + kStateColumn.SelectList() + ", " +
        kJobLabelsColumns.SelectList() + " FROM ingest_jobs WHERE state IN (?, ?) ORDER BY created_at_us, job_id" +
        (shared ? " FOR UPDATE SKIP LOCKED" : ""));
    BindRow(*q, JobStateName(JobState::kQueued), JobStateName(JobState::kRunning));
    while (q->Step()) {
      JobRecord j;
      JobLabels json;
      const int state_column = kUnfinishedJobColumns.ReadInto(*q, &j);
      j.state = ReadState(*q, state_column);
      kJobLabelsColumns.ReadInto(*q, &json, state_column + kStateColumn.size());
      auto labels = nlohmann::json::parse(json.json, nullptr, /*allow_exceptions=*/false);
      if (labels.is_object()) {
        for (auto it = labels.begin(); it != labels.end(); ++it) {
          if (it.value().is_string()) j.labels.emplace_back(it.key(), it.value().get<std::string>());
        }
      }
      jobs.push_back(std::move(j));
    }
    q.reset();
    if (shared) db_->connection().Exec("ROLLBACK");  // the locks were only for telling held jobs apart
    return jobs;
  } catch (const std::exception& e) {
    if (db_->dialect() == SqlDialect::kPostgresql) (void)db_->Exec("ROLLBACK");
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
    Claim claim;
    // `wait`: FOR UPDATE waits for another holder; without it, SKIP LOCKED passes a held row over.
    const auto read = [&](bool wait) {
      if (shared) sql.Exec("BEGIN");
      auto q = sql.Prepare("SELECT " + kClaimColumns.SelectList() + ", " + kStateColumn.SelectList() +
                           " FROM ingest_jobs WHERE job_id = ?" +
                           (!shared ? "" : wait ? " FOR UPDATE" : " FOR UPDATE SKIP LOCKED"));
      q->Bind(1, job_id);
      const bool found = q->Step();
      if (found) claim.state = ReadState(*q, kClaimColumns.ReadInto(*q, &claim));
      return found;
    };
    bool found = read(/*wait=*/false);
    if (!found && shared) {  // held by another daemon (or gone): wait for it to end
      sql.Exec("ROLLBACK");
      found = read(/*wait=*/true);
    }
    claim.claimed = found && !IsFinal(*claim.state);
    if (shared && !claim.claimed) sql.Exec("COMMIT");
    in_transaction_ = shared && claim.claimed;
    if (!found) claim.state.reset();
    return claim;
  } catch (const std::exception& e) {
    if (shared) {
      try {
        sql.Exec("ROLLBACK");
      } catch (...) {
      }
    }
    in_transaction_ = false;
    return Status::IoError(std::string("claiming ingest job ") + job_id + ": " + e.what());
  }
}

Status JobClaims::SetState(const std::string& job_id, JobState state, const std::string& message) {
  return log_.SetState(job_id, state, message);
}

Status JobClaims::Finish(const std::string& job_id, JobState state, const std::string& message,
                         const std::string& run_name) {
  Status set = log_.SetState(job_id, state, message, run_name);
  if (!in_transaction_) return set;
  in_transaction_ = false;
  if (!set.ok()) {
    (void)db_->Exec("ROLLBACK");
    return set;
  }
  return db_->Exec("COMMIT");
}

}  // namespace xladb::store
