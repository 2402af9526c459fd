#include "ingest/file_ingest.h"

#include <algorithm>
#include <map>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "base/content_hash.h"
#include "ingest/file_passes.h"
#include "ingest/run_metadata_file.h"
#include "ingest/source/file_kind.h"
#include "ingest/source/run_name.h"
#include "ingest/source/sniff.h"
#include "ingest/text/dump_name.h"

namespace xladb::ingest {
namespace {

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
      key.name = PlaceholderModuleName(dn.xla_module_id);
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

class FileIngest {
 public:
  FileIngest(RunIngestState& run, DumpEntry& entry, ReadAheadFile* ahead)
      : run_(run), summary_(run.summary), entry_(entry), ahead_(ahead) {
    spec_.run_id = run.run_id;
    spec_.path = entry.path;
    spec_.mtime_us = entry.mtime_us;
    spec_.size_bytes = std::max<int64_t>(entry.size_bytes, 0);
  }

  void Run() {
    if (!Hash()) return;
    std::optional<IngestTarget::FileState> stored = CheckStored();
    if (!stored) return;
    if (*stored != IngestTarget::FileState::kReread) {
      IngestChanged();
      return;
    }
    // A file read again to rebuild its module is counted as such, not under its verdict.
    std::map<std::string, int64_t> verdicts = summary_.files_by_verdict;
    IngestChanged();
    summary_.files_by_verdict = std::move(verdicts);
    ++summary_.files_reread;
  }

 private:
  // Step 1. False when the file ended here: unreadable, its verdict recorded.
  bool Hash() {
    auto first = ahead_ != nullptr          ? FirstReadAhead()
                 : entry_.open_error.ok() ? HashAndHead(entry_, run_.read_buffer.get())
                                          : StatusOr<FirstPass>(entry_.open_error);
    if (first.ok()) {
      first_ = std::move(*first);
      spec_.size_bytes = first_.bytes;
      spec_.content_hash = first_.hash;
      return true;
    }
    const std::string& reason = first.status().message();
    spec_.kind = std::string(FileKindName(FileKind::kUnknown));
    ContentHasher h;
    h.Update(reason.data(), reason.size());
    spec_.content_hash = "unreadable:" + h.HexDigest();
    auto state = run_.target->CheckFile(spec_.run_id, spec_.path, spec_.content_hash);
    if (state.ok() && *state == IngestTarget::FileState::kUnchanged) {
      summary_.Count(FileVerdict::kUnchanged);
    } else {
      Record({FileVerdict::kError, reason, 0, 0});
    }
    return false;
  }

  // The first read of a file read ahead, moved here without its content (which stays with the file, for its
  // parse): this runs on the writer's thread, the longer stage, so the head is not copied.
  StatusOr<FirstPass> FirstReadAhead() {
    if (!ahead_->first.ok()) return ahead_->first.status();
    FirstPass first;
    first.head = std::move(ahead_->first->head);
    first.hash = std::move(ahead_->first->hash);
    first.bytes = ahead_->first->bytes;
    return first;
  }

  // Step 2 (sniffing first: the kind is recorded with the file). nullopt when the file ended here.
  std::optional<IngestTarget::FileState> CheckStored() {
    sniff_ = ahead_ != nullptr ? ahead_->sniff : SniffFile(entry_.name, first_.head);
    spec_.kind = std::string(FileKindName(sniff_.kind));
    auto state = run_.target->CheckFile(spec_.run_id, spec_.path, spec_.content_hash);
    if (!state.ok()) {
      run_.fatal = state.status();
      return std::nullopt;
    }
    if (run_.parse_ahead != nullptr) run_.parse_ahead->store(*state != IngestTarget::FileState::kUnchanged);
    if (*state == IngestTarget::FileState::kUnchanged) {
      if (!run_.reread) summary_.Count(FileVerdict::kUnchanged);
      return std::nullopt;
    }
    return *state;
  }

  // Steps 3 to 5, for a file the target does not hold.
  void IngestChanged() {
    ++summary_.files_by_kind[spec_.kind];
    if (entry_.path == kRunMetadataFileName) {  // the run's labels and time, at its root
      ApplyRunMetadataFile();
      return;
    }
    if (!IsIngestedKind(sniff_.kind)) {
      const bool claims_a_format = sniff_.kind == FileKind::kUnknown && sniff_.name_claims_ingested_kind;
      Record({claims_a_format ? FileVerdict::kError : FileVerdict::kNotIngested, sniff_.reason, 0, 0});
      return;
    }
    const DumpName dn = ParseDumpName(entry_.name);
    spec_.has_module = true;
    spec_.module = ModuleKeyFor(entry_.path, entry_.name, dn, sniff_, run_.wrapper_folder);
    StatusOr<RecordSink*> sink = run_.target->BeginFile(spec_);
    if (!sink.ok()) {
      Fail("cannot store this file: " + sink.status().message(), 0, 0);
      return;
    }
    if (*sink == nullptr) {  // another writer stored this content meanwhile (a shared store)
      --summary_.files_by_kind[spec_.kind];
      if (!run_.reread) summary_.Count(FileVerdict::kUnchanged);
      return;
    }
    Conclude(ahead_ != nullptr ? ahead_->ParseInto(*sink) : ParseInto(entry_, sniff_.kind, spec_.size_bytes, *sink));
    ++run_.progress.files_done;
    run_.progress.bytes_done = summary_.bytes_read;
    run_.progress.current_path = &entry_.path;
    if (run_.on_progress) run_.on_progress(run_.progress);
  }

