// Module identity across runs: which module of one run is which module of another.
//
// A module's identity is its modules.identity_key (name, stage, entry signature, folder; see
// store/facts/module_facts.h). Two runs' modules of one key pair up as the view module_matches (schema.sql) says:
// 'identity' when the key is unique on both sides, else the same program fingerprint first ('fingerprint'),
// then the rest in the order of xla_module_id ('order'). MatchModules runs that view's own SQL restricted to
// the two runs, so the analysts' view and xladb's answers cannot disagree.
//
// Only modules with a buffer assignment (module_memory rows) take part. trend, diff and the gate use this and
// nothing else to pair modules.
//
// Contract: read-only statements on the caller's connection, one thread at a time per connection; errors
// come back as Status (kIoError for database failures). No exceptions escape.
#ifndef XLADB_STORE_COMPARE_MODULE_MATCH_H_
#define XLADB_STORE_COMPARE_MODULE_MATCH_H_

#include <cstdint>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "base/status.h"
#include "store/backend/database.h"
#include "store/facts/module_metrics.h"
#include "store/query/statement_text.h"

namespace xladb::store {

// A module_memory row: a module with a buffer assignment, and its metrics (ModuleMetricValues; metric(name)).
struct ModuleRow : ModuleMetricValues {
  int64_t module_id = 0;
  int64_t run_id = 0;
  std::string run_name;
  int64_t run_time_us = 0;
  std::string name, stage, folder, backend;
  std::string entry_signature, identity_key;
  std::string entry_sharding;                   // ENTRY shardings in the identity ("" = unsharded)
  std::string fingerprint, fingerprint_source;  // "" when unknown
  int64_t xla_module_id = -1;
  int64_t peak_time = -1, live_peak_padded_time = -1, schedule_length = -1;
};

// Equal fingerprints of the same source: the same program. nullopt-like -1 when they cannot be compared.
// Returns 1 (same program), 0 (changed program) or -1 (not comparable).
int SameProgram(const ModuleRow& a, const ModuleRow& b);

// The module_memory rows (alias mm, joined to modules as mo) that satisfy `where`, ordered by run time, run,
// name, stage, folder, xla_module_id.
StatusOr<std::vector<ModuleRow>> LoadModuleRows(Database& db, const Conditions& where);

// The module_memory rows of one run, in that order.
StatusOr<std::vector<ModuleRow>> LoadRunModules(Database& db, int64_t run_id);

// One pair, or a module without a match (the other id 0).
struct ModulePair {
  int64_t baseline_module_id = 0;  // 0: the module is only in the current run (added)
  int64_t current_module_id = 0;   // 0: only in the baseline (removed)
  std::string matched_by;          // "identity", "fingerprint", "order"; "name" (LoadMatchedRuns' reshaped
                                   // pairs); "" when unmatched
};

// Pairs the modules of two runs. With `identity_key`, only the modules of that key. Matched pairs first,
// then unmatched baseline modules, then unmatched current ones, each by module_id.
StatusOr<std::vector<ModulePair>> MatchModules(Database& db, int64_t baseline_run_id, int64_t current_run_id,
                                               const std::string& identity_key = "");

// Two runs' modules and their pairing: what comparing the runs module by module (diff, the gate) reads.
// Movable, not copyable (rows are looked up by pointer into the vectors).
class MatchedRuns {
 public:
  MatchedRuns() = default;
  MatchedRuns(MatchedRuns&&) = default;
  MatchedRuns& operator=(MatchedRuns&&) = default;
  MatchedRuns(const MatchedRuns&) = delete;
  MatchedRuns& operator=(const MatchedRuns&) = delete;

  std::vector<ModuleRow> baseline, current;  // LoadRunModules of each run
  std::vector<ModulePair> pairs;             // MatchModules of the two, then the reshaped pairs (matched_by
                                             // "name", store/compare/reshaped_pairs.h) of what it left unmatched

  // The row of a module of either run; nullptr for 0 (the absent side of a pair).
  const ModuleRow* Row(int64_t module_id) const;

 private:
  friend // Identity matching (MatchModules), then the leftovers of one (name, stage, folder) on both sides paired as
// reshaped (store/compare/reshaped_pairs.h). Pairs in the order: identity-matched, reshaped, removed, added.
StatusOr<MatchedRuns> LoadMatchedRuns(Database& db, int64_t baseline_run_id, int64_t current_run_id);
  std::unordered_map<int64_t, const ModuleRow*> by_id_;
};

// Identity matching (MatchModules), then the leftovers of one (name, stage, folder) on both sides paired as
// reshaped (store/compare/reshaped_pairs.h). Pairs in the order: identity-matched, reshaped, removed, added.
StatusOr<MatchedRuns> LoadMatchedRuns(Database& db, int64_t baseline_run_id, int64_t current_run_id);

}  // namespace xladb::store

#endif  // XLADB_STORE_COMPARE_MODULE_MATCH_H_
