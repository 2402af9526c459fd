// BufferAssignmentParser: reads `*-buffer-assignment.txt` and `*-buffer-assignment-values.txt` (§2, §3 of
// docs/formats.md) with one state machine; the sections are recognised by their header lines, so
// the same parser reads every era and both file kinds (and a `*-live-range.txt` too, by delegation).
//
// Printers (xla/service/buffer_assignment.cc unless noted):
//   BufferAssignment::ToString         `BufferAssignment:`, the allocation blocks, `Total bytes used`,
//                                      `Used values:` (2026-04-03 onward only the allocation blocks: the
//                                      "diet" head)
//   BufferAllocation::ToShortString    allocation header lines (earlier the head of
//                                      BufferAllocation::ToString)
//   BufferAssignment::ValuesToString   `*-buffer-assignment-values.txt` (2026-04-03 onward): an empty
//                                      line, `Total bytes used`, an empty line, `Used values:`, the blocks
//   HloValue::ToShortString, HloValue::ToString, HloPosition::ToString, HloUse::ToString
//                                      (xla/service/hlo_value.cc): value-shorts and Used-values blocks
//   HloLiveRange::ToString             the tail from `HloLiveRange (max` on (2021-04-07 … 2026-04-03):
//                                      every remaining line goes to a LiveRangeParser member
//
// Lines → records:
//   allocation <i>: [0x…, ]size <n>{, <flag>}*:    OnAllocation. The |…| shape spans are cut out before
//                                                  the flags are split (they contain ", "). XLA prints
//                                                  the flags in a fixed order (color, parameter, output
//                                                  shape is, constant, thread-local, maybe-live-out,
//                                                  preallocated-temp); any combination is accepted, as
//                                                  are `parameter N at ShapeIndex {…}` without a shape
//                                                  (before 2019-12-13), `<unknown shape>` and the `0x…`
//                                                  object pointer (before 2022-09-07).
//    value: <value-short> (size=<n>,offset=<n>): <shape>      OnAllocatedValue
//    reused by buffers of a different color:                  (2026-06-17 onward) then, per line,
//     value: <value-short> (color=<c>)                        OnCrossColorReuse only (these values were
//                                                             already listed: never emitted twice)
//   Total bytes used: <n>[ (<human>)]                          OnTotalBytes
//   <value-short> / positions / uses / from instruction       OnValueDetail per block, emitted when the
//                                                             next block, a blank line or the end comes;
//                                                             uses may be `  (none)` (2026-06) or ` uses
//                                                             are not initialized yet.` (2024-01)
//    from instruction:[ ]<HLO text>                           OnInstruction once per instruction name per
//                                                             file (ParseHloInstructionText on first
//                                                             sight; for repeats only the name is read);
//                                                             emitted before the next line is read, so
//                                                             before the OnValueDetail of its block
// The three `from instruction` eras: `from instruction:%x` (2021-09 … 2024-01, no space), ` from
// instruction: %x` with the newline MISSING (2024-01-16 … 2024-11-01: the next value-short is glued to the
// end of the line; split only when the next line is ` positions:`), and the normal one. Blocks before
// 2021-09 have no from-instruction line.
// Pre-2019 files (` name[](#id @c) [offset,size]: shape` value lines, `<…>, positions:` blocks) are
// detected and rejected: a kError issue, and Finish() returns DataLoss.
//
// Invariants (kInvariant issues naming the numbers; parsing goes on): a value's offset+size lies within its
// allocation; the allocation sizes sum to `Total bytes used` when both are in the file; plus those of
// LiveRangeParser for the tail. Numbers that are negative or past int64 are reported and their line skipped.
// Warnings: a file that ends inside a value block, or with a from-instruction text cut short (unbalanced
// brackets or quotes, or shorter than the same instruction's earlier printing), or with an unreadable last
// line: all signs of a truncated file.
//
// Memory: the longest line, the names (and text lengths) of the instructions already emitted (an
// ArenaStringMap, about 44 bytes per name of 15 bytes; freed when the HloLiveRange tail starts, as no
// from-instruction line can follow), the open value block, the last new instruction record until the next
// line, and in the glued era one pending from-instruction line (copied only when its instruction is new); in
// the tail, what LiveRangeParser keeps.
//
// Contract: the sink must outlive the parser. Errors are values, never exceptions. Finish() returns DataLoss
// only for a pre-2019 file or a text with none of the section headers. Not thread-safe.
#ifndef XLADB_INGEST_FORMATS_BUFFER_ASSIGNMENT_BUFFER_ASSIGNMENT_PARSER_H_
#define XLADB_INGEST_FORMATS_BUFFER_ASSIGNMENT_BUFFER_ASSIGNMENT_PARSER_H_

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "base/arena_string_map.h"
#include "ingest/formats/buffer_assignment/buffer_text_parser.h"
#include "ingest/formats/buffer_assignment/live_range_parser.h"
#include "ingest/records/record_sink.h"
#include "ingest/records/records.h"
#include "base/status.h"

