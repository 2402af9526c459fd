#include "service/query_service.h"

#include <map>
#include <memory>
#include <thread>

#include "proto/wire_text.h"
#include "store/queries.h"
#include "store/sql_query.h"

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

bool ConcurrencyGate::Enter(std::chrono::milliseconds timeout) {
  std::unique_lock<std::mutex> lock(mu_);
  if (!freed_.wait_for(lock, timeout, [&] { return held_ < limit_; })) return false;
  ++held_;
  return true;
}

void ConcurrencyGate::Leave() {
  std::lock_guard<std::mutex> lock(mu_);
  --held_;
  freed_.notify_one();
}

StatusOr<store::Database*> QueryServiceImpl::Begin(grpc::ServerContext* context) {
  Status auth = access_->CheckToken(AuthorizationHeader(context));
  if (!auth.ok()) return auth;
  return ThreadReadConnection(db_path_);
}

namespace {

// Cancels a server call when it is still running after `after` (a Write blocked on a client that stopped
// reading returns then). Joins on destruction.
class CancelAfter {
 public:
  CancelAfter(grpc::ServerContext* ctx, std::chrono::milliseconds after)
      : thread_([this, ctx, after] {
          std::unique_lock<std::mutex> lock(mu_);
          if (!done_cv_.wait_for(lock, after, [&] { return done_; })) ctx->TryCancel();
        }) {}
  ~CancelAfter() {
    {
      std::lock_guard<std::mutex> lock(mu_);
      done_ = true;
    }
    done_cv_.notify_one();
    thread_.join();
  }
  CancelAfter(const CancelAfter&) = delete;
  CancelAfter& operator=(const CancelAfter&) = delete;

 private:
  std::mutex mu_;
  std::condition_variable done_cv_;
  bool done_ = false;
  std::thread thread_;  // last: starts after the members it uses
};

// A count or limit from a request: 0 means "the default", negative or over `max` is refused.
Status CheckCount(const char* field, int64_t value, int64_t max) {
  if (value < 0) return Status::InvalidArgument(std::string(field) + " must not be negative (0 = the default)");
  if (value > max) {
    return Status::InvalidArgument(std::string(field) + " is at most " + std::to_string(max) + " (got " +
                                   std::to_string(value) + ")");
  }
  return Status::Ok();
}

store::Labels FromProto(const google::protobuf::RepeatedPtrField<v1::Label>& labels) {
  store::Labels out;
  for (const auto& l : labels) out.emplace_back(l.key(), l.value());
  return out;
}

void ToProto(const store::RunInfo& r, v1::Run* out) {
  out->set_name(r.name);
  out->set_source_path(r.source_path);
  out->set_run_time_us(r.run_time_us);
  out->set_run_time_source(r.run_time_source);
  for (const auto& [k, v] : r.labels) {
    auto* l = out->add_labels();
    l->set_key(k);
    l->set_value(v);
  }
  out->set_file_count(r.file_count);
  out->set_ingested_file_count(r.ingested_file_count);
  out->set_error_file_count(r.error_file_count);
  out->set_module_count(r.module_count);
  out->set_created_at_us(r.created_at_us);
  out->set_updated_at_us(r.updated_at_us);
}

v1::BufferChange::Change ToProto(store::BufferDiff::Change c) {
  switch (c) {
    case store::BufferDiff::Change::kGrew: return v1::BufferChange::GREW;
    case store::BufferDiff::Change::kShrank: return v1::BufferChange::SHRANK;
    case store::BufferDiff::Change::kAppeared: return v1::BufferChange::APPEARED;
    case store::BufferDiff::Change::kDisappeared: return v1::BufferChange::DISAPPEARED;
  }
  return v1::BufferChange::CHANGE_UNSPECIFIED;
}

v1::ModuleChange::Change ToProto(store::ModuleDiff::Change c) {
  switch (c) {
    case store::ModuleDiff::Change::kAdded: return v1::ModuleChange::ADDED;
    case store::ModuleDiff::Change::kRemoved: return v1::ModuleChange::REMOVED;
    case store::ModuleDiff::Change::kChanged: return v1::ModuleChange::CHANGED;
    case store::ModuleDiff::Change::kUnchanged: return v1::ModuleChange::UNCHANGED;
  }
  return v1::ModuleChange::CHANGE_UNSPECIFIED;
}

}  // namespace

