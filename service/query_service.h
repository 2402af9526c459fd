// QueryServiceImpl: the xladb.v1.QueryService handlers. Each one checks access, opens (or reuses) a
// read-only connection for the calling thread, and answers with service/query_answers.h.
//
// Contract
//   * Read-only: every call uses a connection opened SQLITE_OPEN_READONLY; Query additionally refuses
//     statements that would write and stops at the configured row, byte, per-value and time limits. At most
//     QueryLimits::max_concurrent Query calls run at once; the rest wait briefly, then RESOURCE_EXHAUSTED.
//     Query answers in messages of at most kQueryMessageBytes (1 MiB) of values, or one row of at most
//     max_row_bytes (3 MiB), under gRPC's default 4 MiB receive limit; the last message has `last` set. A
//     client that stops reading is cancelled at the query's time limit, so it cannot hold a slot.
//   * Every string sent is valid UTF-8 (proto/wire_text.h): names carry U+FFFD for bytes that are not, and
//     Query sends such text (and BLOBs) as bytes_value.
//   * Requests with negative counts or limits, or over their documented maximum, are INVALID_ARGUMENT.
//   * Errors map to gRPC codes: kNotFound → NOT_FOUND, kInvalidArgument → INVALID_ARGUMENT,
//     kPermissionDenied → PERMISSION_DENIED, kResourceExhausted → RESOURCE_EXHAUSTED, others → INTERNAL.
//   * Thread-safe: gRPC calls handlers concurrently; connections are per thread.
#ifndef XLADB_SERVICE_QUERY_SERVICE_H_
#define XLADB_SERVICE_QUERY_SERVICE_H_

#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <mutex>
#include <utility>
#include <optional>
#include <string>

#include <grpcpp/grpcpp.h>

#include "base/status.h"
#include "service/access_policy.h"
#include "store/backend/database.h"
#include "xladb/v1/xladb.grpc.pb.h"

namespace xladb::service {

struct QueryLimits {
  int64_t max_rows = 1000000;                // rows per Query call
  int64_t max_bytes = int64_t{256} << 20;    // result bytes per Query call (all values together)
  int64_t max_value_bytes = int64_t{1} << 20;  // one value (checked by SQLite before the value is made)
  int64_t max_row_bytes = int64_t{3} << 20;    // one row: under gRPC's default 4 MiB receive limit
  int max_columns = 64;                      // result columns: with max_value_bytes, bounds a row's memory
  int64_t timeout_ms = 30000;                // per Query call
  int max_concurrent = 4;                    // Query calls running at once; more wait up to queue_wait_ms
  int64_t queue_wait_ms = 5000;              // then get RESOURCE_EXHAUSTED
};

// Query's messages are cut before they pass this many value bytes; a single larger row (at most
// QueryLimits::max_row_bytes) goes alone.
inline constexpr size_t kQueryMessageBytes = size_t{1} << 20;
// The largest message xladbd (and the CLI's in-process service) receives, and the CLI receives from xladbd.
inline constexpr int kMaxMessageBytes = 64 << 20;
inline constexpr size_t kReportChunkBytes = size_t{1} << 20;

// At most `limit` holders at once. Thread-safe.
class ConcurrencyGate {
 public:
  // A slot held; given back when destroyed, however its holder's scope ends (a renderer that throws too: a
  // slot given back by hand was lost for good that way). Movable, not copyable; must not outlive its gate.
  class Slot {
   public:
    Slot(Slot&& other) noexcept : gate_(std::exchange(other.gate_, nullptr)) {}
    Slot& operator=(Slot&&) = delete;
    ~Slot() {
      if (gate_ != nullptr) gate_->Leave();
    }

   private:
    friend class ConcurrencyGate;
    explicit Slot(ConcurrencyGate* gate) : gate_(gate) {}
    ConcurrencyGate* gate_;
  };

  explicit ConcurrencyGate(int limit) : limit_(limit) {}
  // Waits up to `timeout` for a slot; nullopt when none came.
  [[nodiscard]] std::optional<Slot> Enter(std::chrono::milliseconds timeout);
  // Slots held now (for metrics: a moment's figure).
  int held() const;
  int limit() const { return limit_; }

 private:
  void Leave();

