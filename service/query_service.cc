#include "service/query_service.h"

#include <chrono>
#include <map>
#include <memory>
#include <optional>
#include <thread>

#include "base/timer_thread.h"
#include "proto/wire_text.h"
#include "service/metrics/service_events.h"
#include "service/query_answers.h"
#include "store/sql_endpoint.h"

namespace xladb::service {

namespace v1 = xladb::v1;

grpc::Status ToGrpc(const Status& status) {
  using C = Status::Code;
  grpc::StatusCode code;
  switch (status.code()) {
    case C::kOk: return grpc::Status::OK;
    case C::kNotFound: code = grpc::StatusCode::NOT_FOUND; break;
    case C::kInvalidArgument: code = grpc::StatusCode::INVALID_ARGUMENT; break;
    case C::kPermissionDenied: code = grpc::StatusCode::PERMISSION_DENIED; break;
    case C::kResourceExhausted: code = grpc::StatusCode::RESOURCE_EXHAUSTED; break;
    case C::kFailedPrecondition: code = grpc::StatusCode::FAILED_PRECONDITION; break;
    case C::kDataLoss: code = grpc::StatusCode::DATA_LOSS; break;
    default: code = grpc::StatusCode::INTERNAL; break;
  }
  return {code, wire::ToValidUtf8(status.message())};
}

grpc::Status Answer(google::protobuf::Message* response) {
  wire::MakeStringsValidUtf8(response);
  return grpc::Status::OK;
}

std::string AuthorizationHeader(const grpc::ServerContext* context) {
  const auto& md = context->client_metadata();
  auto it = md.find("authorization");
  if (it == md.end()) return {};
  return std::string(it->second.data(), it->second.size());
}

StatusOr<store::Database*> ThreadReadConnection(const std::string& db_path) {
  thread_local std::map<std::string, std::unique_ptr<store::Database>> connections;
  auto it = connections.find(db_path);
  if (it != connections.end()) return it->second.get();
  auto db = store::Database::Open(db_path, store::Database::Mode::kReadOnly);
  if (!db.ok()) return db.status();
  store::Database* raw = db.value().get();
  connections.emplace(db_path, std::move(db.value()));
  return raw;
}

std::optional<ConcurrencyGate::Slot> ConcurrencyGate::Enter(std::chrono::milliseconds timeout) {
  std::unique_lock<std::mutex> lock(mu_);
  if (!freed_.wait_for(lock, timeout, [&] { return held_ < limit_; })) return std::nullopt;
  ++held_;
  return Slot(this);
}

int ConcurrencyGate::held() const {
  std::lock_guard<std::mutex> lock(mu_);
  return held_;
}

void ConcurrencyGate::Leave() {
  std::lock_guard<std::mutex> lock(mu_);
  --held_;
  freed_.notify_one();
}

StatusOr<store::Database*> QueryServiceImpl::Begin(grpc::ServerContext* context, const std::string& path) {
  Status auth = access_->CheckToken(AuthorizationHeader(context));
  if (!auth.ok()) return auth;
  return ThreadReadConnection(path);
}

namespace {

// Cancels a server call when it is still running a grace second after its time limit, `timeout_ms` (a Write
// blocked on a client that stopped reading returns then); a negative limit (none: the CLI's in-process
// service) cancels nothing (null). Joins on destruction.
std::unique_ptr<TimerThread> CancelAfter(grpc::ServerContext* ctx, int64_t timeout_ms) {
  if (timeout_ms < 0) return nullptr;
  return std::make_unique<TimerThread>(std::chrono::milliseconds(timeout_ms + 1000), std::nullopt,
                                       [ctx] { ctx->TryCancel(); });
}

}  // namespace

// The unary handlers: check access, take this thread's connection, answer (query_answers.h).
template <typename Request, typename Response>
grpc::Status QueryServiceImpl::Serve(grpc::ServerContext* ctx, const Request& request, Response* response,
                                     Status (*answer)(store::Database&, const Request&, Response*)) {
  auto db = Begin(ctx, db_path_);
  if (!db.ok()) return ToGrpc(db.status());
  Status st = answer(**db, request, response);
  if (!st.ok()) return ToGrpc(st);
  return Answer(response);
}

grpc::Status QueryServiceImpl::ListRuns(grpc::ServerContext* ctx, const v1::ListRunsRequest* req, v1::ListRunsResponse* resp) {
  return Serve(ctx, *req, resp, &AnswerListRuns);
}

grpc::Status QueryServiceImpl::GetRun(grpc::ServerContext* ctx, const v1::GetRunRequest* req, v1::Run* resp) {
  return Serve(ctx, *req, resp, &AnswerGetRun);
}

grpc::Status QueryServiceImpl::ListModules(grpc::ServerContext* ctx, const v1::ListModulesRequest* req, v1::ListModulesResponse* resp) {
  return Serve(ctx, *req, resp, &AnswerListModules);
}

grpc::Status QueryServiceImpl::PeakMemoryTrend(grpc::ServerContext* ctx, const v1::PeakMemoryTrendRequest* req, v1::PeakMemoryTrendResponse* resp) {
  return Serve(ctx, *req, resp, &AnswerPeakMemoryTrend);
}

grpc::Status QueryServiceImpl::SpillRates(grpc::ServerContext* ctx, const v1::SpillRatesRequest* req, v1::SpillRatesResponse* resp) {
  return Serve(ctx, *req, resp, &AnswerSpillRates);
}

grpc::Status QueryServiceImpl::TopBuffers(grpc::ServerContext* ctx, const v1::TopBuffersRequest* req, v1::TopBuffersResponse* resp) {
  return Serve(ctx, *req, resp, &AnswerTopBuffers);
}

grpc::Status QueryServiceImpl::DiffRuns(grpc::ServerContext* ctx, const v1::DiffRunsRequest* req, v1::DiffRunsResponse* resp) {
  return Serve(ctx, *req, resp, &AnswerDiffRuns);
}

grpc::Status QueryServiceImpl::CheckRun(grpc::ServerContext* ctx, const v1::CheckRunRequest* req, v1::CheckRunResponse* resp) {
  return Serve(ctx, *req, resp, &AnswerCheckRun);
}

grpc::Status QueryServiceImpl::ListRetraces(grpc::ServerContext* ctx, const v1::ListRetracesRequest* req, v1::ListRetracesResponse* resp) {
  return Serve(ctx, *req, resp, &AnswerListRetraces);
}

grpc::Status QueryServiceImpl::ListJobs(grpc::ServerContext* ctx, const v1::ListJobsRequest* req,
                                        v1::ListJobsResponse* resp) {
  return Serve(ctx, *req, resp, &AnswerListJobs);
}

grpc::Status QueryServiceImpl::OomReports(grpc::ServerContext* ctx, const v1::OomReportsRequest* req,
                                          v1::OomReportsResponse* resp) {
  return Serve(ctx, *req, resp, &AnswerOomReports);
}

grpc::Status QueryServiceImpl::ListChanges(grpc::ServerContext* ctx, const v1::ListChangesRequest* req,
                                           v1::ListChangesResponse* resp) {
  return Serve(ctx, *req, resp, &AnswerListChanges);
}

grpc::Status QueryServiceImpl::Report(grpc::ServerContext* ctx, const v1::ReportRequest* req,
                                      grpc::ServerWriter<v1::ReportChunk>* writer) {
  auto db = Begin(ctx, db_path_);
  if (!db.ok()) return ToGrpc(db.status());
  std::optional<ConcurrencyGate::Slot> slot = query_gate_.Enter(std::chrono::milliseconds(limits_.queue_wait_ms));
  if (!slot) {
    metrics::CountRefusal(metrics::RefusalCap::kQueryConcurrency);
    return {grpc::StatusCode::RESOURCE_EXHAUSTED, "too many queries and reports at once; retry shortly"};
  }
  std::string html;
  std::vector<std::string> notes;
  Status st = AnswerReport(**db, *req, &html, &notes);
  slot.reset();  // rendered: the chunks go out without it
  if (!st.ok()) return ToGrpc(st);
  const auto deadline = CancelAfter(ctx, limits_.timeout_ms);
  v1::ReportChunk chunk;
  for (size_t at = 0; at < html.size() || at == 0; at += kReportChunkBytes) {
    chunk.set_html(html.substr(at, kReportChunkBytes));
    chunk.set_last(at + kReportChunkBytes >= html.size());
    chunk.clear_notes();
    if (at == 0) {
      for (const std::string& note : notes) chunk.add_notes(note);
    }
    if (ctx->IsCancelled() || !writer->Write(chunk)) return {grpc::StatusCode::CANCELLED, "the client went away"};
    if (html.empty()) break;
  }
  return grpc::Status::OK;
}

grpc::Status QueryServiceImpl::Query(grpc::ServerContext* ctx, const v1::QueryRequest* req,
                                     grpc::ServerWriter<v1::QueryResponse>* writer) {
  auto db = Begin(ctx, sql_db_path_);
  if (!db.ok()) return ToGrpc(db.status());
  if (req->max_rows() < 0) return {grpc::StatusCode::INVALID_ARGUMENT, "max_rows must not be negative (0 = the server's limit)"};
  if (req->sql().empty()) return {grpc::StatusCode::INVALID_ARGUMENT, "sql is required"};
  const std::optional<ConcurrencyGate::Slot> slot =
      query_gate_.Enter(std::chrono::milliseconds(limits_.queue_wait_ms));
  if (!slot) {
    metrics::CountRefusal(metrics::RefusalCap::kQueryConcurrency);
    return {grpc::StatusCode::RESOURCE_EXHAUSTED,
            "too many SQL queries at once (the server runs " + std::to_string(limits_.max_concurrent) +
                ", --query-max-concurrent); retry shortly"};
  }

  store::SqlLimits limits;
  limits.max_rows = limits_.max_rows;
  if (req->max_rows() > 0 && (limits.max_rows < 0 || req->max_rows() < limits.max_rows)) limits.max_rows = req->max_rows();
  limits.max_bytes = limits_.max_bytes;
  limits.max_value_bytes = limits_.max_value_bytes;
  limits.max_row_bytes = limits_.max_row_bytes;
  limits.max_columns = limits_.max_columns;
  limits.timeout_ms = limits_.timeout_ms;
  // The time limit stops SQLite's work; a client that stops reading blocks Write instead, which only a
  // cancelled call releases. Past the time limit (and a grace second), the call is cancelled.
  const auto deadline = CancelAfter(ctx, limits_.timeout_ms);

  v1::QueryResponse batch;
  size_t batch_bytes = 0;
  bool client_gone = false;
  bool truncated = false;
  auto send = [&]() {
    if (ctx->IsCancelled() || !writer->Write(batch)) return false;
    batch.Clear();
    batch_bytes = 0;
    return true;
  };
  Status st = store::RunReadOnlySql(
      **db, req->sql(), limits,
      [&](const std::vector<store::SqlColumn>& cols) {
        for (const auto& c : cols) {
          auto* col = batch.add_columns();
          col->set_name(wire::ToValidUtf8(c.name));
          col->set_type(c.declared_type);
        }
      },
      [&](const std::vector<store::SqlValue>& row) {
        size_t row_bytes = 8 * row.size();
        for (const auto& v : row) {
          if (auto* text = std::get_if<std::string>(&v)) row_bytes += text->size();
          else if (auto* blob = std::get_if<store::SqlBlob>(&v)) row_bytes += blob->bytes.size();
        }
        // Cut before the row that would take the message past its size: a message is at most
        // kQueryMessageBytes of values, or one row (itself under max_row_bytes).
        if (batch.rows_size() > 0 && batch_bytes + row_bytes > kQueryMessageBytes && !send()) {
          client_gone = true;
          return false;
        }
        auto* r = batch.add_rows();
        for (const auto& v : row) {
          auto* value = r->add_values();
          if (auto* i = std::get_if<int64_t>(&v)) {
            value->set_int_value(*i);
          } else if (auto* d = std::get_if<double>(&v)) {
            value->set_real_value(*d);
          } else if (auto* text = std::get_if<std::string>(&v)) {
            // TEXT as stored: a string when it is UTF-8, else its bytes (a proto string must be UTF-8).
            if (wire::IsValidUtf8(*text)) value->set_text_value(*text);
            else value->set_text_bytes_value(*text);
          } else if (auto* blob = std::get_if<store::SqlBlob>(&v)) {
            value->set_bytes_value(blob->bytes);
          }
        }
        batch_bytes += row_bytes;
        return true;
      },
      &truncated);
  if (st.code() == Status::Code::kResourceExhausted) metrics::CountRefusal(metrics::RefusalCap::kQueryLimits);
  if (!st.ok()) return ToGrpc(st);
  if (client_gone || ctx->IsCancelled()) return {grpc::StatusCode::CANCELLED, "client cancelled, or stopped reading"};
  batch.set_truncated(truncated);
  batch.set_last(true);
  writer->Write(batch);
  return grpc::Status::OK;
}

}  // namespace xladb::service
