// ResolveBaseline: the run a gate's baseline selector names (check_run.h, CheckOptions::baseline): a run name,
// `label:KEY=VALUE` (the newest other run with that label at or before the checked run's time), or `commit:SHA`
// (the newest other run labelled commit=SHA, else commit=<the one label value starting with SHA, 7+ characters>).
// FindCheckedRun: the run a check (or a run's recent values) is about, by its name. Internal to store/compare/.
//
// Contract: read-only statements on the caller's connection; a failed statement throws SqlError (the gate's
// entry point, CheckRun, catches it). kInvalidArgument for a malformed label: or commit: selector, kNotFound
// for a run name that names no run. A label: or commit: selector that finds no run is not an error: the
// answer's run_id is 0 and `missing` says why.
#ifndef XLADB_STORE_COMPARE_BASELINE_SELECTOR_H_
#define XLADB_STORE_COMPARE_BASELINE_SELECTOR_H_

#include <cstdint>
#include <string>

#include "base/status.h"
#include "store/backend/sql_connection.h"

namespace xladb::store {

// The run a check is about.
struct CheckedRun {
  int64_t run_id = 0;
  int64_t run_time_us = 0;
};

struct Baseline {
  int64_t run_id = 0;       // 0: none found
  std::string name;
  std::string selected_by;  // 'name', or the label: or commit: selector
  std::string missing;      // why none was found
};

// The run named `name`; kNotFound "run 'NAME' not found" when there is none.
[[nodiscard]] StatusOr<CheckedRun> FindCheckedRun(SqlConnection& sql, const std::string& name);

[[nodiscard]] StatusOr<Baseline> ResolveBaseline(SqlConnection& sql, const std::string& selector,
                                                 const CheckedRun& run);

}  // namespace xladb::store

#endif  // XLADB_STORE_COMPARE_BASELINE_SELECTOR_H_