  mutable std::mutex mu_;
  std::condition_variable freed_;
  const int limit_;
  int held_ = 0;
};

// Maps a Status to a grpc::Status with the same message (made valid UTF-8: it may quote names).
grpc::Status ToGrpc(const Status& status);

// The response is complete: makes every string in it valid UTF-8 (names may hold any bytes; see
// proto/wire_text.h) and answers OK. Every unary handler ends with it.
grpc::Status Answer(google::protobuf::Message* response);

// The calling thread's read-only connection to `db_path` (opened on first use).
StatusOr<store::Database*> ThreadReadConnection(const std::string& db_path);

class QueryServiceImpl final : public xladb::v1::QueryService::Service {
 public:
  // `sql_db_path`: where the SQL endpoint (Query) reads: `db_path`, or on PostgreSQL a URI that logs in as a
  // role that may only read the store (xladbd --sql-db, store::PrepareSqlReader).
  QueryServiceImpl(std::string db_path, std::string sql_db_path, const AccessPolicy* access, QueryLimits limits)
      : db_path_(std::move(db_path)), sql_db_path_(std::move(sql_db_path)), access_(access), limits_(limits),
        query_gate_(limits.max_concurrent) {}

  grpc::Status ListRuns(grpc::ServerContext*, const v1::ListRunsRequest*, v1::ListRunsResponse*) override;
  grpc::Status GetRun(grpc::ServerContext*, const v1::GetRunRequest*, v1::Run*) override;
  grpc::Status ListModules(grpc::ServerContext*, const v1::ListModulesRequest*, v1::ListModulesResponse*) override;
  grpc::Status PeakMemoryTrend(grpc::ServerContext*, const v1::PeakMemoryTrendRequest*,
                               v1::PeakMemoryTrendResponse*) override;
  grpc::Status SpillRates(grpc::ServerContext*, const v1::SpillRatesRequest*, v1::SpillRatesResponse*) override;
  grpc::Status TopBuffers(grpc::ServerContext*, const v1::TopBuffersRequest*, v1::TopBuffersResponse*) override;
  grpc::Status DiffRuns(grpc::ServerContext*, const v1::DiffRunsRequest*, v1::DiffRunsResponse*) override;
  grpc::Status CheckRun(grpc::ServerContext*, const v1::CheckRunRequest*, v1::CheckRunResponse*) override;
  grpc::Status ListRetraces(grpc::ServerContext*, const v1::ListRetracesRequest*, v1::ListRetracesResponse*) override;
  grpc::Status ListJobs(grpc::ServerContext*, const v1::ListJobsRequest*, v1::ListJobsResponse*) override;
  grpc::Status OomReports(grpc::ServerContext*, const v1::OomReportsRequest*, v1::OomReportsResponse*) override;
  grpc::Status ListChanges(grpc::ServerContext*, const v1::ListChangesRequest*, v1::ListChangesResponse*) override;
  grpc::Status Query(grpc::ServerContext*, const v1::QueryRequest*,
                     grpc::ServerWriter<v1::QueryResponse>*) override;
  // Renders with service/query_answers.h AnswerReport, under the same concurrency gate as Query (a large
  // module's page takes a while), and streams the page in chunks of at most kReportChunkBytes.
  grpc::Status Report(grpc::ServerContext*, const v1::ReportRequest*, grpc::ServerWriter<v1::ReportChunk>*) override;

  // The gate SQL queries and reports share; xladbd --http renders its pages under it too.
  ConcurrencyGate* query_gate() { return &query_gate_; }

 private:
  // Checks the token, then returns this thread's read-only connection to `path`.
  StatusOr<store::Database*> Begin(grpc::ServerContext* context, const std::string& path);
  template <typename Request, typename Response>
  grpc::Status Serve(grpc::ServerContext* ctx, const Request& request, Response* response,
                     Status (*answer)(store::Database&, const Request&, Response*));

  std::string db_path_;
  std::string sql_db_path_;
  const AccessPolicy* access_;
  QueryLimits limits_;
  ConcurrencyGate query_gate_;
};

// The `authorization` metadata of a call, or "".
std::string AuthorizationHeader(const grpc::ServerContext* context);

}  // namespace xladb::service

#endif  // XLADB_SERVICE_QUERY_SERVICE_H_
