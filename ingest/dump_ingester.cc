#include "ingest/dump_ingester.h"

#include <chrono>
#include <cstdio>
#include <ctime>
#include <memory>
#include <thread>
#include <vector>

#include "base/content_hash.h"
#include "ingest/text/dump_name.h"
#include "ingest/source/dump_source.h"
#include "ingest/source/file_kind.h"
#include "ingest/source/line_reader.h"
#include "ingest/parser_registry.h"
#include "ingest/text/printed_number.h"
#include "ingest/records/record_pipe.h"
#include "ingest/run_metadata_file.h"
#include "ingest/source/run_name.h"
#include "ingest/source/sniff.h"

namespace xladb::ingest {
namespace {

constexpr size_t kReadChunk = size_t{1} << 20;

// Passes bytes through while hashing them and counting them.
class HashingSource : public ByteSource {
 public:
  explicit HashingSource(ByteSource* inner) : inner_(inner) {}
  StatusOr<size_t> Read(char* buffer, size_t capacity) override {
    auto n = inner_->Read(buffer, capacity);
    if (n.ok() && *n > 0) {
      hasher_.Update(buffer, *n);
      bytes_ += static_cast<int64_t>(*n);
    }
    return n;
  }
  std::string HexDigest() const { return hasher_.HexDigest(); }
  int64_t bytes() const { return bytes_; }

