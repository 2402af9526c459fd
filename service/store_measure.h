// StoreMeasure: the store's sizes for the daemon's metrics (xladb_runs_stored, xladb_modules_stored,
// xladb_database_size_bytes), measured on a thread of its own with its own read-only connection, so that a
// scrape never runs a query: at start, every `period`, and a second after MeasureSoon() (an ingest job ended).
//
// Contract
//   * Last() returns the latest measure, or nullopt before the first good one; a failed measure keeps the
//     previous one (and its time says how old it is) and is said once on stderr. Thread-safe.
//   * Sizes: store/admin/store_size.h's MeasureStore (runs and modules counted; the SQLite file and its WAL
//     on disk, or pg_database_size on PostgreSQL).
//   * Destruction stops the thread and waits up to 5 s for a measure in progress; past that (a PostgreSQL
//     server that stopped answering) the thread is left to end on its own, holding only its shared state and
//     connection, so that a stuck database cannot hold the daemon's exit.
#ifndef XLADB_SERVICE_STORE_MEASURE_H_
#define XLADB_SERVICE_STORE_MEASURE_H_

#include <chrono>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <thread>

namespace xladb::service {

class StoreMeasure {
 public:
  struct Measure {
    int64_t runs = 0, modules = 0, bytes = 0;
    double unix_seconds = 0;  // when it was taken
  };

  StoreMeasure(std::string db_path, std::chrono::milliseconds period);
  ~StoreMeasure();
  StoreMeasure(const StoreMeasure&) = delete;
  StoreMeasure& operator=(const StoreMeasure&) = delete;

  void MeasureSoon();
  std::optional<Measure> Last() const;

  struct Shared;  // store_measure.cc: what the thread and the object share

 private:
  std::shared_ptr<Shared> shared_;
  std::thread thread_;
};

}  // namespace xladb::service

#endif  // XLADB_SERVICE_STORE_MEASURE_H_
