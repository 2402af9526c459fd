// HloInstructionText: reads one printed HLO instruction (HloInstruction::ToString / PrintWithCanonicalNameMap,
// xla/hlo/ir/hlo_instruction.cc) into an InstructionRecord.
//
// Shared by every format that embeds instruction text: HLO module text (§7), the ` from instruction:` line of
// buffer assignments (§2.5) and the `HLO:` header of TPU utilization reports (§8).
//
// Accepted forms, all eras (§7.1):
//   [ROOT ]%name = <shape> <opcode>(<operands>)[, <attr>=<value>]*      long form, with or without operand
//   [ROOT ]name = <shape> <opcode>(<operands>)[, …]                    shapes; ShortParsable (no '%')
// Shapes may be tuples with /*index=N*/ markers; attribute values may nest {} () [] and quoted C-escaped
// strings; backend_config may be raw JSON. The scanner is quote- and bracket-aware, linear in the line
// length, and never backtracks, so multi-MB lines are fine.
//
// Tokenising (§7.2): name up to ` = `; shape up to the first space outside brackets (so a tuple shape
// `(f32[], /*index=5*/s32[])` is one token); opcode up to `(`; operands up to the matching `)`; then
// attributes split at commas outside brackets and quotes. Inside a quoted string a backslash escapes the
// next byte. Closing brackets with no opener are ignored (depth never goes below zero), so garbage can
// only make a field wrong, never make the scan fail or go quadratic.
//
// Errors: never throws. Text without the `name = shape opcode(` head gives std::nullopt; a head followed by
// unbalanced operands or an unterminated quote gives a best-effort record (name, shape, opcode; attributes
// as far as they can be split).
//
// Metadata: op_type, op_name, source_file (C-unescaped) and source_line are read from the first top-level
// metadata={…}; a source_line that is negative or past int64 is left at -1. fusion_kind is set for fusions
// only; custom_call_target is C-unescaped. The record says where `text` prints the shape, op_name and
// source_file byte for byte (InstructionRecord::TextSpan): an op_name or source_file that needed unescaping
// has no span.
//
// Thread safety: the free functions keep no state and are thread-safe. TopLevelItems and BracketTracker are
// small cursors: one thread per instance. The string_views of HloInstructionPieces and TopLevelItems point
// into the caller's text, which must outlive them.
#ifndef XLADB_INGEST_TEXT_HLO_INSTRUCTION_TEXT_H_
#define XLADB_INGEST_TEXT_HLO_INSTRUCTION_TEXT_H_

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "ingest/records/records.h"

namespace xladb::ingest {

// Parses `text` (leading spaces allowed, "ROOT " allowed) into a record: name, opcode, shape, is_root,
// metadata (op_type, op_name, source_file, source_line), fusion_kind, custom_call_target; `text` is copied
// into record.text without the leading spaces and "ROOT ". computation and sequence_index are left for the
// caller. Returns std::nullopt if the text is not an instruction (no `name = shape opcode(` head).
std::optional<InstructionRecord> ParseHloInstructionText(std::string_view text);

// Unescapes a C-escaped string body (without the quotes): \" \\ \n \t and octal \NNN.
std::string UnescapeCString(std::string_view escaped);

// ---------------------------------------------------------------------------------------------------
// Lower-level pieces, for callers that need more than the record (the HLO module fingerprint).

// The pieces of one instruction line, as views into the text given to SplitHloInstructionText.
struct HloInstructionPieces {
  std::string_view text;        // without leading spaces and "ROOT "
  bool is_root = false;
  std::string_view name;        // without '%'
  std::string_view shape;
  std::string_view opcode;
  std::string_view operands;    // between the parentheses, e.g. "%a, %b" or "f32[] %x, f32[] %y"
  bool operands_closed = false; // false when the matching ')' was missing (then `operands` runs to the end)
  std::string_view attributes;  // everything after ")" and its ", " (empty when none)
};

// Splits `text` into its pieces; std::nullopt without the `name = shape opcode(` head.
std::optional<HloInstructionPieces> SplitHloInstructionText(std::string_view text);

// Iterates over the items of a list separated by `separator` outside brackets ({} () []) and quoted strings,
// e.g. attributes (`,`) or metadata fields (` `). Items are trimmed of spaces; empty items are skipped.
// Linear in the list length.
class TopLevelItems {
 public:
  explicit TopLevelItems(std::string_view list, char separator = ',') : rest_(list), separator_(separator) {}
  // Sets *item to the next item and returns true, or returns false at the end.
  bool Next(std::string_view* item);

 private:
  std::string_view rest_;
  char separator_;
};

// Tracks bracket depth and quoted-string state across pieces of text fed in order (e.g. the lines of a
// multi-line attribute), with the same rules as the instruction scanner: quotes hide brackets, a backslash
// in a quote escapes the next byte (even across pieces), closers without an opener are ignored.
class BracketTracker {
 public:
  void Feed(std::string_view text);
  // True when every opened bracket is closed and no quoted string is open.
  bool balanced() const { return depth_ == 0 && !in_quote_; }

 private:
  int64_t depth_ = 0;
  bool in_quote_ = false;
  bool escape_pending_ = false;
};

// The record for already-split pieces (what ParseHloInstructionText returns for the same text).
InstructionRecord MakeInstructionRecord(const HloInstructionPieces& pieces);

// The number N of a `parameter(N)` instruction; nullopt for any other opcode or operand text.
std::optional<int64_t> ParameterNumber(const HloInstructionPieces& pieces);

// Splits an attribute or metadata item `key=value` at its first '='. Returns false when there is none.
bool SplitKeyValue(std::string_view item, std::string_view* key, std::string_view* value);

// If `value` is a double-quoted string (opening and closing quote), returns its body unescaped; otherwise
// returns `value` unchanged.
std::string UnquoteValue(std::string_view value);

}  // namespace xladb::ingest

#endif  // XLADB_INGEST_TEXT_HLO_INSTRUCTION_TEXT_H_
