// DumpIngester: ingests one run (a folder, file or archive) into an IngestTarget.
//
// For each file: read it once to hash its content (XXH3-128) and keep its head; sniff the format; skip it
// if the target already holds the same content at the same path; otherwise parse it line by line straight
// into the target, each file atomic (BeginFile..CommitFile). The content is hashed again while parsing, so
// a file that changes while being read is rolled back and recorded as an error, not half-stored. The run's
// `xladb-run.toml` (run_metadata_file.h), met at its root, gives the run labels and a time. On two cores the
// walk reads, sniffs and parses the next small files ahead on a second thread while this one's target stores
// the earlier ones (IngestOptions::read_ahead; docs/architecture.md "Threads and connections").
//
// Contract
//   * Never stops on a bad file: every file gets a verdict (ingested, not_ingested, error, or unchanged) and
//     the rest of the run is still ingested. A file the target cannot store (a constraint its rows break, a
//     failed write) is that file's error too. Only a failure to record a verdict at all (the database is
//     failing) stops the run, and that is returned as a non-OK Status.
//   * Exceptions: none of its own. One thrown beneath it (a bug, std::bad_alloc) goes on to the caller after
//     the run is finished as after a fatal error (the target's FinishRun: the file in hand dropped, the files
//     stored whole kept), with the read-ahead thread joined: a target that outlives the run is left with no
//     file, transaction or lock open.
//   * Memory: bounded by the longest line and the parsers' per-module state, never by file size.
//   * Not thread-safe; one ingester per thread and target. With read_ahead, the target is called from a
//     thread of the ingester's own (one call at a time, never two threads at once), and so are `progress` and
//     `should_stop` (which the walk's thread calls too): targets, connections and callbacks must allow that.
#ifndef XLADB_INGEST_DUMP_INGESTER_H_
#define XLADB_INGEST_DUMP_INGESTER_H_

#include <cstdint>
#include <functional>
#include <map>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "ingest/source/dump_source.h"
#include "ingest/records/file_verdict.h"
#include "ingest/records/ingest_target.h"
#include "base/status.h"

namespace xladb::ingest {

struct IngestOptions {
  std::string run_name;  // empty: DumpSource::DefaultRunName(); either must pass ValidateRunName()
  std::string source_description;  // recorded as the run's source_path; empty: the absolute path
  std::vector<std::pair<std::string, std::string>> labels;
  int64_t time_us = -1;  // -1: from a time label (time=, commit_time=, date=), else the newest file mtime
  bool append = false;             // may add to a run from another source (RunSpec::append)
  std::string content_digest;      // uploads: RunSpec::content_digest
  // Asked between files; returning true stops the ingest after the file in hand (the rest of the run is
  // left for a later ingest, which skips what is already stored). Optional.
  std::function<bool()> should_stop;
  SourceLimits source_limits;      // expansion caps and spool folder for Ingest(path, …)
  // Read, sniff and parse the next small files on a second thread while this one stores (when the machine
  // has more than one core). Off: one thread, each file read in turn (tests that act between a file's steps).
  bool read_ahead = true;
};

// The key under which counts by verdict name (IngestSummary::FilesByVerdictWithRereads, the IngestJob message's
// files_by_verdict) carry the files read again to rebuild their module; not a verdict.
inline constexpr std::string_view kFilesRereadKey = "reread";

struct IngestSummary {
  std::string run_name;
  int64_t run_id = 0;
  // Files by FileVerdictName: the names are what the CLI and the IngestJob message print; Count() adds one.
  std::map<std::string, int64_t> files_by_verdict;
  std::map<std::string, int64_t> files_by_kind;     // per FileKindName, for files read this time
  int64_t files = 0;
  int64_t bytes_read = 0;     // content bytes of files parsed this time
  int64_t rows = 0;
  int64_t issues = 0;
  double seconds = 0;
  struct FileError {
    std::string path;
    std::string reason;
  };
  std::vector<FileError> errors;  // every file with verdict kError
  bool interrupted = false;       // should_stop() ended the ingest before every file was visited
  int64_t files_reread = 0;       // unchanged files read again because a file of their module was replaced
                                  // (the module is rebuilt from all its files; not in files_by_verdict)

  void Count(FileVerdict verdict) { ++files_by_verdict[std::string(FileVerdictName(verdict))]; }
  // The files counted with `verdict`.
  int64_t Counted(FileVerdict verdict) const {
    auto it = files_by_verdict.find(std::string(FileVerdictName(verdict)));
    return it == files_by_verdict.end() ? 0 : it->second;
  }
  // files_by_verdict, and files_reread (when any) under kFilesRereadKey: the counts the IngestJob message
  // carries and the CLI prints.
  std::map<std::string, int64_t> FilesByVerdictWithRereads() const {
    std::map<std::string, int64_t> counts = files_by_verdict;
    if (files_reread > 0) counts[std::string(kFilesRereadKey)] = files_reread;
    return counts;
  }
};

struct IngestProgress {
  int64_t files_done = 0;
  int64_t bytes_done = 0;
  const std::string* current_path = nullptr;
};

class DumpIngester {
 public:
  explicit DumpIngester(IngestTarget* target) : target_(target) {}

  // Opens `path` with DumpSource::Open(path, options.source_limits) and ingests it as below.
  // `progress` (optional) is called after each file.
  StatusOr<IngestSummary> Ingest(const std::string& path, const IngestOptions& options,
                                 const std::function<void(const IngestProgress&)>& progress = {});
  // Ingests an opened source (e.g. DumpSource::OpenBeneath()); `source_path` is what the run records as its
  // source_path (made absolute) when options.source_description is empty, and names the source in errors.
  // An invalid run name (explicit or default: ValidateRunName()) is returned before the target is touched.
  StatusOr<IngestSummary> Ingest(DumpSource& source, const std::string& source_path, const IngestOptions& options,
                                 const std::function<void(const IngestProgress&)>& progress = {});

 private:
  IngestTarget* target_;
};

// Run times lie in 1970-01-01T00:00:00Z .. 2200-01-01T00:00:00Z (Unix µs, both ends included): a time past
// the upper end would sort its run newest forever, one before 1970 is a typo or a lost clock.
inline constexpr int64_t kMinRunTimeUs = 0;
inline constexpr int64_t kMaxRunTimeUs = int64_t{7258118400} * 1000000;
inline constexpr bool InRunTimeRange(int64_t time_us) { return time_us >= kMinRunTimeUs && time_us <= kMaxRunTimeUs; }

// Parses "2026-11-22", "2026-11-22T13:05:00Z", "2026-11-22 13:05:00" or Unix seconds into Unix µs; a time
// that does not read, or one outside the range above (CheckRunTimeUs), is kInvalidArgument quoting `text`.
[[nodiscard]] StatusOr<int64_t> ParseTimeToUs(const std::string& text);
// OK for a run time in the range above, else kInvalidArgument naming `shown` (how the caller got the time).
[[nodiscard]] Status CheckRunTimeUs(int64_t time_us, const std::string& shown);
// The run time the labels give when --time does not (README): the value of the first label keyed time,
// run_time, commit_time, date or timestamp, read by ParseTimeToUs (so in range); -1 when there is none;
// kInvalidArgument naming the label when its value does not read.
[[nodiscard]] StatusOr<int64_t> RunTimeFromLabels(const std::vector<std::pair<std::string, std::string>>& labels);

}  // namespace xladb::ingest

#endif  // XLADB_INGEST_DUMP_INGESTER_H_
