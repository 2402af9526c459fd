#include "service/ingest_service.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <fstream>

#include <cerrno>
#include <cstring>
#include <memory>
#include <optional>

#include "base/content_hash.h"
#include "ingest/dump_ingester.h"
#include "ingest/source/run_name.h"
#include "proto/wire_text.h"
#include "service/metrics/service_events.h"
#include "service/query_service.h"
#include "service/query_answers.h"
#include "store/admin/run_lifecycle.h"
#include "base/unix_time.h"

namespace xladb::service {

namespace fs = std::filesystem;

namespace {

std::vector<std::pair<std::string, std::string>> FromProto(const google::protobuf::RepeatedPtrField<v1::Label>& l) {
  std::vector<std::pair<std::string, std::string>> out;
  for (const auto& x : l) out.emplace_back(x.key(), x.value());
  return out;
}

// Upload, IngestPath, LabelRun, DeleteRun and PruneDetail change the store: the caller needs the write right.
Status MayWrite(const AccessPolicy& access, grpc::ServerContext* ctx) {
  return access.Authorize(AuthorizationHeader(ctx), AccessPolicy::Right::kWrite);
}

// The labels and run time of an ingest request, checked by the rules every ingest follows (ValidateRunLabels,
// RunTimeFromLabels, CheckRunTimeUs; 0 is "no time given"), so a bad one is INVALID_ARGUMENT now
// rather than a failed job later.
Status CheckRunLabelsAndTime(const google::protobuf::RepeatedPtrField<v1::Label>& labels, int64_t run_time_us) {
  if (Status valid = ingest::ValidateRunLabels(FromProto(labels)); !valid.ok()) return valid;
  if (auto from_labels = ingest::RunTimeFromLabels(FromProto(labels)); !from_labels.ok()) {
    return from_labels.status();
  }
  if (run_time_us == 0) return Status::Ok();
  return ingest::CheckRunTimeUs(run_time_us, "run_time_us " + std::to_string(run_time_us));
}

// Why `p` is not a relative, '/'-separated path with parts of at most NAME_MAX bytes and no empty, "." or ".."
// part or NUL, or "" when it is one.
std::string UnsafeRelativePath(const std::string& p) {
  if (p.empty()) return "is empty";
  if (p.front() == '/') return "is absolute";
  if (p.find('\0') != std::string::npos) return "holds a NUL byte";
  if (p.size() > 4096) return "is longer than 4096 bytes";
  size_t start = 0;
  while (start <= p.size()) {
    size_t end = p.find('/', start);
    if (end == std::string::npos) end = p.size();
    const size_t len = end - start;
    if (len == 0) return "has an empty part";
    if ((len == 1 && p[start] == '.') || (len == 2 && p.compare(start, 2, "..") == 0)) return "has a '.' or '..' part";
    if (len > 255) return "has a part longer than 255 bytes";
    start = end + 1;
  }
  return "";
}

// A staged upload folder that is removed when this goes out of scope, unless Release()d to the queue.
class StagedUpload {
 public:
  explicit StagedUpload(fs::path dir) : dir_(std::move(dir)) {}
  ~StagedUpload() {
    if (dir_.empty()) return;
    std::error_code ec;
    fs::remove_all(dir_, ec);
  }
  StagedUpload(const StagedUpload&) = delete;
  StagedUpload& operator=(const StagedUpload&) = delete;
  const fs::path& dir() const { return dir_; }
  void Release() { dir_.clear(); }

 private:
  fs::path dir_;
};

// Quotes a path for a message: valid UTF-8 as it is, other bytes as U+FFFD.
std::string Quoted(const std::string& path) { return "'" + wire::ToValidUtf8(path) + "'"; }

grpc::Status CannotWriteStage() {
  return {grpc::StatusCode::RESOURCE_EXHAUSTED, "cannot write staged upload (disk full?)"};
}

// An upload's files, written chunk by chunk into its staging folder: each new path checked (UnsafeRelativePath,
// not sent before), the upload held to its limits, each file's content hashed for the upload's digest. A
// failed call leaves the upload unfinished: its caller gives it up (the staging folder goes with it).
class StagedFiles {
 public:
  StagedFiles(fs::path dir, const UploadLimits& limits) : dir_(std::move(dir)), limits_(limits) {}

