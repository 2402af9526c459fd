// Service events the metrics report, noted where they happen, deep in the handlers:
//   * refusals by cap: how often the daemon turned work away because a configured limit was reached
//     (`xladb_refusals_total{cap="…"}`). The caps are listed once, below; each says which flag or limit it
//     is. A cap counts requests or connections refused, not the errors of files inside an accepted ingest
//     (those are xladb_ingest_files_total{verdict="error"});
//   * the last prune of old runs' detail that succeeded (`xladb_last_prune_timestamp_seconds`), daily or asked.
//
// Contract: process-wide (the daemon has one set of caps and one store), lock-free, safe from any thread.
#ifndef XLADB_SERVICE_METRICS_SERVICE_EVENTS_H_
#define XLADB_SERVICE_METRICS_SERVICE_EVENTS_H_

#include <cstdint>
#include <string_view>

// X(enumerator, label value, what it is): the one list of caps.
#define XLADB_REFUSAL_CAPS(X)                                                                                     \
  X(kQueryConcurrency, "query_concurrency",                                                                       \
    "an SQL query, report or page found every slot taken for 5 s (--query-max-concurrent)")                       \
  X(kQueryLimits, "query_limits",                                                                                 \
    "an SQL query refused at a limit: bytes, a value, a row, columns, time or temp storage (--query-max-*)") \
  X(kUploadBytes, "upload_bytes", "an upload larger than --max-upload-bytes")                                     \
  X(kUploadFiles, "upload_files", "an upload of more files than --max-upload-files")                              \
  X(kHttpConnections, "http_connections",                                                                         \
    "an HTTP connection closed (the oldest idle, or the new one) at the cap of 512, or out of descriptors")        \
  X(kHttpDeadline, "http_deadline", "an HTTP client closed for not sending its whole request in time")             \
  X(kHttpRequestSize, "http_request_size", "an HTTP request whose headers or form were too large (431, 413)")       \
  X(kHttpQueue, "http_queue", "an HTTP request answered 503: every worker busy and the queue full")

namespace xladb::service::metrics {

enum class RefusalCap {
#define XLADB_REFUSAL_ENUMERATOR(enumerator, label, what) enumerator,
  XLADB_REFUSAL_CAPS(XLADB_REFUSAL_ENUMERATOR)
#undef XLADB_REFUSAL_ENUMERATOR
};

inline constexpr RefusalCap kRefusalCaps[] = {
#define XLADB_REFUSAL_VALUE(enumerator, label, what) RefusalCap::enumerator,
    XLADB_REFUSAL_CAPS(XLADB_REFUSAL_VALUE)
#undef XLADB_REFUSAL_VALUE
};

// The cap's label value ("query_concurrency", …).
std::string_view RefusalCapName(RefusalCap cap);

void CountRefusal(RefusalCap cap);
int64_t RefusalCount(RefusalCap cap);

// A prune succeeded at `unix_seconds`; LastPruneSeconds() is 0 until one has.
void NotePrune(double unix_seconds);
double LastPruneSeconds();

}  // namespace xladb::service::metrics

#endif  // XLADB_SERVICE_METRICS_SERVICE_EVENTS_H_
