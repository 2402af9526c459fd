// HloModuleParser: reads HLO module text, the `<base>.txt` files of an XLA dump (§7): after-optimization
// modules, before_optimizations and the per-pass dumps (`NNNN.<pipeline>.after_<pass>.before_<pass>.txt`).
//
// Printer: HloModule::Print / PrintConfig / PrintStackFrameIndex / PrintComputations
// (xla/hlo/ir/hlo_module.cc), HloComputation::Print (xla/hlo/ir/hlo_computation.cc) and
// HloInstruction::PrintWithCanonicalNameMap (xla/hlo/ir/hlo_instruction.cc).
//
// Eras (§7.1), all read by the same rules:
//   * ≤ 2022-03 and 2025-02-17 … 03-11: long form, `%name`, operand shapes (`add(f32[] %x, f32[] %y)`),
//     computation signatures (`%comp (p: f32[]) -> f32[] {`).
//   * 2022-03 … 2025-02: ShortParsable: no `%`, no operand shapes, no signature (`fused_computation {`,
//     `ENTRY main.47 {`); 2023-07 … 2025-02 `} // <comp name>` after larger computations.
//   * 2025-03 onward (seed 003): long form without operand shapes.
//   * 2025-07 onward: multi-line `, origin_recovery_table={` … `}` header attribute (its body embeds whole
//     recovery modules inside quotes, every line indented); 2026-07: a multi-line `debug_attributes={…}`.
//   * 2025-12 onward: `FileNames` / `FunctionNames` / `FileLocations` / `StackFrames` tables after the header
//     (`N "escaped"` and `N {key=value …}` rows): recognised and skipped.
//   * 2026-06 onward: compact GTE operands `%producer#0#1` (non-ROOT get-tuple-elements are not printed).
//   * `}, execution_thread="…"` closes a computation of another execution thread.
//
// Line → record mapping:
//   `HloModule <name>[, attr=…]*` (+ continuation lines)  → HloModuleRecord, emitted by Finish()
//   `[ENTRY ][%]<name>[ (<signature>)] {`                   → starts a computation
//   `  [ROOT ]<instruction>`                                → InstructionRecord (computation, sequence_index =
//                                                              0-based position in its computation, is_root)
//   `}` / `} // <name>` / `}, execution_thread="<t>"`      → ComputationRecord (name, is_entry, count, thread)
//   ENTRY parameters' and ROOT's `sharding={…}`            → HloModuleRecord::entry_sharding (ingest/text/entry_sharding.h)
// An instruction whose brackets or quotes are still open at the end of its line (raw pretty-printed JSON in
// backend_config) is joined with the following lines until they balance; if the next line is a new
// instruction or a computation end instead, the open line is counted as unknown.
//
// program_fingerprint: XXH3-64 over every instruction with instruction and computation names and
// metadata={…} / origin={…} removed: shape (without /*index=N*/ markers), opcode, is_root, operands (a
// reference becomes the referenced instruction's position in its computation, keeping compact-GTE `#i`
// suffixes; operand shapes of old eras are dropped; literals such as constant(1) or parameter(0) are kept),
// and the other attributes verbatim, except calls=/to_apply=/condition=/body=/branch_computations=/… which
// become computation ordinals and control-predecessors= which become positions. Computation boundaries and
// ENTRY are part of the hash. So a program recompiled in another process (renumbered names, other source
// paths) gets the same fingerprint; different shapes, opcodes, wiring, constants or attributes differ.
// backend_config is kept verbatim: a Pallas kernel whose bytecode embeds source locations differs by it.
//
// Contract
//   * Owns nothing but its bookkeeping; records go to the sink passed in (not owned, must outlive the parser).
//   * Errors: a file whose first line does not start with `HloModule` is reported (kError) and Finish()
//     returns DataLoss; everything after it is ignored. Other oddities are unknown lines or issues:
//     kInvariant for a duplicate instruction or computation name, a computation without exactly one ROOT,
//     a module without exactly one ENTRY, a `} // name` trailer naming another computation, a computation
//     opened before the previous one closed; kWarning when the file ends inside a computation or header block.
//   * Memory: the longest logical line, the header text, and the names of the module's instructions and
//     computations (to resolve references for the fingerprint and to detect duplicates).
//   * Not thread-safe; one file per instance.
#ifndef XLADB_INGEST_FORMATS_HLO_MODULE_HLO_MODULE_PARSER_H_
#define XLADB_INGEST_FORMATS_HLO_MODULE_HLO_MODULE_PARSER_H_

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <unordered_map>
#include <utility>

#include "ingest/text/entry_sharding.h"
#include "ingest/text/hlo_instruction_text.h"
#include "ingest/text/line_parser.h"

namespace xladb::ingest {

class HloModuleParser : public LineParser {
 public:
  explicit HloModuleParser(RecordSink* sink);
  ~HloModuleParser() override;

  void ParseLine(std::string_view line, int64_t line_no) override;
  Status Finish() override;

 private:
  enum class State {
    kStart,          // before the `HloModule` line
    kPreamble,       // after the header: continuation attributes, stack-frame tables, first computation
    kHeaderBlock,    // inside a multi-line header attribute (origin_recovery_table, debug_attributes)
    kBetween,        // between computations
    kInComputation,  // inside a computation block
    kRejected,       // not HLO module text
  };
  enum class StackFrameTable { kNone, kFileNames, kFunctionNames, kFileLocations, kStackFrames };

  class Fingerprint;

  void ParseHeaderLine(std::string_view line);
  void ParseHeaderAttributes(std::string_view attributes, int64_t line_no);
  bool ParsePreambleLine(std::string_view line, int64_t line_no);
  bool TryOpenComputation(std::string_view line, int64_t line_no);
  void CloseComputation(std::string_view trailer, int64_t line_no);
  void FinishComputation();
  void ParseComputationLine(std::string_view line, int64_t line_no);
  void EmitInstruction(std::string_view text, int64_t line_no);
  void FlushPendingAsUnknown();
  void FeedFingerprint(const HloInstructionPieces& pieces);

  State state_ = State::kStart;
  StackFrameTable table_ = StackFrameTable::kNone;
  int64_t header_block_line_ = 0;

  HloModuleRecord module_;
  int64_t entry_count_ = 0;
  EntrySharding entry_sharding_;  // of the ENTRY computation's parameters and ROOT

  // The open computation.
  ComputationRecord computation_;
  int64_t computation_ordinal_ = -1;
  int64_t computation_line_ = 0;
  int64_t root_count_ = 0;

  // A multi-line instruction being joined (its brackets or quotes still open).
  std::string pending_;
  int64_t pending_line_ = 0;
  BracketTracker pending_brackets_;

  // Names seen so far: instruction → (computation ordinal, position), computation → ordinal.
  std::unordered_map<std::string, std::pair<int64_t, int64_t>> instructions_;
  std::unordered_map<std::string, int64_t> computations_;

  std::unique_ptr<Fingerprint> fingerprint_;
  std::string scratch_;
};

}  // namespace xladb::ingest

#endif  // XLADB_INGEST_FORMATS_HLO_MODULE_HLO_MODULE_PARSER_H_
