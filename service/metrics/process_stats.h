// ProcessStats: what Prometheus's `process_*` metrics say of this process, read from Linux's /proc (the
// names and meanings of the official client libraries: process_resident_memory_bytes, process_open_fds, …).
//
// Contract: reads /proc/self/{statm,stat,fd} and /proc/stat; a figure that cannot be read is -1 (and is then
// left out of the scrape). A few system calls and small buffers; never throws; thread-safe.
#ifndef XLADB_SERVICE_METRICS_PROCESS_STATS_H_
#define XLADB_SERVICE_METRICS_PROCESS_STATS_H_

#include <cstdint>

#include "service/metrics/exposition_text.h"

namespace xladb::service::metrics {

struct ProcessStats {
  int64_t resident_bytes = -1;
  int64_t virtual_bytes = -1;
  int64_t open_fds = -1;
  int64_t max_fds = -1;            // the soft RLIMIT_NOFILE
  double cpu_seconds = -1;         // user + system
  double start_time_seconds = -1;  // since the Unix epoch
};

ProcessStats ReadProcessStats();

// The process_* families of `stats` (those known).
void WriteProcessStats(ExpositionText& out, const ProcessStats& stats);

}  // namespace xladb::service::metrics

#endif  // XLADB_SERVICE_METRICS_PROCESS_STATS_H_
