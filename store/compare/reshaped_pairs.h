// Reshaped pairs: the modules identity matching (store/compare/module_match.h) left without a partner that share a
// jit name, stage and folder with a module left over on the other side. A function whose input shapes
// changed (`c128[21,9,80,80]` → `c128[21,9,40,40]`) gets a new entry signature, hence a new identity; pairing
// the leftovers by name shows it as one module that changed instead of one added and one removed.
//
// Within one (name, stage, folder), the most similar entry signatures pair first:
//   1. the same parameter count and the same dtypes, in order;
//   2. then the fewest differing dimensions (over parameters and outputs, position by position; a shape of
//      another rank counts every dimension of the longer one);
//   3. then the smallest difference in element counts (summed over parameters and outputs);
// ties in xla_module_id order (baseline, then current). Each module pairs at most once; the rest stay added
// or removed.
//
// Pure functions; thread-safe.
#ifndef XLADB_STORE_COMPARE_RESHAPED_PAIRS_H_
#define XLADB_STORE_COMPARE_RESHAPED_PAIRS_H_

#include <cstdint>
#include <string_view>
#include <utility>
#include <vector>

namespace xladb::store {

struct ModuleRow;

// How far two entry signatures are apart: smaller is more similar (compared as a tuple).
struct SignatureDistance {
  int mismatched_parameters = 0;  // 0: same parameter count and dtypes; 1: not
  int64_t differing_dimensions = 0;
  int64_t element_difference = 0;

  friend bool operator<(const SignatureDistance& a, const SignatureDistance& b) {
    if (a.mismatched_parameters != b.mismatched_parameters) return a.mismatched_parameters < b.mismatched_parameters;
    if (a.differing_dimensions != b.differing_dimensions) return a.differing_dimensions < b.differing_dimensions;
    return a.element_difference < b.element_difference;
  }
};

// The distance between two signatures as module_memory.entry_signature prints them
// (`(bf16[8,2048], f32[]) -> (f32[2], s32[])`); text that names no shape compares as no shapes.
[[nodiscard]] SignatureDistance EntrySignatureDistance(std::string_view a, std::string_view b);

// Pairs leftover modules of one run with leftovers of another (any order in; all of one name, stage and
// folder or not: rows of different (name, stage, folder) never pair). Returns (baseline, current) pairs.
[[nodiscard]] std::vector<std::pair<const ModuleRow*, const ModuleRow*>> PairReshaped(
    const std::vector<const ModuleRow*>& baseline_leftovers, const std::vector<const ModuleRow*>& current_leftovers);

}  // namespace xladb::store

#endif  // XLADB_STORE_COMPARE_RESHAPED_PAIRS_H_
