// DaemonMetrics: xladbd's Prometheus metrics (GET /metrics on --http or --metrics-listen; docs/deploy.md
// "Metrics" lists every family and what to alert on).
//
// A scrape reads counters and a moment's state of the queue and the query gate; it never runs a query. The
// store's sizes (runs, modules, bytes) are measured by the object's own thread on its own read-only
// connection: from StartMeasuring() on (once the store exists), every `store_period`, and within a second
// after an ingest job ends; the scrape reports the last measure and its time
// (xladb_store_measured_timestamp_seconds), and leaves the sizes out before the first.
//
// Contract
//   * OnJobEnd (the queue's writer thread) and ObserveRpc (any thread) only add to counters;
//     Scrape may run meanwhile, from any thread. Thread-safe.
//   * Neither Start nor StartMeasuring fails: a store that cannot be measured leaves the size families out
//     of the scrape until it can, and says why once on stderr.
//   * Destruction stops and joins the measuring thread (a measure in progress finishes first).
#ifndef XLADB_SERVICE_DAEMON_METRICS_H_
#define XLADB_SERVICE_DAEMON_METRICS_H_

#include <atomic>
#include <iterator>
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>
#include <thread>

#include "ingest/records/file_verdict.h"
#include "service/ingest_queue.h"
#include "service/metrics/histogram.h"
#include "service/query_service.h"
#include "store/admin/store_size.h"

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
  static std::unique_ptr<DaemonMetrics> Start(BuildInfo build, std::string db_path,
                                              std::chrono::milliseconds store_period = std::chrono::seconds(15));
  ~DaemonMetrics();
  DaemonMetrics(const DaemonMetrics&) = delete;
  DaemonMetrics& operator=(const DaemonMetrics&) = delete;

  void set_sources(MetricsSources sources) { sources_ = sources; }
  // Starts the thread that measures the store (once; later calls do nothing).
  void StartMeasuring();

  // A job ended (SUCCEEDED or FAILED): its state, files by verdict, bytes, rows and duration.
  void OnJobEnd(const JobStatus& job);
  // One gRPC call: its full method name (/xladb.v1.QueryService/ListRuns), status code name, duration.
  void ObserveRpc(std::string_view method, std::string_view code, double seconds);

  // The exposition text (service/metrics/exposition_text.h) of every family.
  std::string Scrape() const;

 private:
  DaemonMetrics(BuildInfo build, std::string db_path, std::chrono::milliseconds store_period);
  void MeasureStoreLoop();
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

  mutable std::mutex store_mu_;
  std::condition_variable store_wake_;
  bool stopping_ = false;
  bool measure_soon_ = false;
  std::optional<store::StoreSize> store_size_;  // the last measure
  int64_t store_wal_bytes_ = 0;                 // SQLite's WAL file at that measure
  double store_measured_seconds_ = 0;
  std::thread store_thread_;  // StartMeasuring(); joined by the destructor
};

}  // namespace xladb::service

#endif  // XLADB_SERVICE_DAEMON_METRICS_H_