grpc::Status QueryServiceImpl::ListRuns(grpc::ServerContext* ctx, const v1::ListRunsRequest* req,
                                        v1::ListRunsResponse* resp) {
  auto db = Begin(ctx);
  if (!db.ok()) return ToGrpc(db.status());
  if (Status c = CheckCount("page_size", req->page_size(), 1000); !c.ok()) return ToGrpc(c);
  if (req->since_us() < 0 || req->until_us() < 0) {
    return {grpc::StatusCode::INVALID_ARGUMENT, "since_us and until_us are Unix microseconds (0 = no bound)"};
  }
  store::RunFilter f;
  f.labels = FromProto(req->labels());
  f.since_us = req->since_us() > 0 ? req->since_us() : -1;
  f.until_us = req->until_us() > 0 ? req->until_us() : -1;
  f.name_pattern = req->name_pattern();
  f.page_size = req->page_size() > 0 ? req->page_size() : 100;
  f.page_token = req->page_token();
  auto page = store::ListRuns(**db, f);
  if (!page.ok()) return ToGrpc(page.status());
  for (const auto& r : page->runs) ToProto(r, resp->add_runs());
  resp->set_next_page_token(page->next_page_token);
  return Answer(resp);
}

grpc::Status QueryServiceImpl::GetRun(grpc::ServerContext* ctx, const v1::GetRunRequest* req, v1::Run* resp) {
  auto db = Begin(ctx);
  if (!db.ok()) return ToGrpc(db.status());
  if (req->run_name().empty()) return {grpc::StatusCode::INVALID_ARGUMENT, "run_name is required"};
  auto run = store::GetRun(**db, req->run_name());
  if (!run.ok()) return ToGrpc(run.status());
  ToProto(run.value(), resp);
  return Answer(resp);
}

grpc::Status QueryServiceImpl::ListModules(grpc::ServerContext* ctx, const v1::ListModulesRequest* req,
                                           v1::ListModulesResponse* resp) {
  auto db = Begin(ctx);
  if (!db.ok()) return ToGrpc(db.status());
  if (req->run_name().empty()) return {grpc::StatusCode::INVALID_ARGUMENT, "run_name is required"};
  auto modules = store::ListModules(**db, req->run_name(), req->name_pattern());
  if (!modules.ok()) return ToGrpc(modules.status());
  for (const auto& m : modules.value()) {
    auto* out = resp->add_modules();
    out->set_name(m.name);
    out->set_xla_module_id(m.xla_module_id);
    out->set_stage(m.stage);
    out->set_backend(m.backend);
    out->set_fingerprint(m.fingerprint);
    out->set_has_buffer_assignment(m.has_buffer_assignment);
    out->set_peak_bytes(m.peak_bytes);
    out->set_peak_time(m.peak_time);
    out->set_total_bytes(m.total_bytes);
    out->set_parameter_bytes(m.parameter_bytes);
    out->set_output_bytes(m.output_bytes);
    out->set_temp_bytes(m.temp_bytes);
    out->set_allocation_count(m.allocation_count);
    out->set_value_count(m.value_count);
    out->set_instruction_count(m.instruction_count);
    out->set_folder(m.folder);
  }
  return Answer(resp);
}

grpc::Status QueryServiceImpl::PeakMemoryTrend(grpc::ServerContext* ctx, const v1::PeakMemoryTrendRequest* req,
                                               v1::PeakMemoryTrendResponse* resp) {
  auto db = Begin(ctx);
  if (!db.ok()) return ToGrpc(db.status());
  if (req->module().empty()) return {grpc::StatusCode::INVALID_ARGUMENT, "module is required (a name or pattern)"};
  if (Status c = CheckCount("last_n", req->last_n(), 1000000); !c.ok()) return ToGrpc(c);
  if (!v1::TrendMetric_IsValid(req->metric())) {
    return {grpc::StatusCode::INVALID_ARGUMENT, "metric " + std::to_string(req->metric()) + " is not a TrendMetric"};
  }
  store::TrendQuery q;
  q.module = req->module();
  switch (req->metric()) {
    case v1::TOTAL_BYTES: q.metric = store::TrendMetric::kTotalBytes; break;
    case v1::TEMP_BYTES: q.metric = store::TrendMetric::kTempBytes; break;
    default: q.metric = store::TrendMetric::kPeakBytes; break;
  }
  q.last_n = req->last_n() > 0 ? req->last_n() : -1;
  q.labels = FromProto(req->labels());
  q.stage = req->stage();
  auto points = store::PeakMemoryTrend(**db, q);
  if (!points.ok()) return ToGrpc(points.status());
  for (const auto& p : points.value()) {
    auto* out = resp->add_points();
    out->set_run_name(p.run_name);
    out->set_run_time_us(p.run_time_us);
    out->set_module_name(p.module_name);
    out->set_xla_module_id(p.xla_module_id);
    out->set_stage(p.stage);
    out->set_fingerprint(p.fingerprint);
    out->set_value(p.value);
    out->set_peak_bytes(p.peak_bytes);
    out->set_total_bytes(p.total_bytes);
    out->set_temp_bytes(p.temp_bytes);
  }
  return Answer(resp);
}

