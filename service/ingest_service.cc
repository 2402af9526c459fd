#include "service/ingest_service.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <filesystem>
#include <fstream>

#include "service/query_service.h"

namespace xladb::service {

namespace fs = std::filesystem;

namespace {

std::vector<std::pair<std::string, std::string>> FromProto(const google::protobuf::RepeatedPtrField<v1::Label>& l) {
  std::vector<std::pair<std::string, std::string>> out;
  for (const auto& x : l) out.emplace_back(x.key(), x.value());
  return out;
}

// A relative, '/'-separated path with no empty, "." or ".." component and no NUL.
bool IsSafeRelativePath(const std::string& p) {
  if (p.empty() || p.front() == '/' || p.find('\0') != std::string::npos || p.size() > 4096) return false;
  size_t start = 0;
  while (start <= p.size()) {
    size_t end = p.find('/', start);
    if (end == std::string::npos) end = p.size();
    std::string part = p.substr(start, end - start);
    if (part.empty() || part == "." || part == "..") return false;
    start = end + 1;
  }
  return true;
}

}  // namespace

void ToProto(const JobStatus& s, v1::IngestJob* out) {
  out->set_job_id(s.job_id);
  switch (s.state) {
    case JobStatus::State::kQueued: out->set_state(v1::IngestJob::QUEUED); break;
    case JobStatus::State::kRunning: out->set_state(v1::IngestJob::RUNNING); break;
    case JobStatus::State::kSucceeded: out->set_state(v1::IngestJob::SUCCEEDED); break;
    case JobStatus::State::kFailed: out->set_state(v1::IngestJob::FAILED); break;
  }
  out->set_run_name(s.run_name);
  out->set_source(s.source);
  out->set_files_done(s.files_done);
  out->set_bytes_done(s.bytes_done);
  out->mutable_files_by_verdict()->clear();
  for (const auto& [k, v] : s.files_by_verdict) (*out->mutable_files_by_verdict())[k] = v;
  out->set_rows(s.rows);
  out->set_issues(s.issues);
  out->clear_errors();
  for (const auto& [path, reason] : s.errors) {
    auto* e = out->add_errors();
    e->set_path(path);
    e->set_reason(reason);
  }
  out->set_message(s.message);
  out->set_seconds(s.seconds);
  out->set_created_at_us(s.created_at_us);
}

grpc::Status IngestServiceImpl::WaitAndReport(grpc::ServerContext* ctx, const std::string& job_id,
                                              v1::IngestJob* out) {
  uint64_t version = 0;
  for (;;) {
    auto st = queue_->WaitForChange(job_id, version, std::chrono::milliseconds(200));
    if (!st) return {grpc::StatusCode::NOT_FOUND, "no ingest job " + job_id};
    ToProto(*st, out);
    if (st->finished()) return grpc::Status::OK;
    if (ctx->IsCancelled()) return {grpc::StatusCode::CANCELLED, "client cancelled; the job goes on"};
    version = st->version;
  }
}

grpc::Status IngestServiceImpl::IngestPath(grpc::ServerContext* ctx, const v1::IngestPathRequest* req,
                                           v1::IngestJob* resp) {
  if (Status auth = access_->CheckToken(AuthorizationHeader(ctx)); !auth.ok()) return ToGrpc(auth);
  if (req->path().empty()) return {grpc::StatusCode::INVALID_ARGUMENT, "path is required"};
  auto resolved = access_->ResolveAllowedPath(req->path());
  if (!resolved.ok()) return ToGrpc(resolved.status());
  IngestRequest r{"path", resolved.value(), req->run_name(), FromProto(req->labels()),
                  req->run_time_us() > 0 ? req->run_time_us() : -1};
  auto id = queue_->Submit(std::move(r));
  if (!id.ok()) return {grpc::StatusCode::UNAVAILABLE, id.status().message()};
  if (req->wait()) return WaitAndReport(ctx, id.value(), resp);
  auto st = queue_->Get(id.value());
  if (st) ToProto(*st, resp);
  return grpc::Status::OK;
}

grpc::Status IngestServiceImpl::Upload(grpc::ServerContext* ctx, grpc::ServerReader<v1::UploadChunk>* reader,
                                       v1::IngestJob* resp) {
  if (Status auth = access_->CheckToken(AuthorizationHeader(ctx)); !auth.ok()) return ToGrpc(auth);
  v1::UploadChunk chunk;
  if (!reader->Read(&chunk) || !chunk.has_header()) {
    return {grpc::StatusCode::INVALID_ARGUMENT, "an upload starts with an UploadHeader"};
  }
  const v1::UploadHeader header = chunk.header();
  if (header.run_name().empty()) return {grpc::StatusCode::INVALID_ARGUMENT, "UploadHeader.run_name is required"};

  std::error_code ec;
  fs::create_directories(spool_dir_, ec);
  fs::path stage = fs::path(spool_dir_) / NewRandomId("upload-");
  if (::mkdir(stage.c_str(), 0700) != 0) {
    return {grpc::StatusCode::INTERNAL, "cannot create upload staging folder " + stage.string()};
  }
  auto fail = [&](grpc::StatusCode code, std::string message) {
    std::error_code rm;
    fs::remove_all(stage, rm);
    return grpc::Status(code, std::move(message));
  };

  int64_t total_bytes = 0, files = 0;
  std::string current_path;
  std::ofstream out;
  std::vector<std::pair<fs::path, int64_t>> mtimes;
  while (reader->Read(&chunk)) {
    if (!chunk.has_file()) return fail(grpc::StatusCode::INVALID_ARGUMENT, "only one UploadHeader per upload");
    const v1::FileChunk& f = chunk.file();
    if (f.path() != current_path) {
      if (!IsSafeRelativePath(f.path())) {
        return fail(grpc::StatusCode::INVALID_ARGUMENT,
                    "upload path '" + f.path() + "' must be relative, without '..' or empty parts");
      }
      if (++files > limits_.max_files) {
        return fail(grpc::StatusCode::RESOURCE_EXHAUSTED,
                    "upload has more than " + std::to_string(limits_.max_files) + " files (server --max-upload-files)");
      }
      out.close();
      current_path = f.path();
      fs::path target = stage / current_path;
      fs::create_directories(target.parent_path(), ec);
      if (fs::exists(target)) {
        return fail(grpc::StatusCode::INVALID_ARGUMENT, "file '" + f.path() + "' sent twice (send its chunks together)");
      }
      out.open(target, std::ios::binary);
      if (!out) return fail(grpc::StatusCode::INTERNAL, "cannot stage " + f.path());
      if (f.mtime_us() > 0) mtimes.emplace_back(target, f.mtime_us());
    }
    total_bytes += static_cast<int64_t>(f.data().size());
    if (total_bytes > limits_.max_bytes) {
      return fail(grpc::StatusCode::RESOURCE_EXHAUSTED,
                  "upload exceeds " + std::to_string(limits_.max_bytes) + " bytes (server --max-upload-bytes)");
    }
    out.write(f.data().data(), static_cast<std::streamsize>(f.data().size()));
    if (!out) return fail(grpc::StatusCode::RESOURCE_EXHAUSTED, "cannot write staged upload (disk full?)");
  }
  out.close();
  if (ctx->IsCancelled()) return fail(grpc::StatusCode::CANCELLED, "upload cancelled");
  for (const auto& [path, us] : mtimes) {
    struct timespec times[2];
    times[0].tv_sec = times[1].tv_sec = us / 1000000;
    times[0].tv_nsec = times[1].tv_nsec = (us % 1000000) * 1000;
    ::utimensat(AT_FDCWD, path.c_str(), times, 0);
  }
  IngestRequest r{"upload", stage.string(), header.run_name(), FromProto(header.labels()),
                  header.run_time_us() > 0 ? header.run_time_us() : -1};
  auto id = queue_->Submit(std::move(r));
  if (!id.ok()) return fail(grpc::StatusCode::UNAVAILABLE, id.status().message());
  if (header.wait()) return WaitAndReport(ctx, id.value(), resp);
  auto st = queue_->Get(id.value());
  if (st) ToProto(*st, resp);
  return grpc::Status::OK;
}

grpc::Status IngestServiceImpl::GetIngestJob(grpc::ServerContext* ctx, const v1::GetIngestJobRequest* req,
                                             v1::IngestJob* resp) {
  if (Status auth = access_->CheckToken(AuthorizationHeader(ctx)); !auth.ok()) return ToGrpc(auth);
  auto st = queue_->Get(req->job_id());
  if (!st) return {grpc::StatusCode::NOT_FOUND, "no ingest job " + req->job_id() + " (jobs are kept until restart)"};
  ToProto(*st, resp);
  return grpc::Status::OK;
}

grpc::Status IngestServiceImpl::WatchIngestJob(grpc::ServerContext* ctx, const v1::GetIngestJobRequest* req,
                                               grpc::ServerWriter<v1::IngestJob>* writer) {
  if (Status auth = access_->CheckToken(AuthorizationHeader(ctx)); !auth.ok()) return ToGrpc(auth);
  uint64_t version = 0;
  bool first = true;
  for (;;) {
    auto st = queue_->WaitForChange(req->job_id(), first ? 0 : version, std::chrono::milliseconds(500));
    if (!st) return {grpc::StatusCode::NOT_FOUND, "no ingest job " + req->job_id()};
    if (first || st->version != version || st->finished()) {
      v1::IngestJob msg;
      ToProto(*st, &msg);
      if (!writer->Write(msg)) return grpc::Status::OK;
    }
    first = false;
    version = st->version;
    if (st->finished() || ctx->IsCancelled()) return grpc::Status::OK;
  }
}

}  // namespace xladb::service
