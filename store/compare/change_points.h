// ListChanges: the change points of a run history, "since when did this module need more memory?".
//
// Runs are those that carry every requested label, in run-time order (ties by run_id, the order they were
// stored). A change point is a place where a series' metric differs from its value in the previous run that
// has the series, at two levels:
//   * identity: a module identity (modules.identity_key: name, stage, folder, entry signature and sharding,
//     store/compare/module_match.h). Where a run compiles one identity more than once, its value in that run is the
//     largest instance's (`compiles` says how many there were), so a retrace alone is not a memory change;
//   * name: a jit name (name, stage, folder) and its largest value over all its compiles in the run (the `*_max`
//     of the gate's roll-up by jit name, store/compare/name_rollup.h, never the sum). A name-level change is listed only
//     where no identity of that name changed the same metric at the same run: it is a change the identities
//     cannot show, such as a function recompiled with other shapes (a reshape).
// A change passes when |delta| >= min_bytes and |delta| >= min_percent of `before` (a change from 0 always
// passes the percent). Its previous run may lie before the window (--since, --last): only where the change
// is reported is limited.
//
// The largest changes (by |delta|; `attribute` of them, or all) are explained with the gate's engine
// (store/compare/buffer_attribution.h): the two modules that hold the value on each side, buffers at the peak for a
// peak metric and every value for a total.
//
// Cost: one read of the module_memory rows of the window's runs and of the run before it, and, for a series
// absent from that run, one indexed read of its earlier rows (batched). Nothing is re-matched pair by pair.
//
// Contract: read-only statements on the caller's connection, one thread at a time per connection. Errors
// come back as Status: kInvalidArgument for an unknown metric, a bad pattern or count, both since_run and
// last_n, or a since_run that names no run; kNotFound when `module` names no module of any run. An empty
// history (no run carries the labels, one run, a module in one run only) is an answer with a note that says
// so, not an error. No exceptions escape.
#ifndef XLADB_STORE_COMPARE_CHANGE_POINTS_H_
#define XLADB_STORE_COMPARE_CHANGE_POINTS_H_

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "base/status.h"
#include "store/compare/buffer_attribution.h"
#include "store/backend/database.h"
#include "store/query/statement_text.h"

namespace xladb::store {

struct ChangeQuery {
  std::string module;                // "" = every module; an exact name, or a GLOB when it holds * ? [
  Labels labels;                     // only runs with every one of these labels
  std::string since_run;             // only changes at runs after this run ("" = no bound)
  int64_t last_n = -1;               // only changes at the newest N runs (-1 = no bound); not with since_run
  std::vector<std::string> metrics;  // kModuleMetrics names; empty: kDefaultGateMetrics
  int64_t min_bytes = 0;             // |delta| at least this
  double min_percent = 0;            // |delta| at least this percent of `before`
  int64_t attribute = 5;             // change points explained, largest |delta| first (-1 = all, 0 = none)
  int64_t max_attribution = 10;      // buffer changes listed per explained change point (-1 = all)
  int64_t first_above_bytes = 0;     // > 0: also answer, per jit name and metric, since when it exceeds this
  int64_t limit = -1;                // at most this many change points, after ordering (-1 = all)
};

struct ChangePoint {
  enum class Level { kIdentity, kName };
  Level level = Level::kIdentity;
  std::string run, previous_run;
  int64_t run_time_us = 0, previous_run_time_us = 0;
  std::string module, stage, folder;
  // The module holding the value on each side (the largest instance of the identity or the name).
  std::string entry_signature, previous_entry_signature;
  std::string entry_sharding, previous_entry_sharding;
  int64_t xla_module_id = -1, previous_xla_module_id = -1;
  int64_t module_id = 0, previous_module_id = 0;  // the store's module_ids
  int64_t compiles = 0, previous_compiles = 0;    // instances of the identity (or name) in each run
  std::string metric;
  int64_t before = 0, after = 0;
  std::optional<Attribution> attribution;         // the largest `attribute` change points
  std::string peak_metric;                        // whose peak times the attribution carries: the padded live
                                                  // peak's for live_peak_padded_bytes, else XLA's ("peak_bytes")

  int64_t delta() const { return after - before; }
};

// Since when one jit name's metric has exceeded a size.
struct FirstAbove {
  std::string module, stage, folder, metric;
  int64_t bytes = 0;                     // the size asked about
  std::string first_run;                 // the first run of the window whose value exceeds it
  int64_t first_value = 0;
  std::string since_run;                 // the first run of the latest unbroken stretch above it; "" when the
  int64_t since_value = 0;               // latest run is at or below the size
  std::string latest_run;                // the series' latest run, and its value
  int64_t latest_value = 0;
};

struct ChangeHistory {
  std::vector<std::string> metrics;      // the metrics compared, in the order asked
  int64_t runs = 0;                      // runs in the window (every run that carries the labels by default)
  std::string first_run, last_run;       // the window's oldest and newest ("" when empty)
  int64_t change_count = 0;              // change points found, before `limit`
  // With a module: oldest run first, then largest |delta|. Without: largest |delta| first, then newest run.
  std::vector<ChangePoint> changes;
  std::vector<FirstAbove> first_above;   // names whose metric ever exceeded first_above_bytes in the window
  std::vector<std::string> notes;        // in words: why the answer is empty, equal run times, …
};

[[nodiscard]] StatusOr<ChangeHistory> ListChanges(Database& db, const ChangeQuery& query);

}  // namespace xladb::store

#endif  // XLADB_STORE_COMPARE_CHANGE_POINTS_H_
