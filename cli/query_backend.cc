#include "cli/query_backend.h"

#include <cstdio>

#include "ingest/text/visible_text.h"
#include "proto/wire_text.h"
#include "service/query_answers.h"
#include "service/query_service.h"
#include "store/backend/database.h"
#include "xladb/v1/xladb.grpc.pb.h"

namespace xladb::cli {
namespace {

class RemoteBackend final : public QueryBackend {
 public:
  explicit RemoteBackend(const ClientOptions& o) : o_(o), stub_(v1::QueryService::NewStub(Connect(o))) {}

#define XLADB_REMOTE_CALL(Rpc, Req, Resp)                        \
  grpc::Status Rpc(const v1::Req& req, v1::Resp* resp) override { \
    grpc::ClientContext ctx;                                      \
    Prepare(o_, &ctx);                                            \
    return stub_->Rpc(&ctx, req, resp);                           \
  }
  XLADB_REMOTE_CALL(ListRuns, ListRunsRequest, ListRunsResponse)
  XLADB_REMOTE_CALL(ListModules, ListModulesRequest, ListModulesResponse)
  XLADB_REMOTE_CALL(PeakMemoryTrend, PeakMemoryTrendRequest, PeakMemoryTrendResponse)
  XLADB_REMOTE_CALL(SpillRates, SpillRatesRequest, SpillRatesResponse)
  XLADB_REMOTE_CALL(TopBuffers, TopBuffersRequest, TopBuffersResponse)
  XLADB_REMOTE_CALL(DiffRuns, DiffRunsRequest, DiffRunsResponse)
  XLADB_REMOTE_CALL(CheckRun, CheckRunRequest, CheckRunResponse)
  XLADB_REMOTE_CALL(ListRetraces, ListRetracesRequest, ListRetracesResponse)
  XLADB_REMOTE_CALL(ListJobs, ListJobsRequest, ListJobsResponse)
  XLADB_REMOTE_CALL(OomReports, OomReportsRequest, OomReportsResponse)
  XLADB_REMOTE_CALL(ListChanges, ListChangesRequest, ListChangesResponse)
#undef XLADB_REMOTE_CALL

  grpc::Status Report(const v1::ReportRequest& req, std::string* html, std::vector<std::string>* notes) override {
    grpc::ClientContext ctx;
    Prepare(o_, &ctx);
    auto reader = stub_->Report(&ctx, req);
    v1::ReportChunk chunk;
    bool last = false;
    while (reader->Read(&chunk)) {
      html->append(chunk.html());
      notes->insert(notes->end(), chunk.notes().begin(), chunk.notes().end());
      last = chunk.last();
    }
    grpc::Status st = reader->Finish();
    if (st.ok() && !last) return {grpc::StatusCode::DATA_LOSS, "the report was cut short (no last chunk)"};
    return st;
  }

  int Fail(const grpc::Status& status) override { return cli::Fail(o_, status); }

 private:
  ClientOptions o_;
  std::unique_ptr<v1::QueryService::Stub> stub_;
};

class OfflineBackend final : public QueryBackend {
 public:
  explicit OfflineBackend(std::unique_ptr<store::Database> db) : db_(std::move(db)) {}

  // The daemon's answer, made valid UTF-8 as the daemon sends it.
  template <typename Req, typename Resp>
  grpc::Status Call(Status (*answer)(store::Database&, const Req&, Resp*), const Req& req, Resp* resp) {
    Status st = answer(*db_, req, resp);
    if (!st.ok()) return service::ToGrpc(st);
    return service::Answer(resp);
  }

#define XLADB_OFFLINE_CALL(Rpc, Req, Resp) \
  grpc::Status Rpc(const v1::Req& req, v1::Resp* resp) override { return Call(&service::Answer##Rpc, req, resp); }
  XLADB_OFFLINE_CALL(ListRuns, ListRunsRequest, ListRunsResponse)
  XLADB_OFFLINE_CALL(ListModules, ListModulesRequest, ListModulesResponse)
  XLADB_OFFLINE_CALL(PeakMemoryTrend, PeakMemoryTrendRequest, PeakMemoryTrendResponse)
  XLADB_OFFLINE_CALL(SpillRates, SpillRatesRequest, SpillRatesResponse)
  XLADB_OFFLINE_CALL(TopBuffers, TopBuffersRequest, TopBuffersResponse)
  XLADB_OFFLINE_CALL(DiffRuns, DiffRunsRequest, DiffRunsResponse)
  XLADB_OFFLINE_CALL(CheckRun, CheckRunRequest, CheckRunResponse)
  XLADB_OFFLINE_CALL(ListRetraces, ListRetracesRequest, ListRetracesResponse)
  XLADB_OFFLINE_CALL(ListJobs, ListJobsRequest, ListJobsResponse)
  XLADB_OFFLINE_CALL(OomReports, OomReportsRequest, OomReportsResponse)
  XLADB_OFFLINE_CALL(ListChanges, ListChangesRequest, ListChangesResponse)
#undef XLADB_OFFLINE_CALL

  grpc::Status Report(const v1::ReportRequest& req, std::string* html, std::vector<std::string>* notes) override {
    Status st = service::AnswerReport(*db_, req, html, notes);
    return st.ok() ? grpc::Status::OK : service::ToGrpc(st);
  }

  int Fail(const grpc::Status& status) override {
    std::fprintf(stderr, "xladb: %s\n", ingest::EscapeControlCharacters(status.error_message()).c_str());
    return kExitFailure;
  }

 private:
  std::unique_ptr<store::Database> db_;
};

}  // namespace

int FailedCall(QueryBackend& backend, const grpc::Status& status, int otherwise, bool not_found_is_usage) {
  backend.Fail(status);
  const bool usage = status.error_code() == grpc::StatusCode::INVALID_ARGUMENT ||
                     (not_found_is_usage && status.error_code() == grpc::StatusCode::NOT_FOUND);
  return usage ? kExitUsage : otherwise;
}

std::unique_ptr<QueryBackend> NewRemoteBackend(const ClientOptions& options) {
  return std::make_unique<RemoteBackend>(options);
}

StatusOr<std::unique_ptr<QueryBackend>> NewOfflineBackend(const std::string& db_path) {
  auto db = store::Database::Open(db_path, store::Database::Mode::kReadOnly);
  if (!db.ok()) return db.status();
  return std::unique_ptr<QueryBackend>(std::make_unique<OfflineBackend>(std::move(db.value())));
}

}  // namespace xladb::cli
