// DaemonMetrics: xladbd's Prometheus metrics (GET /metrics on --http or --metrics-listen; docs/deploy.md
// "Metrics" lists every family and what to alert on).
//
// A scrape reads counters and a moment's state of the queue and the query gate; it never runs a query. The
// store's sizes (runs, modules, bytes) come from a StoreMeasure (service/store_measure.h) started by
// StartMeasuring() once the store exists: every `store_period`, and a second after an ingest job ends; the
// scrape reports the last measure and its time (xladb_store_measured_timestamp_seconds), and leaves the
// sizes out before the first.
//
// Contract
//   * OnJobEnd (the queue's writer thread) and ObserveRpc (any thread) only add to counters;
//     Scrape may run meanwhile, from any thread. Thread-safe.
//   * Neither Create nor StartMeasuring fails: a store that cannot be measured leaves the size families out
//     of the scrape until it can (or keeps the last good measure), and says why once on stderr.
#ifndef XLADB_SERVICE_DAEMON_METRICS_H_
#define XLADB_SERVICE_DAEMON_METRICS_H_

#include <atomic>
#include <chrono>
#include <cstdint>
#include <iterator>
#include <memory>
#include <mutex>
#include <string>
#include <string_view>

#include "ingest/records/file_verdict.h"
#include "service/ingest_queue.h"
#include "service/metrics/histogram.h"
#include "service/query_service.h"
#include "service/store_measure.h"

namespace xladb::service {

// What xladb_build_info says (base/build_version.h, known to the executables only).
struct BuildInfo {
  std::string version, commit;
  int schema_version = 0;
};

// The daemon's parts a scrape looks at (not owned; null: left out). Set before the first scrape.
struct MetricsSources {
  const IngestQueue* queue = nullptr;
  const ConcurrencyGate* query_gate = nullptr;
  std::string spool_dir;  // uploads are staged here: its file system's free space is reported ("": not)
};

class DaemonMetrics {
 public:
  // `db_path`: the store measured (SQLite file or postgresql:// URI).
  static std::unique_ptr<DaemonMetrics> Create(BuildInfo build, std::string db_path,
                                               std::chrono::milliseconds store_period = std::chrono::seconds(15));
  ~DaemonMetrics();
  DaemonMetrics(const DaemonMetrics&) = delete;
  DaemonMetrics& operator=(const DaemonMetrics&) = delete;

  void set_sources(MetricsSources sources) { sources_ = sources; }
  // Starts measuring the store (once; later calls do nothing).
  void StartMeasuring();

  // A job ended (SUCCEEDED or FAILED): its state, files by verdict, bytes, rows and duration. Jobs this
  // daemon did not run (JobStatus::ran_here) are not counted.
  void OnJobEnd(const JobStatus& job);
  // One gRPC call: its service ("xladb.v1.QueryService"), method ("ListRuns"), status code name, duration.
  void ObserveRpc(std::string_view service, std::string_view method, std::string_view code, double seconds);

  // The exposition text (service/metrics/exposition_text.h) of every family.
  std::string Scrape() const;

 private:
  DaemonMetrics(BuildInfo build, std::string db_path, std::chrono::milliseconds store_period);
  void WriteIngest(metrics::ExpositionText& out) const;
  void WriteStore(metrics::ExpositionText& out) const;
  void WriteFileSystems(metrics::ExpositionText& out) const;

  const BuildInfo build_;
  const std::string db_path_;
  const std::chrono::milliseconds store_period_;
  MetricsSources sources_;

  std::atomic<int64_t> jobs_succeeded_{0}, jobs_failed_{0};
  // By ingest::FileVerdict, then the files read again (ingest::kFilesRereadKey).
  std::atomic<int64_t> files_by_verdict_[std::size(ingest::kFileVerdicts) + 1] = {};
  std::atomic<int64_t> bytes_{0}, rows_{0};
  metrics::Histogram job_seconds_;
  metrics::HistogramFamily rpc_seconds_;

  mutable std::mutex measure_mu_;               // guards the pointer: jobs may end before StartMeasuring
  std::unique_ptr<StoreMeasure> store_measure_;
};

}  // namespace xladb::service

#endif  // XLADB_SERVICE_DAEMON_METRICS_H_
