// What tests that drive a RunWriter directly (BeginRun, BeginFile, RecordFileWithoutRows) give it: a run by
// name, a file of a kind with a content hash.
#ifndef XLADB_TESTS_STORE_WRITER_SPECS_H_
#define XLADB_TESTS_STORE_WRITER_SPECS_H_

#include <cstdint>
#include <string>
#include <utility>

#include "base/status.h"
#include "ingest/records/ingest_target.h"

namespace xladb::testing {

inline ingest::RunSpec RunNamed(std::string name) {
  ingest::RunSpec spec;
  spec.name = std::move(name);
  return spec;
}

// `kind`: a FileKindName; no module (set has_module and module for a file that writes one).
inline ingest::FileSpec FileOf(int64_t run_id, std::string path, std::string kind, std::string content_hash) {
  ingest::FileSpec spec;
  spec.run_id = run_id;
  spec.path = std::move(path);
  spec.kind = std::move(kind);
  spec.content_hash = std::move(content_hash);
  return spec;
}

// FileOf a file that writes module `name` (number 1, stage after_optimizations).
inline ingest::FileSpec ModuleFileOf(int64_t run_id, std::string path, std::string kind, std::string content_hash,
                                     std::string name = "jit_f") {
  ingest::FileSpec spec = FileOf(run_id, std::move(path), std::move(kind), std::move(content_hash));
  spec.has_module = true;
  spec.module.xla_module_id = 1;
  spec.module.name = std::move(name);
  spec.module.stage = "after_optimizations";
  return spec;
}

// Commits the file `target` began last as ingested (one line read); a file it refuses is aborted with the
// commit's error as its reason. The commit's status (or the abort's, when that fails too).
inline Status CommitOrAbort(ingest::IngestTarget& target) {
  auto committed = target.CommitFile({ingest::FileVerdict::kIngested, "", 1, 0});
  if (committed.ok()) return Status::Ok();
  Status aborted = target.AbortFile({ingest::FileVerdict::kError, committed.status().message(), 1, 0});
  return aborted.ok() ? committed.status() : aborted;
}

}  // namespace xladb::testing

#endif  // XLADB_TESTS_STORE_WRITER_SPECS_H_
