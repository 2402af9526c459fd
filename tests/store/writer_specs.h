// What tests that drive a RunWriter directly (BeginRun, BeginFile, RecordFileWithoutRows) give it: a run by
// name, a file of a kind with a content hash.
#ifndef XLADB_TESTS_STORE_WRITER_SPECS_H_
#define XLADB_TESTS_STORE_WRITER_SPECS_H_

#include <cstdint>
#include <string>
#include <utility>

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

}  // namespace xladb::testing

#endif  // XLADB_TESTS_STORE_WRITER_SPECS_H_
