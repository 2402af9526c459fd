#include "service/daemon_metrics.h"

#include <sys/statvfs.h>

#include <algorithm>
#include <filesystem>
#include <iterator>
#include <optional>
#include <vector>

#include "base/unix_time.h"
#include "ingest/dump_ingester.h"
#include "ingest/records/file_verdict.h"
#include "service/metrics/exposition_text.h"
#include "service/metrics/process_stats.h"
#include "service/metrics/service_events.h"

namespace xladb::service {

using metrics::ExpositionText;
using metrics::MetricType;

namespace {

// The slot of `name` in DaemonMetrics::files_by_verdict_: a verdict's index, or the one after them for the
// files read again. -1 for anything else.
int VerdictSlot(const std::string& name) {
  if (name == ingest::kFilesRereadKey) return static_cast<int>(std::size(ingest::kFileVerdicts));
  const auto verdict = ingest::ParseFileVerdict(name);
  return verdict ? static_cast<int>(*verdict) : -1;
}

void Counter(ExpositionText& out, const char* name, const char* help, int64_t value) {
  out.Family(name, MetricType::kCounter, help);
  out.Sample(name, {}, value);
}

template <typename Number>
void Gauge(ExpositionText& out, const char* name, const char* help, Number value) {
  out.Family(name, MetricType::kGauge, help);
  out.Sample(name, {}, value);
}

}  // namespace

DaemonMetrics::DaemonMetrics(BuildInfo build, std::string db_path, std::chrono::milliseconds store_period)
    : build_(std::move(build)),
      db_path_(std::move(db_path)),
      store_period_(store_period),
      job_seconds_(metrics::SecondsBuckets(2500)),
      rpc_seconds_({"service", "method", "code"}, metrics::SecondsBuckets(100)) {}

std::unique_ptr<DaemonMetrics> DaemonMetrics::Create(BuildInfo build, std::string db_path,
                                                     std::chrono::milliseconds store_period) {
  return std::unique_ptr<DaemonMetrics>(new DaemonMetrics(std::move(build), std::move(db_path), store_period));
}

DaemonMetrics::~DaemonMetrics() = default;

void DaemonMetrics::StartMeasuring() {
  std::lock_guard<std::mutex> lock(measure_mu_);
  if (!store_measure_) store_measure_ = std::make_unique<StoreMeasure>(db_path_, store_period_);
}

void DaemonMetrics::OnJobEnd(const JobStatus& job) {
  if (!job.ran_here) return;  // another daemon's job: counted by that daemon
  (job.state == JobStatus::State::kSucceeded ? jobs_succeeded_ : jobs_failed_).fetch_add(1);
  for (const auto& [verdict, files] : job.files_by_verdict) {
    if (const int slot = VerdictSlot(verdict); slot >= 0) files_by_verdict_[slot].fetch_add(files);
  }
  bytes_.fetch_add(job.bytes_done);
  rows_.fetch_add(job.rows);
  job_seconds_.Observe(job.seconds);
  std::lock_guard<std::mutex> lock(measure_mu_);
  if (store_measure_) store_measure_->MeasureSoon();
}

void DaemonMetrics::ObserveRpc(std::string_view service, std::string_view method, std::string_view code,
                               double seconds) {
  rpc_seconds_.Observe({std::string(service), std::string(method), std::string(code)}, seconds);
}

void DaemonMetrics::WriteIngest(ExpositionText& out) const {
  out.Family("xladb_ingest_jobs_total", MetricType::kCounter,
             "Ingest jobs ended since the daemon started, by final state.");
  out.Sample("xladb_ingest_jobs_total", {{"state", "succeeded"}}, jobs_succeeded_.load());
  out.Sample("xladb_ingest_jobs_total", {{"state", "failed"}}, jobs_failed_.load());
  out.Family("xladb_ingest_files_total", MetricType::kCounter,
             "Files of ended ingest jobs, by verdict (ingested, unchanged, not_ingested, error).");
  for (ingest::FileVerdict verdict : ingest::kFileVerdicts) {
    out.Sample("xladb_ingest_files_total", {{"verdict", ingest::FileVerdictName(verdict)}},
               files_by_verdict_[static_cast<int>(verdict)].load());
  }
  Counter(out, "xladb_ingest_files_reread_total",
          "Unchanged files read again to rebuild a module one of whose files was replaced.",
          files_by_verdict_[std::size(ingest::kFileVerdicts)].load());
  Counter(out, "xladb_ingest_bytes_total", "Bytes of dump files read by ended ingest jobs.", bytes_.load());
  Counter(out, "xladb_ingest_rows_total", "Rows stored by ended ingest jobs.", rows_.load());
  out.Family("xladb_ingest_job_duration_seconds", MetricType::kHistogram, "How long ended ingest jobs ran.");
  job_seconds_.Write(out, "xladb_ingest_job_duration_seconds", {});
  if (sources_.queue != nullptr) {
    const IngestQueue::Backlog backlog = sources_.queue->backlog();
    Gauge(out, "xladb_ingest_queue_depth", "Ingest jobs waiting for the writer.", backlog.queued);
    Gauge(out, "xladb_ingest_jobs_running", "Ingest jobs being ingested now (0 or 1: there is one writer).",
          int64_t{backlog.running ? 1 : 0});
    const int64_t waited_us =
        backlog.oldest_queued_created_at_us < 0 ? 0 : UnixMicrosNow() - backlog.oldest_queued_created_at_us;
    const double age = std::max(0.0, static_cast<double>(waited_us) / 1e6);
    Gauge(out, "xladb_ingest_oldest_queued_job_age_seconds",
          "How long the oldest waiting ingest job has waited (0 when none waits).", age);
  }
}

void DaemonMetrics::WriteStore(ExpositionText& out) const {
  std::optional<StoreMeasure::Measure> measure;
  {
    std::lock_guard<std::mutex> lock(measure_mu_);
    if (store_measure_) measure = store_measure_->Last();
  }
  if (!measure) return;
  Gauge(out, "xladb_runs_stored", "Runs in the store, at the last measure.", measure->runs);
  Gauge(out, "xladb_modules_stored", "Modules in the store, at the last measure.", measure->modules);
  Gauge(out, "xladb_database_size_bytes",
        "The store's size at the last measure: SQLite's file and its WAL, or the PostgreSQL database.",
        measure->bytes);
  Gauge(out, "xladb_store_measured_timestamp_seconds", "When the store's sizes were last measured (Unix time).",
        measure->unix_seconds);
}

// The free and total bytes of the file systems the daemon writes to: the SQLite file's (a PostgreSQL store's
// disk is the database server's) and the upload spool's. statvfs(2): no query, no file opened.
void DaemonMetrics::WriteFileSystems(ExpositionText& out) const {
  std::vector<std::pair<std::string_view, std::string>> folders;
  std::error_code ec;
  if (std::filesystem::is_regular_file(db_path_, ec)) folders.emplace_back("store", db_path_);
  if (!sources_.spool_dir.empty()) folders.emplace_back("spool", sources_.spool_dir);
  std::vector<std::pair<std::string_view, struct statvfs>> measured;
  for (const auto& [role, folder] : folders) {
    struct statvfs fs {};
    if (::statvfs(folder.c_str(), &fs) == 0) measured.emplace_back(role, fs);
  }
  if (measured.empty()) return;
  out.Family("xladb_filesystem_avail_bytes", MetricType::kGauge,
             "Bytes free to the daemon on the file system of its SQLite store's folder and of its upload spool.");
  for (const auto& [role, fs] : measured) {
    out.Sample("xladb_filesystem_avail_bytes", {{"folder", role}}, static_cast<int64_t>(fs.f_bavail * fs.f_frsize));
  }
  out.Family("xladb_filesystem_size_bytes", MetricType::kGauge,
             "Size of the file system of the SQLite store's folder and of the upload spool.");
  for (const auto& [role, fs] : measured) {
    out.Sample("xladb_filesystem_size_bytes", {{"folder", role}}, static_cast<int64_t>(fs.f_blocks * fs.f_frsize));
  }
}

std::string DaemonMetrics::Scrape() const {
  ExpositionText out;
  out.Family("xladb_build_info", MetricType::kGauge, "The daemon's version, commit and schema version (always 1).");
  const std::string schema = std::to_string(build_.schema_version);
  out.Sample("xladb_build_info", {{"version", build_.version}, {"commit", build_.commit}, {"schema_version", schema}},
             int64_t{1});
  WriteIngest(out);
  out.Family("xladb_rpc_duration_seconds", MetricType::kHistogram,
             "gRPC calls served, by service, method and status code, and how long they took.");
  rpc_seconds_.Write(out, "xladb_rpc_duration_seconds");
  if (sources_.query_gate != nullptr) {
    Gauge(out, "xladb_sql_query_slots_in_use", "SQL queries, reports and pages running now.",
          int64_t{sources_.query_gate->held()});
    Gauge(out, "xladb_sql_query_slots", "SQL queries, reports and pages that may run at once (--query-max-concurrent).",
          int64_t{sources_.query_gate->limit()});
  }
  out.Family("xladb_refusals_total", MetricType::kCounter,
             "Requests and connections refused because a cap was reached, by cap (docs/deploy.md lists them).");
  for (metrics::RefusalCap cap : metrics::kRefusalCaps) {
    out.Sample("xladb_refusals_total", {{"cap", metrics::RefusalCapName(cap)}}, metrics::RefusalCount(cap));
  }
  WriteStore(out);
  WriteFileSystems(out);
  Gauge(out, "xladb_last_prune_timestamp_seconds",
        "When the last prune of old runs' detail succeeded (Unix time; 0: none since the daemon started).",
        metrics::LastPruneSeconds());
  metrics::WriteProcessStats(out, metrics::ReadProcessStats());
  return out.Take();
}

}  // namespace xladb::service