grpc::Status QueryServiceImpl::SpillRates(grpc::ServerContext* ctx, const v1::SpillRatesRequest* req,
                                          v1::SpillRatesResponse* resp) {
  auto db = Begin(ctx);
  if (!db.ok()) return ToGrpc(db.status());
  if (Status c = CheckCount("limit", req->limit(), 1000000); !c.ok()) return ToGrpc(c);
  store::SpillQuery q;
  q.kernel_pattern = req->kernel_pattern();
  q.run = req->run_name();
  q.limit = req->limit() > 0 ? req->limit() : -1;
  auto rows = store::SpillRates(**db, q);
  if (!rows.ok()) return ToGrpc(rows.status());
  for (const auto& r : rows.value()) {
    auto* out = resp->add_rates();
    out->set_run_name(r.run_name);
    out->set_run_time_us(r.run_time_us);
    out->set_module_name(r.module_name);
    out->set_kernel(r.kernel);
    out->set_vmem_spills(r.vmem_spills);
    out->set_vmem_fills(r.vmem_fills);
    out->set_smem_spills(r.smem_spills);
    out->set_smem_fills(r.smem_fills);
    out->set_bundles(r.bundles);
    out->set_vmem_spill_rate(r.vmem_spill_rate);
    out->set_vmem_fill_rate(r.vmem_fill_rate);
    out->set_smem_spill_rate(r.smem_spill_rate);
    out->set_smem_fill_rate(r.smem_fill_rate);
  }
  return Answer(resp);
}

grpc::Status QueryServiceImpl::TopBuffers(grpc::ServerContext* ctx, const v1::TopBuffersRequest* req,
                                          v1::TopBuffersResponse* resp) {
  auto db = Begin(ctx);
  if (!db.ok()) return ToGrpc(db.status());
  if (Status c = CheckCount("n", req->n(), 100000); !c.ok()) return ToGrpc(c);
  if (req->xla_module_id() < 0) return {grpc::StatusCode::INVALID_ARGUMENT, "xla_module_id must not be negative"};
  if (req->run_name().empty() || req->module().empty()) {
    return {grpc::StatusCode::INVALID_ARGUMENT, "run_name and module are required"};
  }
  int64_t n = req->n() > 0 ? req->n() : 20;
  auto answer = store::TopBuffers(**db, req->run_name(), req->module(), n, req->stage(),
                                  req->xla_module_id() > 0 ? req->xla_module_id() : -1,
                                  req->has_folder() ? std::optional<std::string>(req->folder()) : std::nullopt);
  if (!answer.ok()) return ToGrpc(answer.status());
  resp->set_module(answer->module);
  resp->set_stage(answer->stage);
  resp->set_folder(answer->folder);
  resp->set_xla_module_id(answer->xla_module_id);
  resp->set_peak_bytes(answer->peak_bytes);
  resp->set_peak_time(answer->peak_time);
  for (const auto& b : answer->buffers) {
    auto* out = resp->add_buffers();
    out->set_ordinal(b.ordinal);
    out->set_instruction(b.instruction);
    out->set_shape_index(b.shape_index);
    out->set_logical_bytes(b.logical_bytes);
    out->set_value_id(b.value_id);
    out->set_allocation_index(b.allocation_index);
    out->set_size_bytes(b.size_bytes);
    out->set_shape(b.shape);
    out->set_opcode(b.opcode);
    out->set_op_name(b.op_name);
    out->set_source_file(b.source_file);
    out->set_source_line(b.source_line);
    out->set_live_start(b.live_start);
    out->set_live_end(b.live_end);
  }
  return Answer(resp);
}

