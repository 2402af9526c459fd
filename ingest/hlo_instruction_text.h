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
// Thread-safe (no state).
#ifndef XLADB_INGEST_HLO_INSTRUCTION_TEXT_H_
#define XLADB_INGEST_HLO_INSTRUCTION_TEXT_H_

#include <optional>
#include <string>
#include <string_view>

#include "ingest/records.h"

namespace xladb::ingest {

// Parses `text` (leading spaces allowed, "ROOT " allowed) into a record: name, opcode, shape, is_root,
// metadata (op_type, op_name, source_file, source_line), fusion_kind, custom_call_target; `text` is copied
// into record.text without the leading spaces and "ROOT ". computation and sequence_index are left for the
// caller. Returns std::nullopt if the text is not an instruction (no `name = shape opcode(` head).
std::optional<InstructionRecord> ParseHloInstructionText(std::string_view text);

// Unescapes a C-escaped string body (without the quotes): \" \\ \n \t and octal \NNN.
std::string UnescapeCString(std::string_view escaped);

}  // namespace xladb::ingest

#endif  // XLADB_INGEST_HLO_INSTRUCTION_TEXT_H_
