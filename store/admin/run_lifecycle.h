// Changing a run after its ingest: its labels, deleting it, and pruning old runs' detail.
//
//   * RelabelRun sets labels (replacing a key's value) and removes keys, in one transaction. The gate picks
//     baselines by label (`label:branch=main`), so labels must be changeable after a run is stored.
//   * DeleteRun removes every row of the run: its files and their issues, its modules and every row keyed by
//     them, its labels and its spill summary; then the interned texts (shapes, source files, long texts) no
//     other run uses any more. Nothing of another run is touched, so the database afterwards holds what it
//     would hold had the run never been ingested (tests/store/run_lifecycle_test.cc counts every table).
//
// Contract: read-write connection (Database opened read-write), one transaction per call, one thread at a
// time. kNotFound names an unknown run; kInvalidArgument a label ingest::ValidateRunLabel() refuses; kIoError
// a database failure (rolled back: a run is deleted whole or not at all). A writer that caches interned ids
// (store/write/run_writer.h) must not be used across a DeleteRun on its connection: make a new one. No exceptions
// escape.
#ifndef XLADB_STORE_ADMIN_RUN_LIFECYCLE_H_
#define XLADB_STORE_ADMIN_RUN_LIFECYCLE_H_

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "base/status.h"
#include "store/backend/database.h"

namespace xladb::store {

using LabelList = std::vector<std::pair<std::string, std::string>>;

Status RelabelRun(Database& db, const std::string& run, const LabelList& set, const std::vector<std::string>& remove);

struct DeletedRun {
  int64_t files = 0;
  int64_t modules = 0;
  int64_t rows = 0;  // all rows removed, the run's own rows and the interned texts no longer used
};

StatusOr<DeletedRun> DeleteRun(Database& db, const std::string& run);

// Retention: runs older than keep_detail_days (by run time) that carry none of keep_labels lose their value-,
// live-range- and instruction-level rows, and the interned texts only those used. Their module summaries,
// memory spaces, allocations, peak lists and spill figures stay, so module_memory, trends and the gate answer
// as before; runs.detail_pruned_at_us marks them (a pruned run takes no more files). Then the space is given
// back (incremental vacuum, or one VACUUM on a file made before version 5) and the WAL truncated.
struct PruneOptions {
  int64_t keep_detail_days = 0;
  LabelList keep_labels;     // a run with any of these (key, value) keeps its detail
  int64_t now_us = 0;        // the time the age is counted from
};

struct PrunedDetail {
  int64_t runs = 0;          // runs pruned now (already pruned ones are not counted)
  int64_t rows = 0;          // rows removed
  int64_t bytes_before = 0, bytes_after = 0;  // the database file (pages × page size)
};

StatusOr<PrunedDetail> PruneDetail(Database& db, const PruneOptions& options);

}  // namespace xladb::store

#endif  // XLADB_STORE_ADMIN_RUN_LIFECYCLE_H_
