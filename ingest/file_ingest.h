// IngestFile: one file of a run through the ingest's steps, for DumpIngester (dump_ingester.h), whose
// contract it keeps. Internal to ingest/.
//
// The steps, in order; each hands the file on to the next or ends it with its verdict (file_verdict.h):
//   1. hash: read the file once, hashing it (XXH3-128) and keeping its head. An unreadable file is an error,
//      recorded under a hash of the reason, so the same failure again is unchanged and a fixed file is read.
//   2. skip unchanged: the target holds this content at this path already (IngestTarget::CheckFile).
//   3. sniff: what the head says the file is. The run's metadata file (run_metadata_file.h) gives the run its
//      labels and time; a kind without a parser is not_ingested, or an error where its name claims one.
//   4. parse: line by line into the target's sink, on a second thread for a big file, hashing again (a file
//      read ahead, file_passes.h: both reads were done on the walk's thread, and the records come from the
//      first read's bytes, maybe parsed there already).
//   5. verdict: ingested when the parse succeeded, the content did not change between the two passes and the
//      target committed the rows; else an error, its rows rolled back (IngestTarget::AbortFile).
//
// Contract
//   * A failure to record a verdict at all (the target is failing) is kept in RunIngestState::fatal, and the
//     caller stops the run; every other failure is the file's own verdict, counted in the summary.
//   * In the second pass (`reread`: files of modules rebuilt because a sibling was replaced) a file read
//     again is counted in files_reread, not by its verdict. Counting `files` is the caller's.
//   * Single-threaded, like the ingester (a big file's parser thread ends before IngestFile returns).
#ifndef XLADB_INGEST_FILE_INGEST_H_
#define XLADB_INGEST_FILE_INGEST_H_

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>

#include "base/status.h"
#include "ingest/dump_ingester.h"
#include "ingest/file_passes.h"
#include "ingest/records/ingest_target.h"
#include "ingest/source/dump_source.h"

namespace xladb::ingest {

// What the files of one run share: where they go, what the run has counted so far, and whether it must stop.
struct RunIngestState {
  IngestTarget* target = nullptr;
  const IngestOptions* options = nullptr;
  int64_t run_id = 0;
  bool run_time_given = false;  // the ingest's options or labels gave the run its time (RunSpec::time_us >= 0)
  std::string wrapper_folder;   // DumpSource::WrapperFolderName(): not part of a module's folder
  std::function<void(const IngestProgress&)> on_progress;  // optional, after each file parsed

  bool reread = false;              // the second pass
  IngestSummary summary;
  IngestProgress progress;
  Status fatal;                     // a verdict that could not be recorded: the run ends
  bool time_from_metadata = false;  // the run's metadata file set the run's time
  // The hash pass's buffer, kHashReadChunk bytes, allocated once per run: a zero-filled 1 MiB vector per file
  // was the largest cost of a folder of many small files (bad-input catalog, 100,000 files).
  std::unique_ptr<char[]> read_buffer = std::make_unique_for_overwrite<char[]>(kHashReadChunk);
  // Pipelined ingest (dump_ingester.cc): set after each stored-content check, true unless the file was
  // unchanged, so the walk's thread parses ahead only while files are new (a rerun over a stored run mostly
  // finds them unchanged, and parsing them would be wasted). nullptr when the ingest is not pipelined.
  std::atomic<bool>* parse_ahead = nullptr;
};

// Takes `entry` through the steps above, into run.target, counting it in run.summary.
void IngestFile(RunIngestState& run, DumpEntry& entry);
// The same for a file the walk's thread read ahead (file_passes.h): steps 1 and 4 were done there, the rest
// runs here, on the thread that owns the target.
void IngestFile(RunIngestState& run, ReadAheadFile& ahead);

}  // namespace xladb::ingest

#endif  // XLADB_INGEST_FILE_INGEST_H_