grpc::Status QueryServiceImpl::DiffRuns(grpc::ServerContext* ctx, const v1::DiffRunsRequest* req,
                                        v1::DiffRunsResponse* resp) {
  auto db = Begin(ctx);
  if (!db.ok()) return ToGrpc(db.status());
  if (Status c = CheckCount("max_buffers", req->max_buffers(), 100000); !c.ok()) return ToGrpc(c);
  if (req->run_a().empty() || req->run_b().empty()) {
    return {grpc::StatusCode::INVALID_ARGUMENT, "run_a and run_b are required"};
  }
  store::DiffQuery q;
  q.run_a = req->run_a();
  q.run_b = req->run_b();
  q.module = req->module();
  q.include_unchanged = req->include_unchanged();
  q.buffer_level = req->buffer_level();
  q.max_buffers = req->max_buffers() > 0 ? req->max_buffers() : 50;
  auto diff = store::DiffRuns(**db, q);
  if (!diff.ok()) return ToGrpc(diff.status());
  for (const auto& m : diff->modules) {
    auto* out = resp->add_modules();
    out->set_change(ToProto(m.change));
    out->set_module_name(m.module_name);
    out->set_stage(m.stage);
    out->set_xla_module_id_a(m.xla_module_id_a);
    out->set_xla_module_id_b(m.xla_module_id_b);
    out->set_fingerprint_a(m.fingerprint_a);
    out->set_fingerprint_b(m.fingerprint_b);
    out->set_peak_a(m.peak_a);
    out->set_peak_b(m.peak_b);
    out->set_total_a(m.total_a);
    out->set_total_b(m.total_b);
    out->set_temp_a(m.temp_a);
    out->set_temp_b(m.temp_b);
    for (const auto& b : m.buffers) {
      auto* bo = out->add_buffers();
      bo->set_change(ToProto(b.change));
      bo->set_instruction_a(b.instruction_a);
      bo->set_instruction_b(b.instruction_b);
      bo->set_shape_index(b.shape_index);
      bo->set_matched_by(b.matched_by);
      bo->set_size_a(b.size_a);
      bo->set_size_b(b.size_b);
      bo->set_shape_a(b.shape_a);
      bo->set_shape_b(b.shape_b);
      bo->set_op_name(b.op_name);
      bo->set_source(b.source);
    }
  }
  resp->set_added(diff->added);
  resp->set_removed(diff->removed);
  resp->set_changed(diff->changed);
  resp->set_unchanged(diff->unchanged);
  return Answer(resp);
}

grpc::Status QueryServiceImpl::Query(grpc::ServerContext* ctx, const v1::QueryRequest* req,
                                     grpc::ServerWriter<v1::QueryResponse>* writer) {
  auto db = Begin(ctx);
  if (!db.ok()) return ToGrpc(db.status());
  if (req->max_rows() < 0) return {grpc::StatusCode::INVALID_ARGUMENT, "max_rows must not be negative (0 = the server's limit)"};
  if (req->sql().empty()) return {grpc::StatusCode::INVALID_ARGUMENT, "sql is required"};
  if (!query_gate_.Enter(std::chrono::milliseconds(limits_.queue_wait_ms))) {
    return {grpc::StatusCode::RESOURCE_EXHAUSTED,
            "too many SQL queries at once (the server runs " + std::to_string(limits_.max_concurrent) +
                ", --query-max-concurrent); retry shortly"};
  }
  struct Slot {
    ConcurrencyGate* gate;
    ~Slot() { gate->Leave(); }
  } slot{&query_gate_};

  store::SqlLimits limits;
  limits.max_rows = limits_.max_rows;
  if (req->max_rows() > 0 && req->max_rows() < limits.max_rows) limits.max_rows = req->max_rows();
  limits.max_bytes = limits_.max_bytes;
  limits.max_value_bytes = limits_.max_value_bytes;
  limits.max_row_bytes = limits_.max_row_bytes;
  limits.max_columns = limits_.max_columns;
  limits.timeout_ms = limits_.timeout_ms;
  // The time limit stops SQLite's work; a client that stops reading blocks Write instead, which only a
  // cancelled call releases. Past the time limit (and a grace second), the call is cancelled.
  CancelAfter deadline(ctx, std::chrono::milliseconds(limits_.timeout_ms + 1000));

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
  if (!st.ok()) return ToGrpc(st);
  if (client_gone || ctx->IsCancelled()) return {grpc::StatusCode::CANCELLED, "client cancelled, or stopped reading"};
  batch.set_truncated(truncated);
  batch.set_last(true);
  writer->Write(batch);
  return grpc::Status::OK;
}

}  // namespace xladb::service