 private:
  ByteSource* inner_;
  ContentHasher hasher_;
  int64_t bytes_ = 0;
};

bool EndsWith(std::string_view s, std::string_view suffix) {
  return s.size() >= suffix.size() && s.substr(s.size() - suffix.size()) == suffix;
}

// The module a file's rows belong to: from XLA's file naming when present, else from the file's stem; and
// the folder the file is in below the dump root (ModuleFolderBelowDumpRoot: without the source's wrapper
// folder and generic dump folders), since multi-host dumps repeat module numbers per host folder.
ModuleKey ModuleKeyFor(const std::string& path, const std::string& file_name, const DumpName& dn,
                       const SniffResult& sr, const std::string& wrapper_folder) {
  ModuleKey key;
  if (size_t slash = path.rfind('/'); slash != std::string::npos) {
    key.folder = ModuleFolderBelowDumpRoot(std::string_view(path).substr(0, slash), wrapper_folder);
  }
  if (dn.xla_naming) {
    key.xla_module_id = dn.xla_module_id;
    key.name = dn.module_name;
    if (key.name.empty() && dn.xla_module_id >= 0) {
      key.name = "module_" + std::to_string(dn.xla_module_id);
      key.name_is_placeholder = true;
    }
    key.stage = dn.stage;
  }
  if (key.name.empty()) {
    std::string stem = file_name;
    if (!dn.artifact.empty() && EndsWith(stem, dn.artifact)) {
      stem.resize(stem.size() - dn.artifact.size());
    } else if (size_t dot = stem.rfind('.'); dot != std::string::npos && dot > 0) {
      stem.resize(dot);
    }
    key.name = stem;
  }
  key.backend = !dn.backend.empty() ? dn.backend : sr.backend_hint;
  return key;
}

struct FirstPass {
  std::string head;
  std::string hash;
  int64_t bytes = 0;
};

// `buf` holds kReadChunk bytes. The caller allocates it once per run: a zero-filled 1 MiB vector per file was
// the largest cost of a folder of many small files (bad-input catalog, 100,000 files).
StatusOr<FirstPass> HashAndHead(DumpEntry& entry, char* buf) {
  auto source = entry.Open();
  if (!source.ok()) return source.status();
  FirstPass pass;
  ContentHasher hasher;
  for (;;) {
    auto n = source.value()->Read(buf, kReadChunk);
    if (!n.ok()) return n.status();
    if (*n == 0) break;
    hasher.Update(buf, *n);
    if (pass.head.size() < kSniffBytes) {
      pass.head.append(buf, std::min(*n, kSniffBytes - pass.head.size()));
    }
    pass.bytes += static_cast<int64_t>(*n);
  }
  pass.hash = hasher.HexDigest();
  return pass;
}

// Files at least this big are parsed on a second thread (RecordPipe); smaller ones inline, where a thread
// would cost more than it saves.
constexpr int64_t kPipelineMinBytes = int64_t{1} << 20;

struct ParseResult {
  Status status;
  int64_t line_count = 0;
  int64_t unknown_lines = 0;
  int64_t bytes = 0;
  std::string hash;  // of the bytes read while parsing
};

// Reads `entry` line by line into the parser for `kind`, hashing what it reads.
ParseResult ParseEntry(DumpEntry& entry, FileKind kind, RecordSink* sink) {
  ParseResult result;
  auto content = entry.Open();
  if (!content.ok()) {
    result.status = content.status();
    return result;
  }
  HashingSource hashing(content.value().get());
  LineReader reader(&hashing);
  std::unique_ptr<LineParser> parser = MakeParser(kind, sink);
  std::string_view line;
  while (reader.Next(&line)) parser->ParseLine(line, reader.line_number());
  result.line_count = reader.line_number();
  if (!reader.status().ok()) {
    result.status = reader.status();
  } else {
    // Signs of a damaged file that no format parser can see on its own (bad-input catalog,
    // tests/store/bad_input_test.cc): a cut-off last line parses as a shorter valid one, and NUL bytes past
    // the sniffed head (the zero-filled tail a crash leaves) would pass as odd text.
    if (reader.last_line_unterminated()) {
      sink->OnIssue({result.line_count, IssueRecord::Severity::kWarning,
                     "truncated file: no newline at the end (XLA ends every dump with one), so line " +
                         std::to_string(result.line_count) + " may be cut short"});
    }
    if (reader.saw_nul()) {
      sink->OnIssue({0, IssueRecord::Severity::kWarning,
                     "the file holds NUL bytes (a zero-filled tail a crash leaves, or a damaged copy)"});
    }
    result.status = parser->Finish();
  }
  result.unknown_lines = parser->unknown_lines();
  result.bytes = hashing.bytes();
  result.hash = hashing.HexDigest();
  return result;
}

Status RunTimeOutOfRange(const std::string& shown) {
  return Status::InvalidArgument("time '" + shown + "' is outside 1970-01-01 .. 2200-01-01");
}

}  // namespace

StatusOr<int64_t> RunTimeFromLabels(const std::vector<std::pair<std::string, std::string>>& labels) {
  for (const auto& [key, value] : labels) {
    if (key != "time" && key != "run_time" && key != "commit_time" && key != "date" && key != "timestamp") continue;
    auto t = ParseTimeToUs(value);
    if (!t.ok()) return Status::InvalidArgument("label " + key + ": " + t.status().message());
    return t;
  }
  return int64_t{-1};
}

Status CheckRunTimeUs(int64_t time_us, const std::string& shown) {
  if (InRunTimeRange(time_us)) return Status::Ok();
  return RunTimeOutOfRange(shown);
}

StatusOr<int64_t> ParseTimeToUs(const std::string& text) {
  if (auto secs = ParseInt64(text)) {
    // Checked in seconds, before the product can overflow (9223372036854775807 seconds).
    if (*secs < kMinRunTimeUs / 1000000 || *secs > kMaxRunTimeUs / 1000000) return RunTimeOutOfRange(text);
    return *secs * 1000000;
  }
  for (const char* fmt : {"%Y-%m-%dT%H:%M:%SZ", "%Y-%m-%dT%H:%M:%S", "%Y-%m-%d %H:%M:%S", "%Y-%m-%d"}) {
    std::tm tm{};
    const char* end = strptime(text.c_str(), fmt, &tm);
    if (end != nullptr && *end == '\0') {
      const int64_t secs = timegm(&tm);  // years up to 9999 fit; the range check refuses the far ones
      if (Status in_range = CheckRunTimeUs(secs * 1000000, text); !in_range.ok()) return in_range;
      return secs * 1000000;
    }
  }
  return Status::InvalidArgument("cannot read time '" + text +
                                 "': use Unix seconds, YYYY-MM-DD, or YYYY-MM-DDTHH:MM:SSZ");
}

StatusOr<IngestSummary> DumpIngester::Ingest(const std::string& path, const IngestOptions& options,
                                             const std::function<void(const IngestProgress&)>& progress) {
  auto source = DumpSource::Open(path, options.source_limits);
  if (!source.ok()) return source.status();
  return Ingest(*source.value(), path, options, progress);
}

StatusOr<IngestSummary> DumpIngester::Ingest(DumpSource& source, const std::string& path,
                                             const IngestOptions& options,
                                             const std::function<void(const IngestProgress&)>& progress) {
  auto start = std::chrono::steady_clock::now();
  RunSpec spec;
  spec.name = options.run_name.empty() ? source.DefaultRunName() : options.run_name;
  if (Status named = ValidateRunName(spec.name); !named.ok()) return named;
  if (Status labelled = ValidateRunLabels(options.labels); !labelled.ok()) return labelled;
  if (options.time_us >= 0) {
    if (Status in_range = CheckRunTimeUs(options.time_us, std::to_string(options.time_us) + " µs"); !in_range.ok()) {
      return in_range;
    }
  }
  spec.source_path = options.source_description.empty() ? CanonicalSourcePath(path) : options.source_description;
  spec.labels = options.labels;
  spec.time_us = options.time_us;
  spec.append = options.append;
  spec.content_digest = options.content_digest;
  if (spec.time_us < 0) {
    auto from_labels = RunTimeFromLabels(options.labels);
    if (!from_labels.ok()) return from_labels.status();
    spec.time_us = *from_labels;
  }
  auto run_id = target_->BeginRun(spec);
  if (!run_id.ok()) return run_id.status();

  IngestSummary summary;
  summary.run_name = spec.name;
  summary.run_id = *run_id;
  int64_t newest_mtime = -1;
  bool time_from_metadata = false;  // the run metadata file set the run's time
  Status fatal;
  IngestProgress prog;
  auto read_buffer = std::make_unique_for_overwrite<char[]>(kReadChunk);  // the hash pass's, reused per file

  auto record_verdict = [&](const FileSpec& fs, const FileOutcome& outcome) {
    Status st = target_->RecordFileWithoutRows(fs, outcome);
    if (!st.ok()) fatal = st;
    summary.Count(outcome.verdict);
    if (outcome.verdict == FileVerdict::kError) summary.errors.push_back({fs.path, outcome.reason});
  };

  bool reread = false;  // the second pass: siblings of replaced files, read again
  const std::string wrapper_folder = source.WrapperFolderName();
  const auto visit = [&](DumpEntry& entry) {
    // The walk goes on to its end (its entries come anyway): a run left partial keeps the time it would
    // have had whole, its newest file's.
    // A modification time outside the run-time range (an archive member dated 9999) does not count: it
    // would sort the run newest forever.
    if (!reread && InRunTimeRange(entry.mtime_us)) {
      newest_mtime = std::max(newest_mtime, entry.mtime_us);
    }
    if (!fatal.ok() || summary.interrupted) return;
    if (options.should_stop && options.should_stop()) {
      summary.interrupted = true;
      return;
    }
    if (!reread) ++summary.files;
    FileSpec fs;
    fs.run_id = *run_id;
    fs.path = entry.path;
    fs.mtime_us = entry.mtime_us;
    fs.size_bytes = std::max<int64_t>(entry.size_bytes, 0);

    auto first =
        entry.open_error.ok() ? HashAndHead(entry, read_buffer.get()) : StatusOr<FirstPass>(entry.open_error);
    if (!first.ok()) {
      // Unreadable: recorded under a hash of the reason, so the same failure again is "unchanged" and a
      // fixed file is ingested.
      fs.kind = std::string(FileKindName(FileKind::kUnknown));
      ContentHasher h;
      h.Update(first.status().message().data(), first.status().message().size());
      fs.content_hash = "unreadable:" + h.HexDigest();
      auto state = target_->CheckFile(fs.run_id, fs.path, fs.content_hash);
      if (state.ok() && *state == IngestTarget::FileState::kUnchanged) {
        summary.Count(FileVerdict::kUnchanged);
        return;
      }
      record_verdict(fs, {FileVerdict::kError, first.status().message(), 0, 0});
      return;
    }
    fs.size_bytes = first->bytes;
    fs.content_hash = first->hash;
    SniffResult sniff = SniffFile(entry.name, first->head);
    fs.kind = std::string(FileKindName(sniff.kind));

    auto state = target_->CheckFile(fs.run_id, fs.path, fs.content_hash);
    if (!state.ok()) {
      fatal = state.status();
      return;
    }
    if (*state == IngestTarget::FileState::kUnchanged) {
      if (!reread) summary.Count(FileVerdict::kUnchanged);
      return;
    }
    // A file read again to rebuild its module is counted as such, not under its verdict.
    struct RereadCount {
      IngestSummary* summary = nullptr;
      std::map<std::string, int64_t> verdicts;
      ~RereadCount() {
        if (summary == nullptr) return;
        ++summary->files_reread;
        summary->files_by_verdict = std::move(verdicts);
      }
    } reread_count;
    if (*state == IngestTarget::FileState::kReread) {
      reread_count.verdicts = summary.files_by_verdict;
      reread_count.summary = &summary;
    }
    ++summary.files_by_kind[fs.kind];
    if (entry.path == kRunMetadataFileName) {  // the run's labels and time, at its root
      StatusOr<RunMetadata> meta = first->bytes <= static_cast<int64_t>(first->head.size())
                                       ? ParseRunMetadata(first->head)
                                       : StatusOr<RunMetadata>(Status::DataLoss(
                                             "larger than " + std::to_string(kMaxRunMetadataBytes) + " bytes"));
      if (!meta.ok()) {
        record_verdict(fs, {FileVerdict::kError, "run metadata file: " + meta.status().message(), 0, 0});
        return;
      }
      std::vector<std::pair<std::string, std::string>> labels;
      for (auto& [key, value] : meta->labels) {  // labels given to the ingest itself win
        bool given = false;
        for (const auto& l : options.labels) given |= l.first == key;
        if (!given) labels.emplace_back(key, value);
      }
      Status applied = target_->ApplyRunMetadata(*run_id, labels, spec.time_us >= 0 ? -1 : meta->time_us);
      if (!applied.ok()) {
        fatal = applied;
        return;
      }
      if (meta->time_us >= 0 && spec.time_us < 0) time_from_metadata = true;
      const std::string applied_text = std::to_string(labels.size()) + " labels" +
                                       (time_from_metadata ? " and the run time" : "") + " applied";
      if (meta->refused_labels.empty()) {
        record_verdict(fs, {FileVerdict::kNotIngested, "run metadata: " + applied_text, 0, 0});
        return;
      }
      // Refused labels are the file's error, so they are seen; the run keeps what the file got right.
      std::string refused;
      for (const auto& why : meta->refused_labels) refused += why + "; ";
      record_verdict(fs, {FileVerdict::kError, "run metadata file: labels left out: " + refused + applied_text, 0, 0});
      return;
    }
    if (!IsIngestedKind(sniff.kind)) {
      bool is_error = sniff.kind == FileKind::kUnknown && sniff.name_claims_ingested_kind;
      record_verdict(fs, {is_error ? FileVerdict::kError : FileVerdict::kNotIngested, sniff.reason, 0, 0});
      return;
    }

    DumpName dn = ParseDumpName(entry.name);
    fs.has_module = true;
    fs.module = ModuleKeyFor(entry.path, entry.name, dn, sniff, wrapper_folder);
    // A file the store cannot take (a constraint its rows break, a failed write) is that file's error: its
    // rows are rolled back, its verdict recorded, and the run goes on. Only a verdict that cannot be recorded
    // either (the database itself is failing) ends the run.
    auto file_failed = [&](const std::string& reason, int64_t line_count, int64_t unknown_lines) {
      FileOutcome failed{FileVerdict::kError, reason, line_count, unknown_lines};
      Status aborted = target_->AbortFile(failed);
      if (!aborted.ok()) {
        fatal = aborted;
        return;
      }
      summary.Count(FileVerdict::kError);
      summary.errors.push_back({fs.path, reason});
    };
    StatusOr<RecordSink*> sink = target_->BeginFile(fs);
    if (!sink.ok()) {
      file_failed("cannot store this file: " + sink.status().message(), 0, 0);
      return;
    }
    if (*sink == nullptr) {  // another writer stored this content meanwhile (a shared store)
      --summary.files_by_kind[fs.kind];
      if (!reread) summary.Count(FileVerdict::kUnchanged);
      return;
    }
    FileOutcome outcome;
    ParseResult parsed;
    if (fs.size_bytes >= kPipelineMinBytes) {
      // Big file: parse on a second thread while this one writes (two cores, two stages).
      RecordPipe pipe;
      std::thread parser_thread([&] {
        parsed = ParseEntry(entry, sniff.kind, pipe.input());
        pipe.Close();
      });
      pipe.Drain(*sink);
      parser_thread.join();
    } else {
      parsed = ParseEntry(entry, sniff.kind, *sink);
    }
    outcome.line_count = parsed.line_count;
    outcome.unknown_lines = parsed.unknown_lines;
    Status parse_status = parsed.status;
    if (parse_status.ok() && parsed.hash != fs.content_hash) {
      parse_status = Status::DataLoss("file changed while being read (content hash differs between passes); "
                                      "ingest it again once it is complete");
    }
    summary.bytes_read += parsed.bytes;
    if (!parse_status.ok()) {
      std::string reason = parse_status.message();
      if (outcome.line_count > 0 && reason.find("line ") == std::string::npos) {
        reason += " (after line " + std::to_string(outcome.line_count) + ")";
      }
      file_failed(reason, outcome.line_count, outcome.unknown_lines);
    } else {
      outcome.verdict = FileVerdict::kIngested;
      auto stats = target_->CommitFile(outcome);
      if (stats.ok()) {
        summary.rows += stats->rows;
        summary.issues += stats->issues;
        summary.Count(FileVerdict::kIngested);
      } else {
        file_failed("cannot store this file: " + stats.status().message(), outcome.line_count,
                    outcome.unknown_lines);
      }
    }
    ++prog.files_done;
    prog.bytes_done = summary.bytes_read;
    prog.current_path = &entry.path;
    if (progress) progress(prog);
  };
  Status walk = source.ForEach(visit);
  // A replaced file whose module other files also wrote to made the target rebuild that module: read those
  // files again (they are "changed" now; the rest is unchanged and skipped). Counted apart, not twice.
  if (walk.ok() && fatal.ok() && !summary.interrupted && target_->TakeRereadRequest()) {
    reread = true;
    walk = source.ForEach(visit);
  }

  // Also after a fatal error: the files stored whole so far are kept (a target that commits files in groups
  // commits its open group here).
  Status fin = target_->FinishRun(*run_id, spec.time_us >= 0 || time_from_metadata ? -1 : newest_mtime);
  if (fatal.ok() && !fin.ok()) fatal = fin;
  summary.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  if (!fatal.ok()) return fatal;
  if (!walk.ok()) {
    // The walk stopped early (corrupt archive, unreadable folder): what was visited is stored; say so.
    summary.errors.push_back({path, walk.message()});
    summary.Count(FileVerdict::kError);
  }
  return summary;
}

}  // namespace xladb::ingest
