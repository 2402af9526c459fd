// The gate's config file (`xladb check --config FILE`): per-module tolerances, ignored modules and
// regressions accepted in review, in TOML. docs/gate-config.md has a full commented example:
//
//   metrics = ["total_bytes", "live_peak_padded_bytes"]   # store/facts/module_metrics.h names
//   max_growth_bytes = 0                                   # integer >= 0
//   max_growth_percent = 0.0                               # number >= 0
//   fail_on_retrace_growth = false
//   on_added = "report"                                    # report | fail | inconclusive
//   on_removed = "report"                                  # report | fail | inconclusive
//   on_reshaped = "report"                                 # report | judge | fail | inconclusive
//   ignore = ["jit_debug_*"]                               # GLOB patterns
//   [[module]]                                             # the first matching entry applies
//   pattern = "jit_train_step*"                            # required
//   max_growth_bytes = 1048576                             # at least one of the two
//   max_growth_percent = 1.5
//   warn_percent = 90                                      # budgets: warn at this share (default 90)
//   [[budget]]                                             # memory budgets; the first matching one applies
//   pattern = "jit_train_step*"                            # optional (default: every module)
//   metric = "live_peak_padded_bytes"                      # required
//   max_bytes = "15.5GiB"                                  # required: bytes, or a size with a unit
//   [[accept]]
//   pattern = "jit_fft"                                    # required
//   metric = "total_bytes"                                 # optional
//   up_to_bytes = 123456789                                # optional, > 0
//   reason = "PR #1234: larger FFT plan"                   # required
//
// Errors are values: kInvalidArgument naming the file, the key (`accept[2].reason`) and its line, for TOML
// syntax errors, unknown keys, wrong types, negative numbers, unknown metrics, unknown policies, bad patterns
// and missing required values; kNotFound / kIoError for a file that cannot be read. Thread-compatible (no
// shared state).
#ifndef XLADB_CLI_GATE_CONFIG_H_
#define XLADB_CLI_GATE_CONFIG_H_

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "base/status.h"
#include "xladb/v1/xladb.pb.h"

namespace xladb::cli {

// A size as a config or flag spells it: an integer number of bytes ("16106127360"), or a number with a unit,
// binary (KiB, MiB, GiB, TiB) or decimal (B, KB, MB, GB, TB), a space allowed between: "15.5GiB", "512 MiB".
// nullopt for anything else, a negative size or one past int64.
std::optional<int64_t> ParseByteSize(std::string_view text);

// Fills metrics, limit, module_limits, ignore, accepted, fail_on_retrace_growth, the on_* policies, budgets
// and warn_percent of `request` from FILE.
[[nodiscard]] Status LoadGateConfig(const std::string& path, v1::CheckRunRequest* request);
// The same from text; `source_name` names it in messages.
[[nodiscard]] Status ParseGateConfig(std::string_view toml_text, const std::string& source_name,
                                     v1::CheckRunRequest* request);

}  // namespace xladb::cli

#endif  // XLADB_CLI_GATE_CONFIG_H_
