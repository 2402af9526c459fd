// EntrySharding: the shardings an ENTRY computation's parameters and ROOT carry in HLO module text (§7.3),
// the part of a module's identity that tells apart compiles of one jit name with the same shapes and other
// in_shardings / out_shardings.
//
// Printer: HloInstruction::PrintExtraAttributes (xla/hlo/ir/hlo_instruction.cc) prints `sharding={…}` after
// the operands, e.g. `%p = f32[8]{0} parameter(0), sharding={devices=[2]0,1}, metadata={…}` and
// `ROOT %t = (f32[4], f32[4]) tuple(…), sharding={{replicated}, {maximal device=0}}`. Every era prints it
// the same way; the value is kept as printed (braces included), since XLA's HloSharding::ToString is the
// only spelling of it.
//
// Text(): "(<parameter 0>, <parameter 1>, …) -> <ROOT>" with each instruction's sharding value, or `none`
// for one printed without it: "(none, {devices=[2]0,1}) -> {replicated}". "" when no parameter and not the
// ROOT carries one (every non-SPMD module), so identity keys of unsharded modules stay as they were.
//
// Contract: feed it the ENTRY computation's instructions, in any order; instructions that are neither a
// parameter nor the ROOT are ignored. Parameters are ordered by the number in `parameter(N)`. Numbers that
// are not 0..N-1 (a gap: text XLA did not print) are written with each number, "(0: none, 7: {replicated})",
// so the text's length is bounded by the input's. Never fails. One thread per instance; pieces are read during
// Add only.
#ifndef XLADB_INGEST_TEXT_ENTRY_SHARDING_H_
#define XLADB_INGEST_TEXT_ENTRY_SHARDING_H_

#include <cstdint>
#include <map>
#include <optional>
#include <string>

#include "ingest/text/hlo_instruction_text.h"

namespace xladb::ingest {

class EntrySharding {
 public:
  void Add(const HloInstructionPieces& instruction);
  [[nodiscard]] std::string Text() const;

 private:
  std::map<int64_t, std::string> parameters_;  // by parameter number; "" where none is printed
  std::optional<std::string> root_;            // the ROOT's, "" where none is printed
  bool any_ = false;                           // some parameter or the ROOT has one
};

}  // namespace xladb::ingest

#endif  // XLADB_INGEST_TEXT_ENTRY_SHARDING_H_
