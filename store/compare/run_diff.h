// DiffRuns: what changed between two runs, module by matched module (store/compare/module_match.h), and for each
// changed module the buffers and source lines that changed (store/compare/buffer_attribution.h).
//
// Contract: read-only statements on the caller's connection, one thread at a time per connection. Errors
// come back as Status: kNotFound names an unknown run, kInvalidArgument a bad pattern, kIoError a database
// failure. No exceptions escape.
#ifndef XLADB_STORE_COMPARE_RUN_DIFF_H_
#define XLADB_STORE_COMPARE_RUN_DIFF_H_

#include <cstdint>
#include <string>
#include <vector>

#include "base/status.h"
#include "store/compare/buffer_attribution.h"
#include "store/backend/database.h"
#include "store/compare/name_rollup.h"

namespace xladb::store {

struct ModuleDiff {
  enum class Change { kAdded, kRemoved, kChanged, kUnchanged };
  Change change = Change::kUnchanged;
  std::string module_name, stage, folder, entry_signature;  // entry_signature: run_b's when present
  std::string entry_signature_a;             // run_a's ("" when added); differs from run_b's when reshaped
  std::string matched_by;                    // identity, fingerprint, order or name (a reshaped pair: same name,
                                             // stage and folder, another signature); "" for added and removed
  int64_t xla_module_id_a = -1, xla_module_id_b = -1;
  std::string fingerprint_a, fingerprint_b;
  int64_t peak_a = -1, peak_b = -1;          // -1 = absent or unknown
  int64_t total_a = -1, total_b = -1;
  int64_t temp_a = -1, temp_b = -1;
  int64_t live_peak_padded_a = -1, live_peak_padded_b = -1;
  std::vector<BufferChange> buffers;         // every value compared; largest |change| first; at most max_buffers
  int64_t buffer_changes = 0;                // buffer changes found before the max_buffers cut
  std::vector<SourceLineChange> by_source;   // all buffer changes by source line
};

struct DiffQuery {
  std::string run_a, run_b;
  std::string module;            // exact name or GLOB pattern; "" = all modules
  bool include_unchanged = false;
  bool buffer_level = true;
  int64_t max_buffers = 50;      // per module; -1 = all
};

struct RunDiff {
  std::vector<ModuleDiff> modules;  // changed (by largest |change| of peak, padded live peak, total, temp), then
                                    // added, removed, unchanged
  int64_t added = 0, removed = 0, changed = 0, unchanged = 0;
  std::vector<NameRollup> by_name;  // over peak, total, temp and padded live peak; changed rows (all with
                                    // include_unchanged), largest change first
};

// Pairs as LoadMatchedRuns does (identity, then reshaped pairs). A matched pair is kChanged when one of
// peak, total, temp or padded live peak differs, when its fingerprints
// (of the same source) differ, or when a buffer differs; buffers are not read for a pair of the same program
// with the same figures.
StatusOr<RunDiff> DiffRuns(Database& db, const DiffQuery& query);

}  // namespace xladb::store

#endif  // XLADB_STORE_COMPARE_RUN_DIFF_H_