  // Writes one chunk, of a new file when its path is not the previous chunk's. INVALID_ARGUMENT for a bad
  // path or a file sent twice, RESOURCE_EXHAUSTED past a limit or when the disk is full.
  grpc::Status Write(const v1::FileChunk& f) {
    const std::string& path = f.raw_path().empty() ? f.path() : f.raw_path();
    if (file_hash_ == nullptr || path != current_path_) {  // a new file (the first one too, even if named "")
      if (grpc::Status started = StartFile(path, f.mtime_us()); !started.ok()) return started;
    }
    bytes_ += static_cast<int64_t>(f.data().size());
    if (bytes_ > limits_.max_bytes) {
      metrics::CountRefusal(metrics::RefusalCap::kUploadBytes);
      return {grpc::StatusCode::RESOURCE_EXHAUSTED,
              "upload exceeds " + std::to_string(limits_.max_bytes) + " bytes (server --max-upload-bytes)"};
    }
    file_hash_->Update(f.data());
    out_.write(f.data().data(), static_cast<std::streamsize>(f.data().size()));
    if (!out_) return CannotWriteStage();
    return grpc::Status::OK;
  }
  // Closes the last file; RESOURCE_EXHAUSTED when it could not be written.
  grpc::Status Close() { return CloseFile() ? grpc::Status::OK : CannotWriteStage(); }
  // Gives the staged files the modification times the client sent.
  void SetModificationTimes() const {
    for (const auto& [path, us] : mtimes_) {
      struct timespec times[2];
      times[0].tv_sec = times[1].tv_sec = us / 1000000;
      times[0].tv_nsec = times[1].tv_nsec = (us % 1000000) * 1000;
      ::utimensat(AT_FDCWD, path.c_str(), times, 0);
    }
  }
  int64_t files() const { return files_; }
  int64_t bytes() const { return bytes_; }
  const std::string& last_path() const { return current_path_; }  // "" before the first file
  // (path, content hash) of each file, in the order received: what SetDigest takes.
  std::vector<std::pair<std::string, std::string>> TakeContentHashes() { return std::move(file_hashes_); }

 private:
  grpc::Status StartFile(const std::string& path, int64_t mtime_us) {
    if (std::string why = UnsafeRelativePath(path); !why.empty()) {
      return {grpc::StatusCode::INVALID_ARGUMENT,
              "upload path " + Quoted(path) + " " + why + " (paths are relative, '/'-separated, without '..')"};
    }
    if (++files_ > limits_.max_files) {
      metrics::CountRefusal(metrics::RefusalCap::kUploadFiles);
      return {grpc::StatusCode::RESOURCE_EXHAUSTED,
              "upload has more than " + std::to_string(limits_.max_files) + " files (server --max-upload-files)"};
    }
    if (!CloseFile()) return CannotWriteStage();
    current_path_ = path;
    file_hash_ = std::make_unique<ContentHasher>();
    const fs::path target = dir_ / current_path_;
    std::error_code ec;
    fs::create_directories(target.parent_path(), ec);
    if (ec) {
      return {grpc::StatusCode::INVALID_ARGUMENT,
              "cannot stage " + Quoted(path) + ": " + ec.message() + " (a file and a folder of the same name?)"};
    }
    if (fs::symlink_status(target, ec).type() != fs::file_type::not_found) {
      return {grpc::StatusCode::INVALID_ARGUMENT,
              "file " + Quoted(path) + " sent twice (send its chunks together), or also a folder"};
    }
    out_.open(target, std::ios::binary);
    if (!out_) return {grpc::StatusCode::INTERNAL, "cannot stage " + Quoted(path) + ": " + std::strerror(errno)};
    if (mtime_us > 0) mtimes_.emplace_back(target, mtime_us);
    return grpc::Status::OK;
  }
  // False when the file in hand could not be written.
  bool CloseFile() {
    if (current_path_.empty()) return true;
    out_.close();
    file_hashes_.emplace_back(current_path_, file_hash_->HexDigest());
    return !out_.fail();
  }

