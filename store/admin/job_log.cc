#include "store/admin/job_log.h"

#include <nlohmann/json.hpp>

#include "base/unix_time.h"
#include "store/query/result_columns.h"

namespace xladb::store {
namespace {

// The columns every read of ingest_jobs starts with.
const ResultColumns<JobRecord> kJobHeadColumns = {
    {"job_id", &JobRecord::job_id},
    {"source", &JobRecord::source},
    {"path", &JobRecord::path},
    {"run_name", &JobRecord::run_name},
};

// A job to resume (Unfinished), and its labels' JSON object.
const ResultColumns<JobRecord> kUnfinishedJobColumns = kJobHeadColumns.Then({
    {"run_time_us", &JobRecord::run_time_us},
    {"state", &JobRecord::state},
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

// A job as List shows it.
const ResultColumns<JobRecord> kListedJobColumns = kJobHeadColumns.Then({
    {"state", &JobRecord::state},
    {"message", &JobRecord::message},
    {"created_at_us", &JobRecord::created_at_us},
    {"finished_at_us", &JobRecord::finished_at_us},
});

// What a claim reads of its job.
const ResultColumns<JobClaims::Claim> kClaimColumns = {
    {"state", &JobClaims::Claim::state},
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
    ins->Bind(1, job.job_id);
    ins->Bind(2, job.source);
    ins->Bind(3, job.path);
    ins->Bind(4, job.run_name);
    ins->Bind(5, labels.dump());
    if (job.run_time_us >= 0) ins->Bind(6, job.run_time_us); else ins->BindNull(6);
    ins->Bind(7, job.state);
    ins->Bind(8, job.message);
    ins->Bind(9, job.created_at_us);
    ins->Bind(10, job.append ? 1 : 0);
    if (job.content_digest.empty()) ins->BindNull(11); else ins->Bind(11, job.content_digest);
    if (job.source_description.empty()) ins->BindNull(12); else ins->Bind(12, job.source_description);
    if (job.files_received >= 0) ins->Bind(13, job.files_received); else ins->BindNull(13);
    ins->Execute();
    return Status::Ok();
  } catch (const std::exception& e) {
    return Status::IoError(std::string("recording ingest job: ") + e.what());
  }
}

Status JobLog::SetState(const std::string& job_id, const std::string& state, const std::string& message,
                        const std::string& run_name) {
  try {
    bool finished = state == "SUCCEEDED" || state == "FAILED";
    auto up = db_->connection().Prepare(
        "UPDATE ingest_jobs SET state = ?, message = ?, finished_at_us = ?, "
        "run_name = CASE WHEN run_name = '' THEN ? ELSE run_name END WHERE job_id = ?");
    up->Bind(1, state);
    up->Bind(2, message);
    if (finished) up->Bind(3, UnixMicrosNow()); else up->BindNull(3);
    up->Bind(4, run_name);
    up->Bind(5, job_id);
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
        "SELECT " + kUnfinishedJobColumns.SelectList() + ", " + kJobLabelsColumns.SelectList() +
        " FROM ingest_jobs WHERE state IN ('QUEUED', 'RUNNING') ORDER BY created_at_us, job_id" +
        (shared ? " FOR UPDATE SKIP LOCKED" : ""));
    while (q->Step()) {
      JobRecord j;
      JobLabels json;
      kJobLabelsColumns.ReadInto(*q, &json, kUnfinishedJobColumns.ReadInto(*q, &j));
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
  if (!filter.state.empty() && filter.state != "QUEUED" && filter.state != "RUNNING" && filter.state != "SUCCEEDED" &&
      filter.state != "FAILED") {
    return Status::InvalidArgument("state '" + filter.state + "' is not QUEUED, RUNNING, SUCCEEDED or FAILED");
  }
  try {
    auto q = db_->connection().Prepare(
        "SELECT " + kListedJobColumns.SelectList() +
        " FROM ingest_jobs WHERE (? = '' OR run_name = ?) AND (? = '' OR state = ?) "
        "ORDER BY created_at_us DESC, job_id DESC LIMIT ?");
    q->Bind(1, filter.run_name);
    q->Bind(2, filter.run_name);
    q->Bind(3, filter.state);
    q->Bind(4, filter.state);
    q->Bind(5, filter.limit);
    std::vector<JobRecord> jobs;
    while (q->Step()) jobs.push_back(kListedJobColumns.Read(*q));
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
      auto q = sql.Prepare("SELECT " + kClaimColumns.SelectList() + " FROM ingest_jobs WHERE job_id = ?" +
                           (!shared ? "" : wait ? " FOR UPDATE" : " FOR UPDATE SKIP LOCKED"));
      q->Bind(1, job_id);
      const bool found = q->Step();
      if (found) kClaimColumns.ReadInto(*q, &claim);
      return found;
    };
    bool found = read(/*wait=*/false);
    if (!found && shared) {  // held by another daemon (or gone): wait for it to end
      sql.Exec("ROLLBACK");
      found = read(/*wait=*/true);
    }
    claim.claimed = found && (claim.state == "QUEUED" || claim.state == "RUNNING");
    if (shared && !claim.claimed) sql.Exec("COMMIT");
    in_transaction_ = shared && claim.claimed;
    if (!found) claim.state.clear();
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

Status JobClaims::SetState(const std::string& job_id, const std::string& state, const std::string& message) {
  return log_.SetState(job_id, state, message);
}

Status JobClaims::Finish(const std::string& job_id, const std::string& state, const std::string& message,
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
