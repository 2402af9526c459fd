// IngestTarget: where the ingest driver stores runs and files. The store's RunWriter implements it; the
// driver (dump_ingester.h) knows only this interface, so ingest/ stays free of SQL.
//
// Protocol, per run:  BeginRun → for each file: CheckFile → (BeginFile → records… → CommitFile | AbortFile)
//                     or RecordFileWithoutRows → FinishRun (always, after a fatal error too, and after a
//                     throw in the middle of a file: FinishRun then drops that file, begun and not ended,
//                     storing and recording nothing of it, so a rerun reads it again).
// BeginFile returns the RecordSink that takes the file's records; it belongs to the target and is valid until
// the file's CommitFile or AbortFile.
// Contract
//   * Each file is atomic: BeginFile..CommitFile stores all of its rows or none; AbortFile leaves none of the
//     file's rows and records the error verdict. A target may commit several files together (the store's
//     RunWriter does, each file in a savepoint): a crash then loses whole files of the last group only, and
//     FinishRun commits what is pending. If such a group cannot be committed, every later call fails with
//     that reason, so the run ends with an error and a rerun stores those files; FinishRun still gives the
//     run the time it would have had (newest_mtime_us: the newest of every file the walk saw, stored or
//     not). Errors are returned as Status, never thrown.
//   * A failed BeginFile or CommitFile has rolled back that file's rows and recorded nothing: the driver then
//     records the file's error verdict with AbortFile (required: the target holds the file open until then)
//     and goes on with the next file. Only a failure to record
//     that verdict (the database itself is failing) ends the run.
//   * CheckFile by content hash: the same content at the same path is kUnchanged and must be skipped.
//   * Another writer (a second daemon on a shared store) may store the same file between CheckFile and
//     BeginFile: BeginFile then returns a null sink, has recorded nothing, and the driver counts the file as
//     unchanged. (Another content stored for that path meanwhile is a failed BeginFile.)
//   * Single-threaded.
#ifndef XLADB_INGEST_RECORDS_INGEST_TARGET_H_
#define XLADB_INGEST_RECORDS_INGEST_TARGET_H_

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "ingest/records/file_verdict.h"
#include "ingest/records/record_sink.h"
#include "base/status.h"

namespace xladb::ingest {

struct RunSpec {
  std::string name;
  std::string source_path;
  std::vector<std::pair<std::string, std::string>> labels;
  int64_t time_us = -1;  // --time; -1: the newest file mtime (FinishRun)
  // Runs do not merge by accident: BeginRun refuses (kFailedPrecondition, naming the run's source) to add to an
  // existing run that came from another source_path, or from an upload of other content (content_digest),
  // unless `append` is set. The same source again (a re-ingest, a grown watched folder) is always allowed.
  bool append = false;
  std::string content_digest;  // uploads: XXH3-128 over the uploaded paths and contents; "" otherwise
};

// Which module a file's rows belong to.
struct ModuleKey {
  int64_t xla_module_id = -1;  // -1: the file name carries none
  std::string name;
  // `name` is the `module_<ID>` placeholder of a file name without the module's name (2020-era TensorFlow
  // dumps): the writer finds the module by (stage, xla_module_id, folder) whatever its name, since its HLO
  // text renames it after its HloModule line, and a module's files arrive in any order.
  bool name_is_placeholder = false;
  std::string stage;
  std::string backend;
  std::string folder;          // the file's folder inside the run ('' = the root): host0, host1, … in
                               // multi-host dumps, where module numbers repeat per host
};

// The `module_<ID>` placeholder name of module number `xla_module_id` (ModuleKey::name_is_placeholder).
inline std::string PlaceholderModuleName(int64_t xla_module_id) { return "module_" + std::to_string(xla_module_id); }

struct FileSpec {
  int64_t run_id = 0;
  std::string path;            // relative to the run root, '/'-separated
  std::string kind;            // FileKindName
  int64_t size_bytes = 0;
  std::string content_hash;    // hex XXH3-128 of the content
  int64_t mtime_us = -1;
  bool has_module = false;     // false for files whose rows belong to no module
  ModuleKey module;
};

struct FileOutcome {
  FileVerdict verdict = FileVerdict::kError;  // kIngested, kNotIngested or kError (kUnchanged is never recorded)
  std::string reason;          // why not ingested, or the error
  int64_t line_count = 0;
  int64_t unknown_lines = 0;
};

struct FileWriteStats {
  int64_t rows = 0;            // data rows written
  int64_t issues = 0;          // issues recorded
};

class IngestTarget {
 public:
  // kReread: the same content, but its module was rebuilt (TakeRereadRequest): it must be read again.
  enum class FileState { kNew, kUnchanged, kChanged, kReread };

  virtual ~IngestTarget() = default;

  virtual StatusOr<int64_t> BeginRun(const RunSpec& spec) = 0;
  virtual StatusOr<FileState> CheckFile(int64_t run_id, const std::string& path,
                                        const std::string& content_hash) = 0;
  virtual StatusOr<RecordSink*> BeginFile(const FileSpec& spec) = 0;
  virtual StatusOr<FileWriteStats> CommitFile(const FileOutcome& outcome) = 0;
  virtual Status AbortFile(const FileOutcome& outcome) = 0;
  virtual Status RecordFileWithoutRows(const FileSpec& spec, const FileOutcome& outcome) = 0;
  virtual Status FinishRun(int64_t run_id, int64_t newest_mtime_us) = 0;
  // True (once) when a replaced file's module was rebuilt and its other files must be read again: they are
  // then "changed" for CheckFile, and the driver walks the run a second time. The default: never.
  virtual bool TakeRereadRequest() { return false; }
  // Labels and time from the run's metadata file (run_metadata_file.h), between files: labels are set
  // (a key's value replaced), and time_us >= 0 becomes the run's time unless the ingest was given one.
  // A target that keeps no runs may ignore it (the default).
  virtual Status ApplyRunMetadata(int64_t /*run_id*/, const std::vector<std::pair<std::string, std::string>>& /*labels*/,
                                  int64_t /*time_us*/) {
    return Status::Ok();
  }
};

}  // namespace xladb::ingest

#endif  // XLADB_INGEST_RECORDS_INGEST_TARGET_H_
