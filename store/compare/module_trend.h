// PeakMemoryTrend: one module across runs, following its identity (store/compare/module_match.h).
//
// Points are module_memory rows, grouped by identity (name, stage, folder, entry signature): a jit name
// traced with other shapes is another series. Within a series, runs oldest first; each point's change
// compares it with the instance of the previous run it is matched with (module_matches), never with
// another instance of the same name.
//
// Contract: read-only statements on the caller's connection, one thread at a time per connection. Errors
// come back as Status: kInvalidArgument for an empty module, a bad pattern or an unknown metric; kNotFound
// when no point matches, with a message that says why (no such module; or only at stages without a buffer
// assignment; or no run passes the filters). No exceptions escape.
#ifndef XLADB_STORE_COMPARE_MODULE_TREND_H_
#define XLADB_STORE_COMPARE_MODULE_TREND_H_

#include <cstdint>
#include <optional>
#include <string>
#include <unordered_map>
#include <vector>

#include "base/status.h"
#include "store/backend/database.h"
#include "store/query/statement_text.h"

namespace xladb::store {

struct TrendQuery {
  std::string module;                 // exact name, or a GLOB pattern when it contains * ? [
  std::string metric = "peak_bytes";  // a kModuleMetrics name (store/facts/module_metrics.h)
  int64_t last_n = -1;                // only the newest N runs that have a point (returned oldest first); -1: all
  Labels labels;                      // runs must carry these labels
  std::string stage;                  // "" = any stage with a buffer assignment
  std::optional<std::string> folder;  // only modules in this folder of their run
  int64_t xla_module_id = -1;         // only instances with this module_<ID> (-1 = any)
  std::string fingerprint;            // only instances of this program ("" = any)
  std::string identity_key;           // only this identity, e.g. one compile's in a named run ("" = any)
  int64_t since_us = -1;              // run_time_us >= since_us when >= 0
  int64_t until_us = -1;              // run_time_us < until_us when >= 0
};

struct TrendPoint {
  std::string run_name;
  int64_t run_time_us = 0;
  std::string module_name;
  int64_t xla_module_id = -1;
  std::string stage, folder, entry_signature, identity_key;
  std::string entry_sharding;         // ENTRY shardings in the identity ("" = unsharded)
  std::string fingerprint;
  int64_t value = 0;                  // the requested metric
  int64_t peak_bytes = -1, total_bytes = -1, temp_bytes = -1, live_peak_padded_bytes = -1;
  bool has_change = false;            // matched with an instance of the series' previous run
  int64_t change = 0;                 // value minus that instance's value
  std::string matched_by;             // identity, fingerprint or order ("" = no match)
};

// Points by series (module name, stage, folder, entry signature, entry sharding: an identity), then run time
// oldest first, then xla_module_id.
StatusOr<std::vector<TrendPoint>> PeakMemoryTrend(Database& db, const TrendQuery& query);

// A run's modules over the runs before it, for sparklines: the last `runs` runs up to and including `run_name`
// (in run-time order, ties by run_id), and for each identity of `run_name` its `metric` in each of them, oldest
// first (-1 where the identity is absent or has no figure; the largest instance where a run compiles it more
// than once). kNotFound for an unknown run, kInvalidArgument for an unknown metric or runs < 1.
struct RecentValues {
  std::vector<std::string> runs;                                     // oldest first; the last is `run_name`
  std::unordered_map<std::string, std::vector<int64_t>> by_identity; // identity_key -> one value per run
};
StatusOr<RecentValues> RecentIdentityValues(Database& db, const std::string& run_name, const std::string& metric,
                                            int64_t runs);

}  // namespace xladb::store

#endif  // XLADB_STORE_COMPARE_MODULE_TREND_H_