  // Step 3 for the run's metadata file: its labels (those the ingest was not given) and time go to the run.
  void ApplyRunMetadataFile() {
    StatusOr<RunMetadata> meta = first_.bytes <= static_cast<int64_t>(first_.head.size())
                                     ? ParseRunMetadata(first_.head)
                                     : StatusOr<RunMetadata>(Status::DataLoss(
                                           "larger than " + std::to_string(kMaxRunMetadataBytes) + " bytes"));
    if (!meta.ok()) {
      Record({FileVerdict::kError, "run metadata file: " + meta.status().message(), 0, 0});
      return;
    }
    std::vector<std::pair<std::string, std::string>> labels;
    for (auto& [key, value] : meta->labels) {  // labels given to the ingest itself win
      bool given = false;
      for (const auto& l : run_.options->labels) given |= l.first == key;
      if (!given) labels.emplace_back(key, value);
    }
    Status applied = run_.target->ApplyRunMetadata(run_.run_id, labels, run_.run_time_given ? -1 : meta->time_us);
    if (!applied.ok()) {
      run_.fatal = applied;
      return;
    }
    if (meta->time_us >= 0 && !run_.run_time_given) run_.time_from_metadata = true;
    const std::string applied_text = std::to_string(labels.size()) + " labels" +
                                     (run_.time_from_metadata ? " and the run time" : "") + " applied";
    if (meta->refused_labels.empty()) {
      Record({FileVerdict::kNotIngested, "run metadata: " + applied_text, 0, 0});
      return;
    }
    // Refused labels are the file's error, so they are seen; the run keeps what the file got right.
    std::string refused;
    for (const auto& why : meta->refused_labels) refused += why + "; ";
    Record({FileVerdict::kError, "run metadata file: labels left out: " + refused + applied_text, 0, 0});
  }

  // Step 5: the rows committed (ingested), or rolled back with the reason (error).
  void Conclude(const ParseResult& parsed) {
    summary_.bytes_read += parsed.bytes;
    if (std::optional<std::string> failure = ParseFailure(parsed, spec_.content_hash)) {
      Fail(*failure, parsed.line_count, parsed.unknown_lines);
      return;
    }
    auto stats = run_.target->CommitFile({FileVerdict::kIngested, "", parsed.line_count, parsed.unknown_lines});
    if (!stats.ok()) {
      Fail("cannot store this file: " + stats.status().message(), parsed.line_count, parsed.unknown_lines);
      return;
    }
    summary_.rows += stats->rows;
    summary_.issues += stats->issues;
    summary_.Count(FileVerdict::kIngested);
  }

  // A verdict without rows. A verdict that cannot be recorded ends the run.
  void Record(const FileOutcome& outcome) {
    Status recorded = run_.target->RecordFileWithoutRows(spec_, outcome);
    if (!recorded.ok()) run_.fatal = recorded;
    summary_.Count(outcome.verdict);
    if (outcome.verdict == FileVerdict::kError) summary_.errors.push_back({spec_.path, outcome.reason});
  }

  // A file the store cannot take (a constraint its rows break, a failed write) is that file's error: its rows
  // are rolled back, its verdict recorded, and the run goes on. Only a verdict that cannot be recorded either
  // (the database itself is failing) ends the run.
  void Fail(const std::string& reason, int64_t line_count, int64_t unknown_lines) {
    Status aborted = run_.target->AbortFile({FileVerdict::kError, reason, line_count, unknown_lines});
    if (!aborted.ok()) {
      run_.fatal = aborted;
      return;
    }
    summary_.Count(FileVerdict::kError);
    summary_.errors.push_back({spec_.path, reason});
  }

  RunIngestState& run_;
  IngestSummary& summary_;
  DumpEntry& entry_;
  ReadAheadFile* ahead_;  // the file read ahead, or nullptr: read `entry_` here
  FileSpec spec_;
  FirstPass first_;
  SniffResult sniff_;
};

}  // namespace

void IngestFile(RunIngestState& run, DumpEntry& entry) { FileIngest(run, entry, nullptr).Run(); }

void IngestFile(RunIngestState& run, ReadAheadFile& ahead) { FileIngest(run, ahead.entry, &ahead).Run(); }

}  // namespace xladb::ingest
