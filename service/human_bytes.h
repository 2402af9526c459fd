// Byte counts for people: "+64.0 MiB", "-512 B", in binary units, exact under 1 KiB; percentages of change;
// the jit-name roll-up line; a signature with its sharding. The one spelling that the CLI's tables and
// reports and the HTML pages share.
// Pure functions; thread-safe.
#ifndef XLADB_SERVICE_HUMAN_BYTES_H_
#define XLADB_SERVICE_HUMAN_BYTES_H_

#include <cstdint>
#include <string>

namespace xladb::service {

// `sign` writes a '+' before positive counts (for deltas).
std::string HumanBytes(int64_t bytes, bool sign = false);

// A change in percent of `baseline`, signed, with at least two significant digits: "+0.019%", "-75%",
// "+1.5%", "0%"; "new" when the baseline is 0 or unknown and the delta is not 0.
std::string PercentChange(int64_t baseline, int64_t delta);

// The roll-up of one jit name in a line: "jit__x: 8 → 4 compiles, largest total_bytes 41.5 MiB → 10.4 MiB
// (-75%)"; maxima < 0 are unknown ("–"). `name` goes in as given (callers escape it for their medium).
std::string RollupLine(const std::string& name, int64_t baseline_compiles, int64_t current_compiles,
                       const std::string& metric, int64_t baseline_max, int64_t current_max);

// A module's headroom against its memory budget (store/compare/memory_budget.h): "total_bytes 10.0 KiB of 8.0 KiB
// (125%): over budget", "live_peak_padded_bytes 14.1 GiB of 15.5 GiB (91%): near the budget" (warn), or no
// suffix; "total_bytes unknown of 8.0 KiB" when the module has no figure (current < 0).
std::string BudgetHeadroom(const std::string& metric, int64_t current, int64_t max_bytes, double percent, bool over,
                           bool warn);

// An entry signature with its ENTRY sharding when it has one (store/facts/module_facts.h): "(f32[8]) -> f32[8]
// sharding ({replicated}) -> {replicated}"; the signature alone when `sharding` is "".
std::string SignatureWithSharding(const std::string& signature, const std::string& sharding);

}  // namespace xladb::service

#endif  // XLADB_SERVICE_HUMAN_BYTES_H_