  const fs::path dir_;
  const UploadLimits limits_;
  int64_t files_ = 0, bytes_ = 0;
  std::string current_path_;
  std::ofstream out_;
  std::unique_ptr<ContentHasher> file_hash_;
  std::vector<std::pair<std::string, std::string>> file_hashes_;
  std::vector<std::pair<fs::path, int64_t>> mtimes_;
};

// An upload's header, checked as IngestPath checks its request.
grpc::Status CheckUploadHeader(const v1::UploadHeader& header) {
  if (header.run_name().empty()) return {grpc::StatusCode::INVALID_ARGUMENT, "UploadHeader.run_name is required"};
  if (Status valid = ingest::ValidateRunName(header.run_name()); !valid.ok()) return ToGrpc(valid);
  if (Status valid = CheckRunLabelsAndTime(header.labels(), header.run_time_us()); !valid.ok()) return ToGrpc(valid);
  return grpc::Status::OK;
}

// The chunks after the header: files into `files`, then the trailer, which must come last.
grpc::Status ReceiveChunks(grpc::ServerReader<v1::UploadChunk>* reader, StagedFiles* files,
                           std::optional<v1::UploadTrailer>* trailer) {
  v1::UploadChunk chunk;
  while (reader->Read(&chunk)) {
    if (trailer->has_value()) {
      return {grpc::StatusCode::INVALID_ARGUMENT, "chunks after the UploadTrailer (it must come last)"};
    }
    if (chunk.has_trailer()) {
      *trailer = chunk.trailer();
      continue;
    }
    if (!chunk.has_file()) return {grpc::StatusCode::INVALID_ARGUMENT, "only one UploadHeader per upload"};
    if (grpc::Status written = files->Write(chunk.file()); !written.ok()) return written;
  }
  return files->Close();
}

// All or nothing: a chunk the server could not read (e.g. a file name that is not UTF-8 in `path`) ends the
// stream as if the client had finished; only the trailer tells the two apart.
grpc::Status CheckComplete(const std::optional<v1::UploadTrailer>& trailer, const StagedFiles& files) {
  if (!trailer) {
    return {grpc::StatusCode::INVALID_ARGUMENT,
            "the upload ended without its UploadTrailer after " + std::to_string(files.files()) + " files" +
                (files.last_path().empty() ? std::string()
                                           : " (the last one received: " + Quoted(files.last_path()) + ")") +
                ": a chunk could not be read, or the client stopped early. Nothing was ingested. File names that "
                "are not valid UTF-8 go in FileChunk.raw_path"};
  }
  if (trailer->files() != files.files() || trailer->bytes() != files.bytes()) {
    return {grpc::StatusCode::INVALID_ARGUMENT,
            "the client sent " + std::to_string(trailer->files()) + " files and " + std::to_string(trailer->bytes()) +
                " bytes, the server received " + std::to_string(files.files()) + " files and " +
                std::to_string(files.bytes()) + " bytes. Nothing was ingested"};
  }
  return grpc::Status::OK;
}

// The job of an upload staged in `dir`.
IngestRequest UploadRequest(const v1::UploadHeader& header, const fs::path& dir, StagedFiles& files) {
  IngestRequest r;
  r.source = "upload";
  r.path = dir.string();
  r.run_name = header.run_name();
  r.labels = FromProto(header.labels());
  r.run_time_us = header.run_time_us() > 0 ? header.run_time_us() : -1;
  r.append = header.append();
  r.content_digest = SetDigest(files.TakeContentHashes());
  r.source_description = "upload:" + (header.source().empty() ? header.run_name() : header.source());
  r.files_received = files.files();
  return r;
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
  out->set_files_received(s.files_received);
  wire::MakeStringsValidUtf8(out);  // run names and file paths are bytes
}

int RemoveAbandonedUploads(const std::string& spool_dir, const IngestQueue& queue) {
  std::error_code ec;
  std::vector<std::string> pending = queue.PendingUploadPaths();
  for (auto& p : pending) p = fs::path(p).lexically_normal().string();
  int removed = 0;
  for (fs::directory_iterator it(spool_dir, ec), end; !ec && it != end; it.increment(ec)) {
    const fs::path path = it->path();
    if (path.filename().string().rfind(kUploadStagePrefix, 0) != 0) continue;
    if (std::find(pending.begin(), pending.end(), path.lexically_normal().string()) != pending.end()) continue;
    std::error_code rm;
    fs::remove_all(path, rm);
    if (!rm) ++removed;
  }
  return removed;
}

grpc::Status IngestServiceImpl::WaitAndReport(grpc::ServerContext* ctx, const std::string& job_id,
                                              v1::IngestJob* out) {
  uint64_t version = 0;
  for (;;) {
    auto st = queue_->WaitForChange(job_id, version, std::chrono::milliseconds(200));
    if (!st) return {grpc::StatusCode::NOT_FOUND, "no ingest job " + job_id};
    if (!st->finished() && queue_->stopping()) {
      return {grpc::StatusCode::UNAVAILABLE, "the server is shutting down; the job resumes when it restarts"};
    }
    ToProto(*st, out);
    if (st->finished()) return grpc::Status::OK;
    if (ctx->IsCancelled()) return {grpc::StatusCode::CANCELLED, "client cancelled; the job goes on"};
    version = st->version;
  }
}

grpc::Status IngestServiceImpl::IngestPath(grpc::ServerContext* ctx, const v1::IngestPathRequest* req,
                                           v1::IngestJob* resp) {
  if (Status auth = MayWrite(*access_, ctx); !auth.ok()) return ToGrpc(auth);
  if (req->path().empty()) return {grpc::StatusCode::INVALID_ARGUMENT, "path is required"};
  if (!req->run_name().empty()) {
    if (Status valid = ingest::ValidateRunName(req->run_name()); !valid.ok()) return ToGrpc(valid);
  }
  if (Status valid = CheckRunLabelsAndTime(req->labels(), req->run_time_us()); !valid.ok()) return ToGrpc(valid);
  // Checked now for a prompt answer, and again when the job runs (the path is opened beneath its root then).
  auto resolved = access_->ResolveAllowedPath(req->path());
  if (!resolved.ok()) return ToGrpc(resolved.status());
  IngestRequest r;
  r.source = "path";
  r.path = resolved.value();
  r.run_name = req->run_name();
  r.labels = FromProto(req->labels());
  r.run_time_us = req->run_time_us() > 0 ? req->run_time_us() : -1;
  r.append = req->append();
  auto id = queue_->Submit(std::move(r));
  if (!id.ok()) return {grpc::StatusCode::UNAVAILABLE, id.status().message()};
  if (req->wait()) return WaitAndReport(ctx, id.value(), resp);
  auto st = queue_->Get(id.value());
  if (st) ToProto(*st, resp);  // ToProto makes its strings valid UTF-8 (every IngestJob goes through it)
  return grpc::Status::OK;
}

grpc::Status IngestServiceImpl::Upload(grpc::ServerContext* ctx, grpc::ServerReader<v1::UploadChunk>* reader,
                                       v1::IngestJob* resp) {
  if (Status auth = MayWrite(*access_, ctx); !auth.ok()) return ToGrpc(auth);
  try {
    return ReceiveUpload(ctx, reader, resp);
  } catch (const std::exception& e) {  // nothing escapes a handler; the staged folder went with the stack
    return {grpc::StatusCode::INTERNAL, std::string("upload failed: ") + e.what()};
  }
}

grpc::Status IngestServiceImpl::ReceiveUpload(grpc::ServerContext* ctx, grpc::ServerReader<v1::UploadChunk>* reader,
                                              v1::IngestJob* resp) {
  v1::UploadChunk chunk;
  if (!reader->Read(&chunk) || !chunk.has_header()) {
    return {grpc::StatusCode::INVALID_ARGUMENT, "an upload starts with an UploadHeader"};
  }
  const v1::UploadHeader header = chunk.header();
  if (grpc::Status valid = CheckUploadHeader(header); !valid.ok()) return valid;

  std::error_code ec;
  fs::create_directories(spool_dir_, ec);
  StagedUpload stage(fs::path(spool_dir_) / NewRandomId(std::string(kUploadStagePrefix)));
  if (::mkdir(stage.dir().c_str(), 0700) != 0) {
    return {grpc::StatusCode::INTERNAL, "cannot create upload staging folder " + stage.dir().string() + ": " +
                                            std::strerror(errno)};
  }
  StagedFiles files(stage.dir(), limits_);
  std::optional<v1::UploadTrailer> trailer;
  if (grpc::Status received = ReceiveChunks(reader, &files, &trailer); !received.ok()) return received;
  if (ctx->IsCancelled()) return {grpc::StatusCode::CANCELLED, "upload cancelled"};
  if (grpc::Status complete = CheckComplete(trailer, files); !complete.ok()) return complete;
  files.SetModificationTimes();
  auto id = queue_->Submit(UploadRequest(header, stage.dir(), files));
  if (!id.ok()) return {grpc::StatusCode::UNAVAILABLE, id.status().message()};
  stage.Release();  // the queue owns the staged folder now
  if (header.wait()) return WaitAndReport(ctx, id.value(), resp);
  auto st = queue_->Get(id.value());
  if (st) ToProto(*st, resp);  // ToProto makes its strings valid UTF-8 (every IngestJob goes through it)
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
  // A message on every change, and at least every kWatchHeartbeat while nothing changes (one big file), so
  // a client can tell a busy job from a dead server.
  constexpr auto kWatchHeartbeat = std::chrono::seconds(2);
  uint64_t version = 0;
  bool first = true;
  auto last_sent = std::chrono::steady_clock::now();
  for (;;) {
    auto st = queue_->WaitForChange(req->job_id(), first ? 0 : version, std::chrono::milliseconds(500));
    if (!st) return {grpc::StatusCode::NOT_FOUND, "no ingest job " + wire::ToValidUtf8(req->job_id())};
    if (!st->finished() && queue_->stopping()) {
      return {grpc::StatusCode::UNAVAILABLE, "the server is shutting down; the job resumes when it restarts"};
    }
    const auto now = std::chrono::steady_clock::now();
    if (first || st->version != version || st->finished() || now - last_sent >= kWatchHeartbeat) {
      v1::IngestJob msg;
      ToProto(*st, &msg);
      if (!writer->Write(msg)) return grpc::Status::OK;
      last_sent = now;
    }
    first = false;
    version = st->version;
    if (st->finished() || ctx->IsCancelled()) return grpc::Status::OK;
  }
}

grpc::Status IngestServiceImpl::LabelRun(grpc::ServerContext* ctx, const v1::LabelRunRequest* req, v1::Run* resp) {
  if (Status auth = MayWrite(*access_, ctx); !auth.ok()) return ToGrpc(auth);
  if (req->run_name().empty()) return {grpc::StatusCode::INVALID_ARGUMENT, "run_name is required"};
  store::LabelList set;
  for (const auto& l : req->set()) set.emplace_back(l.key(), l.value());
  const std::vector<std::string> remove(req->remove().begin(), req->remove().end());
  Status st = queue_->RunOnWriter([&](store::Database& db) {
    Status changed = store::RelabelRun(db, req->run_name(), set, remove);
    if (!changed.ok()) return changed;
    v1::GetRunRequest get;
    get.set_run_name(req->run_name());
    return AnswerGetRun(db, get, resp);
  });
  if (!st.ok()) return ToGrpc(st);
  return Answer(resp);
}

grpc::Status IngestServiceImpl::DeleteRun(grpc::ServerContext* ctx, const v1::DeleteRunRequest* req,
                                          v1::DeleteRunResponse* resp) {
  if (Status auth = MayWrite(*access_, ctx); !auth.ok()) return ToGrpc(auth);
  if (req->run_name().empty()) return {grpc::StatusCode::INVALID_ARGUMENT, "run_name is required"};
  Status st = queue_->RunOnWriter([&](store::Database& db) -> Status {
    auto deleted = store::DeleteRun(db, req->run_name());
    if (!deleted.ok()) return deleted.status();
    resp->set_files(deleted->files);
    resp->set_modules(deleted->modules);
    resp->set_rows(deleted->rows);
    return Status::Ok();
  });
  if (!st.ok()) return ToGrpc(st);
  return grpc::Status::OK;
}

StatusOr<store::PrunedDetail> PruneOnWriter(IngestQueue* queue, int64_t keep_detail_days,
                                            const store::LabelList& keep_labels) {
  store::PrunedDetail result;
  Status st = queue->RunOnWriter([&](store::Database& db) -> Status {
    store::PruneOptions options{keep_detail_days, keep_labels, UnixMicrosNow()};
    auto pruned = store::PruneDetail(db, options);
    if (!pruned.ok()) return pruned.status();
    result = *pruned;
    return Status::Ok();
  });
  if (!st.ok()) return st;
  metrics::NotePrune(static_cast<double>(UnixMicrosNow()) / 1e6);
  return result;
}

grpc::Status IngestServiceImpl::PruneDetail(grpc::ServerContext* ctx, const v1::PruneDetailRequest* req,
                                            v1::PruneDetailResponse* resp) {
  if (Status auth = MayWrite(*access_, ctx); !auth.ok()) return ToGrpc(auth);
  if (req->keep_detail_days() < 0) return {grpc::StatusCode::INVALID_ARGUMENT, "keep_detail_days must not be negative"};
  store::LabelList keep;
  for (const auto& l : req->keep_labels()) keep.emplace_back(l.key(), l.value());
  auto pruned = PruneOnWriter(queue_, req->keep_detail_days(), keep);
  if (!pruned.ok()) return ToGrpc(pruned.status());
  resp->set_runs(pruned->runs);
  resp->set_rows(pruned->rows);
  resp->set_bytes_before(pruned->bytes_before);
  resp->set_bytes_after(pruned->bytes_after);
  return grpc::Status::OK;
}

}  // namespace xladb::service
