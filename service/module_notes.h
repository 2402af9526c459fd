// The notes that say, in words, which compile a module name resolved to and whether XLA's printed peak and the
// padded live peak differ: the same sentences go to stderr (`xladb top`, `trend`, `report --module`, through
// the responses' `notes`) and onto the module page, so the two never disagree.
//
//   resolution  "jit_f: 37 compiles in run R; showing #195, the largest by total_bytes; choose with --xla-id"
//               (only when several compiles matched and none was chosen)
//   peak gap    "XLA's printed peak (5.3 GiB at time 5) is 45% below the padded live peak (9.6 GiB at time 11);
//               XLA counted all-gather-start.1{1} (c128[…], 4.2 GiB) as 16 bytes" (only when the two differ by
//               more than 10% of the padded peak, store::TopBuffersAnswer::peaks_differ)
//
// Pure functions; thread-safe.
#ifndef XLADB_SERVICE_MODULE_NOTES_H_
#define XLADB_SERVICE_MODULE_NOTES_H_

#include <string>
#include <vector>

#include "store/query/queries.h"

namespace xladb::service {

// "" when the answer did not pick among several compiles.
[[nodiscard]] std::string ResolutionNote(const store::TopBuffersAnswer& answer, const std::string& run);
// "" when the peaks do not differ by more than 10%.
[[nodiscard]] std::string PeakGapNote(const store::TopBuffersAnswer& answer);
// The non-empty notes of both, resolution first.
[[nodiscard]] std::vector<std::string> ModuleNotes(const store::TopBuffersAnswer& answer, const std::string& run);

}  // namespace xladb::service

#endif  // XLADB_SERVICE_MODULE_NOTES_H_