namespace xladb::ingest {

class BufferAssignmentParser : public BufferTextParser {
 public:
  explicit BufferAssignmentParser(RecordSink* sink);

  void ParseLine(std::string_view line, int64_t line_no) override;
  Status Finish() override;

 private:
  enum class Section { kStart, kAllocations, kSummary, kUsedValues, kLiveRange, kRejected };
  enum class BlockPart { kHeader, kPositions, kUses, kFromInstruction };

  void ParseAllocationSectionLine(std::string_view line, int64_t line_no);
  void ParseAllocationHeader(std::string_view line, int64_t line_no);
  void ParseAllocatedValue(std::string_view line, int64_t line_no);
  void ParseCrossColorValue(std::string_view line, int64_t line_no);
  // Reads the `<value-short>` that follows `prefix_size` bytes of `line` into `value` and sets `rest` to what
  // follows it. False when the line is done with (counted as unknown, or a bad number reported).
  bool ReadLeadingValueShort(std::string_view line, size_t prefix_size, int64_t line_no,
                             std::string_view context, ValueRef* value, std::string_view* rest);
  void ParseTotalBytes(std::string_view line, int64_t line_no);
  void ParseUsedValuesLine(std::string_view line, int64_t line_no);
  void ParsePosition(std::string_view line, int64_t line_no);
  void ParseUse(std::string_view line, int64_t line_no);
  void ParseFromInstruction(std::string_view line, int64_t line_no);
  void StartValueBlock(ValueRef&& value, int64_t line_no);
  void EmitValueBlock();
  // Settles a from-instruction line that ended with a value-short: `split` when the next line is
  // ` positions:` (the glued era), so that value-short starts the next block.
  // Settles a glued from-instruction line once the next line says whether it also held a value header.
  void ResolveGluedLine(std::string_view next_line);
  // Reads the text of an instruction seen for the first time into pending_instruction_ (emitted by
  // FlushInstruction before the next line, or at the end once the last line is known not to be cut short).
  void EmitNewInstruction(std::string_view name, std::string_view text, std::string_view line,
                          int64_t line_no);
  void FlushInstruction();
  // Warns when the file's last line is a from-instruction text cut short.
  void CheckLastFromInstruction();
  void StartLiveRange(std::string_view line, int64_t line_no);
  void RejectPre2019(int64_t line_no);

  LiveRangeParser live_range_;
  Section section_ = Section::kStart;
  bool saw_section_header_ = false;
  int64_t last_line_no_ = 0;

  // Allocations.
  bool have_allocation_ = false;  // the last header parsed; value lines belong to it
  int64_t allocation_index_ = 0;
  int64_t allocation_size_ = 0;
  bool in_cross_color_block_ = false;
  int64_t allocation_count_ = 0;
  int64_t allocation_bytes_ = 0;
  bool allocation_bytes_overflow_ = false;

  // The open Used-values block.
  bool block_open_ = false;
  BlockPart block_part_ = BlockPart::kHeader;
  ValueDetailRecord block_;
  int64_t block_line_no_ = 0;
  bool era_has_from_instruction_ = false;

  // A from-instruction line that ended with a value-short, until the next line tells whether it was glued.
  bool glue_pending_ = false;
  ValueRef glued_value_;
  int64_t glued_line_no_ = 0;
  bool glued_text_is_new_ = false;  // the instruction was not emitted yet: glued_text_ holds the line
  std::string glued_text_;          // reused buffer: the instruction text including the suffix
  size_t glued_suffix_size_ = 0;    // bytes of the value-short at the end of glued_text_
  std::string glued_name_;

  // Instructions already read, with the length of their text: each is emitted once; a repeat only has its
  // name read. Emptied (and freed) when the HloLiveRange tail starts.
  ArenaStringMap instruction_text_sizes_;
  std::optional<InstructionRecord> pending_instruction_;
  int64_t last_from_line_no_ = -1;
  bool last_from_text_differs_ = false;  // the last from-instruction line was a repeat of another length
};

}  // namespace xladb::ingest

#endif  // XLADB_INGEST_FORMATS_BUFFER_ASSIGNMENT_BUFFER_ASSIGNMENT_PARSER_H_
