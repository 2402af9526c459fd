// The run metadata file: `xladb-run.toml` at the root of a run (a folder, an archive or an upload), written by
// the CI job that makes the artifact, so a run that arrives in a watched folder carries its labels and time:
//
//   time = "2026-11-02T06:00:00Z"      # optional: Unix seconds, YYYY-MM-DD or YYYY-MM-DDTHH:MM:SSZ
//   [labels]                           # optional: string values (numbers and booleans are written as text)
//   branch = "main"
//   commit = "1a2b3c4d"
//
// The ingester (dump_ingester.h) reads it as it walks the run, applies it to the run (IngestTarget::
// ApplyRunMetadata; labels and --time given to the ingest itself win) and records the file as not ingested,
// saying so; a file that does not parse is that file's error verdict with its line, and the run goes on.
// Pure functions; thread-safe.
#ifndef XLADB_INGEST_RUN_METADATA_FILE_H_
#define XLADB_INGEST_RUN_METADATA_FILE_H_

#include <cstdint>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "base/status.h"

namespace xladb::ingest {

inline constexpr std::string_view kRunMetadataFileName = "xladb-run.toml";
inline constexpr size_t kMaxRunMetadataBytes = 64 * 1024;

struct RunMetadata {
  std::vector<std::pair<std::string, std::string>> labels;  // in file order; each passes ValidateRunLabel()
  int64_t time_us = -1;                                     // -1: not given
  // Labels that ValidateRunLabel() refuses are left out of `labels`, one message each ("line 3: label
  // 'k=v': why"): the run takes the file's other labels and its time, and the file's verdict is an error.
  std::vector<std::string> refused_labels;
};

// kDataLoss naming the line and the reason for text that is not such a file (bad TOML, an unknown key, a
// table as a label value, a time that does not read or lies outside 1970 .. 2200: ParseTimeToUs()).
StatusOr<RunMetadata> ParseRunMetadata(std::string_view text);

}  // namespace xladb::ingest

#endif  // XLADB_INGEST_RUN_METADATA_FILE_H_
