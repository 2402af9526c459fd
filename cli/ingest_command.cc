// `xladb ingest PATH…` against xladbd: uploads the files (Upload), or has the server read a path of its own
// (IngestPath, --server-path), then follows the job to its end (WatchIngestJob) and prints its verdicts.
//
// Uploads are all or nothing: every file the walk finds is sent (names that are not UTF-8 as raw bytes), the
// stream ends with a trailer counting files and bytes, and a local file that cannot be read stops the upload
// before anything is stored. Both calls are bounded by inactivity, not total time: a big upload or a long
// ingest may take as long as it needs while bytes move or the job reports progress (the server reports at
// least every few seconds).
#include <grpcpp/grpcpp.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <map>
#include <cstdio>
#include <string>
#include <utility>
#include <vector>

#include "cli/call_watchdog.h"
#include "cli/ingest_command.h"
#include "ingest/dump_ingester.h"
#include "ingest/records/file_verdict.h"
#include "ingest/source/dump_source.h"
#include "ingest/source/run_name.h"
#include "ingest/text/visible_text.h"
#include "proto/wire_text.h"
#include "store/backend/database.h"
#include "store/write/run_writer.h"
#include "xladb/v1/xladb.grpc.pb.h"

namespace xladb::cli {
namespace {

namespace v1 = xladb::v1;

int Silent(const ClientOptions& o, const char* what) {
  std::fprintf(stderr, "xladb: xladbd at %s did not answer in %lld s (%s; --timeout)\n", o.addr.c_str(),
               static_cast<long long>(o.timeout_s), what);
  return kExitFailure;
}

// The first kErrorsShown files that could not be ingested ("  error: PATH: REASON", controls escaped), then how
// many more there were: the same lines for a job xladbd ran and for an offline ingest.
constexpr size_t kErrorsShown = 20;

using PathReason = std::pair<const std::string&, const std::string&>;
PathReason PathAndReason(const v1::FileError& e) { return {e.path(), e.reason()}; }
PathReason PathAndReason(const ingest::IngestSummary::FileError& e) { return {e.path, e.reason}; }

template <typename Errors>
void PrintFileErrors(const Errors& errors) {
  size_t shown = 0;
  for (const auto& e : errors) {
    if (shown++ == kErrorsShown) break;
    const auto [path, reason] = PathAndReason(e);
    std::fprintf(stderr, "  error: %s: %s\n", ingest::EscapeControlCharacters(path).c_str(),
                 ingest::EscapeControlCharacters(reason).c_str());
  }
  const size_t total = static_cast<size_t>(errors.size());
  if (total > kErrorsShown) std::fprintf(stderr, "  … and %zu more errors\n", total - kErrorsShown);
}

void PrintJob(const v1::IngestJob& job) {
  const std::string verdicts =
      FormatVerdicts(std::map<std::string, int64_t>(job.files_by_verdict().begin(), job.files_by_verdict().end()));
  std::string received;
  if (job.files_received() > 0) received = " of " + std::to_string(job.files_received()) + " received";
  double mb = static_cast<double>(job.bytes_done()) / 1e6;
  std::printf("run %s: %lld files%s (%s); %lld rows, %.1f MB in %.2f s, %lld issues [%s]\n",
              ingest::EscapeControlCharacters(job.run_name()).c_str(),
              static_cast<long long>(job.files_done()), received.c_str(), verdicts.c_str(),
              static_cast<long long>(job.rows()), mb, job.seconds(), static_cast<long long>(job.issues()),
              v1::IngestJob::State_Name(job.state()).c_str());
  PrintFileErrors(job.errors());
  if (!job.message().empty()) std::fprintf(stderr, "  %s\n", ingest::EscapeControlCharacters(job.message()).c_str());
}

int JobExitCode(const v1::IngestJob& job) {
  if (job.state() != v1::IngestJob::SUCCEEDED) return kExitFailure;
  return job.errors_size() > 0 ? kExitFailure : kExitOk;
}

// Follows job `job` (as first answered) until it ends; prints it; returns the exit code.
int FollowJob(const ClientOptions& o, v1::IngestService::Stub* stub, v1::IngestJob job) {
  if (job.state() != v1::IngestJob::SUCCEEDED && job.state() != v1::IngestJob::FAILED) {
    grpc::ClientContext ctx;
    Prepare(o, &ctx, /*deadline=*/false);
    // The server reports at least every 2 s; a --timeout shorter than a few of those would call a busy job dead.
    InactivityWatchdog watchdog(&ctx, std::chrono::seconds(std::max<int64_t>(o.timeout_s, 10)));
    v1::GetIngestJobRequest req;
    req.set_job_id(job.job_id());
    auto reader = stub->WatchIngestJob(&ctx, req);
    v1::IngestJob update;
    while (reader->Read(&update)) {
      watchdog.Touch();
      job = update;
    }
    grpc::Status st = reader->Finish();
    if (watchdog.fired()) return Silent(o, "no progress from the ingest job");
    if (!st.ok()) return Fail(o, st);
  }
  PrintJob(job);
  return JobExitCode(job);
}

int IngestServerPath(const ClientOptions& o, v1::IngestService::Stub* stub, const std::string& path,
                     const IngestArgs& a) {
  v1::IngestPathRequest req;
  req.set_path(path);
  req.set_run_name(a.run_name);
  for (const auto& [k, v] : a.labels) {
    auto* l = req.add_labels();
    l->set_key(k);
    l->set_value(v);
  }
  req.set_run_time_us(a.time_us > 0 ? a.time_us : 0);
  req.set_append(a.append);
  req.set_wait(false);
  grpc::ClientContext ctx;
  Prepare(o, &ctx);
  v1::IngestJob job;
  grpc::Status st = stub->IngestPath(&ctx, req, &job);
  if (!st.ok()) return Fail(o, st);
  return FollowJob(o, stub, job);
}

int Upload(const ClientOptions& o, v1::IngestService::Stub* stub, const std::string& path,
           const IngestArgs& a) {
  auto source = ingest::DumpSource::Open(path);
  if (!source.ok()) {
    std::fprintf(stderr, "xladb: %s\n", source.status().message().c_str());
    return kExitFailure;
  }
  const std::string run_name = a.run_name.empty() ? ingest::DefaultRunNameForPath(path) : a.run_name;
  if (Status valid = ingest::ValidateRunName(run_name); !valid.ok()) {
    std::fprintf(stderr, "xladb: run name of %s: %s (name the run with --run)\n", path.c_str(),
                 valid.message().c_str());
    return kExitUsage;
  }
  grpc::ClientContext ctx;
  Prepare(o, &ctx, /*deadline=*/false);
  InactivityWatchdog watchdog(&ctx, std::chrono::seconds(o.timeout_s));
  v1::IngestJob job;
  auto writer = stub->Upload(&ctx, &job);
  v1::UploadChunk header;
  auto* h = header.mutable_header();
  h->set_run_name(run_name);
  for (const auto& [k, v] : a.labels) {
    auto* l = h->add_labels();
    l->set_key(k);
    l->set_value(v);
  }
  h->set_run_time_us(a.time_us > 0 ? a.time_us : 0);
  h->set_append(a.append);
  // The source as one spelling of it (`d`, `d/`, `./d`), so a second upload of other content into the run is
  // recognised as the same source (runs.content_digest decides).
  h->set_source(wire::ToValidUtf8(ingest::CanonicalSourcePath(path)));
  h->set_wait(false);
  bool stream_ok = writer->Write(header);
  std::vector<char> buf(size_t{4} << 20);
  int64_t files = 0, bytes = 0;
  std::string local_error;  // a file we could not read: the upload is abandoned, nothing is stored
  Status walk = source.value()->ForEach([&](ingest::DumpEntry& entry) {
    if (!stream_ok || !local_error.empty()) return;
    std::string rel = entry.path;
    size_t slash = rel.rfind('/');
    rel = (slash == std::string::npos ? "" : rel.substr(0, slash + 1)) + entry.name;  // .gz/.zst removed
    auto content = entry.Open();
    if (!content.ok()) {
      local_error = wire::EscapeInvalidUtf8(entry.path) + ": " + content.status().message();
      return;
    }
    v1::UploadChunk chunk;
    // File names are bytes: one that is not UTF-8 goes as raw_path (a proto string must be UTF-8).
    if (wire::IsValidUtf8(rel)) chunk.mutable_file()->set_path(rel);
    else chunk.mutable_file()->set_raw_path(rel);
    chunk.mutable_file()->set_mtime_us(entry.mtime_us > 0 ? entry.mtime_us : 0);
    bool sent_any = false;
    for (;;) {
      auto n = content.value()->Read(buf.data(), buf.size());
      watchdog.Touch();  // reading and decompressing here is not the server's silence
      if (!n.ok()) {
        local_error = wire::EscapeInvalidUtf8(entry.path) + ": " + n.status().message();
        return;
      }
      if (*n == 0 && sent_any) break;
      chunk.mutable_file()->set_data(buf.data(), *n);
      if (!writer->Write(chunk)) {
        stream_ok = false;
        return;
      }
      watchdog.Touch();
      bytes += static_cast<int64_t>(*n);
      sent_any = true;
      if (*n == 0) break;  // an empty file is sent as one empty chunk
    }
    ++files;
  });
  if (!walk.ok() && local_error.empty()) local_error = path + ": " + walk.message();
  if (!local_error.empty()) {
    ctx.TryCancel();  // no trailer: the server stores nothing of it
    (void)writer->Finish();
    std::fprintf(stderr, "xladb: cannot read %s\n  nothing of %s was uploaded\n", local_error.c_str(), path.c_str());
    return kExitFailure;
  }
  if (stream_ok) {
    v1::UploadChunk trailer;
    trailer.mutable_trailer()->set_files(files);
    trailer.mutable_trailer()->set_bytes(bytes);
    stream_ok = writer->Write(trailer);
  }
  if (stream_ok) writer->WritesDone();
  grpc::Status st = writer->Finish();
  if (watchdog.fired()) return Silent(o, "it accepted no upload bytes");
  if (!st.ok()) return Fail(o, st);
  return FollowJob(o, stub, job);
}

}  // namespace

int CmdRemoteIngest(const ClientOptions& o, const IngestArgs& a) {
  auto stub = v1::IngestService::NewStub(Connect(o));
  int exit_code = kExitOk;
  for (const auto& path : a.paths) {
    int rc = a.server_path ? IngestServerPath(o, stub.get(), path, a) : Upload(o, stub.get(), path, a);
    if (rc == kExitUsage) return rc;
    if (rc != kExitOk) exit_code = kExitFailure;
  }
  return exit_code;
}

std::string FormatVerdicts(const std::map<std::string, int64_t>& by_verdict) {
  std::string s;
  for (ingest::FileVerdict verdict : ingest::kFileVerdicts) {
    const std::string name(ingest::FileVerdictName(verdict));
    auto it = by_verdict.find(name);
    int64_t n = it == by_verdict.end() ? 0 : it->second;
    if (!s.empty()) s += ", ";
    s += std::to_string(n) + " " + name;
  }
  // Files of a module one of whose files was replaced, read again to rebuild it (store/write/run_writer.h).
  if (auto it = by_verdict.find(std::string(ingest::kFilesRereadKey)); it != by_verdict.end() && it->second > 0) {
    s += ", " + std::to_string(it->second) + " read again";
  }
  return s;
}

int CmdOfflineIngest(const std::string& db_path, const IngestArgs& a) {
  ingest::IngestOptions options;
  options.run_name = a.run_name;
  options.append = a.append;
  options.labels = a.labels;
  options.time_us = a.time_us;
  const std::vector<std::string>& paths = a.paths;
  if (!a.run_name.empty() && paths.size() > 1) {
    std::fprintf(stderr, "xladb: --run names one run; give one PATH with it (or none and let folders name runs)\n");
    return kExitUsage;
  }
  auto db = store::Database::Open(db_path);
  if (!db.ok()) {
    std::fprintf(stderr, "xladb: %s\n", db.status().message().c_str());
    return kExitFailure;
  }
  store::RunWriter writer(db.value().get());
  ingest::DumpIngester ingester(&writer);
  const bool tty = ::isatty(STDERR_FILENO);
  int exit_code = kExitOk;
  for (const auto& path : paths) {
    auto progress = [&](const ingest::IngestProgress& p) {
      if (!tty) return;
      std::fprintf(stderr, "\r\033[K%lld files, %.1f MB  %s", static_cast<long long>(p.files_done),
                   static_cast<double>(p.bytes_done) / 1e6, p.current_path ? p.current_path->c_str() : "");
      std::fflush(stderr);
    };
    auto summary = ingester.Ingest(path, options, progress);
    if (tty) std::fprintf(stderr, "\r\033[K");
    if (!summary.ok()) {
      std::fprintf(stderr, "xladb: ingest %s failed: %s\n", path.c_str(), summary.status().message().c_str());
      return summary.status().code() == Status::Code::kInvalidArgument ? kExitUsage : kExitFailure;
    }
    const auto& s = summary.value();
    double mb = static_cast<double>(s.bytes_read) / 1e6;
    std::printf("run %s: %lld files (%s); %lld rows, %.1f MB in %.2f s (%.1f MB/s), %lld issues\n",
                ingest::EscapeControlCharacters(s.run_name).c_str(), static_cast<long long>(s.files),
                FormatVerdicts(s.FilesByVerdictWithRereads()).c_str(),
                static_cast<long long>(s.rows), mb, s.seconds, s.seconds > 0 ? mb / s.seconds : 0.0,
                static_cast<long long>(s.issues));
    if (s.files > 0 && s.Counted(ingest::FileVerdict::kUnchanged) == s.files) {
      std::printf("run %s: unchanged\n", ingest::EscapeControlCharacters(s.run_name).c_str());
    }
    PrintFileErrors(s.errors);
    if (!s.errors.empty()) exit_code = kExitFailure;
  }
  return exit_code;
}

}  // namespace xladb::cli
