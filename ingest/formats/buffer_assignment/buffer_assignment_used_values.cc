// BufferAssignmentParser, its `Used values:` section (§2.4): the value blocks of BufferAssignment::ToString,
// HloValue::ToString's positions and uses, and each value's defining instruction text (glued to the header in
// the 2023-2024 era). buffer_assignment_parser.h says how the lines map to records.
#include "ingest/formats/buffer_assignment/buffer_assignment_parser.h"

#include <optional>
#include <string>
#include <utility>

#include "ingest/formats/buffer_assignment/hlo_value_text.h"
#include "ingest/formats/buffer_assignment/value_short_text.h"
#include "ingest/text/hlo_instruction_text.h"

namespace xladb::ingest {
namespace {

using Severity = IssueRecord::Severity;

constexpr std::string_view kPositionsHeader = " positions:";
constexpr std::string_view kUsesHeader = " uses:";
constexpr std::string_view kUsesNotInitialized = " uses are not initialized yet.";
constexpr std::string_view kFromInstructionPrefix = " from instruction:";
constexpr std::string_view kNoUses = "  (none)";
constexpr std::string_view kEntryIndent = "  ";

}  // namespace

void BufferAssignmentParser::ParseUsedValuesLine(std::string_view line, int64_t line_no) {
  if (line.front() == '<') {
    ValueRef value;
    std::string_view bad_number;
    CountStatus status = ParseValueShort(line, &value, &bad_number);
    if (status == CountStatus::kOk) {
      EmitValueBlock();
      return StartValueBlock(std::move(value), line_no);
    }
    if (status != CountStatus::kMalformed) {
      EmitValueBlock();  // the lines of the skipped block will be unknown lines
      Report(Severity::kInvariant, line_no,
             DescribeCountProblem("value id/color", bad_number, status) + "; value block skipped");
      return;
    }
  } else if (line.size() > 1 && block_open_) {
    switch (line[1]) {
      case ' ':
        if (block_part_ == BlockPart::kPositions) return ParsePosition(line, line_no);
        if (block_part_ == BlockPart::kUses) {
          if (line == kNoUses) {
            block_.uses_state = ValueDetailRecord::UsesState::kNone;
            return;
          }
          return ParseUse(line, line_no);
        }
        break;
      case 'p':
        if (line == kPositionsHeader) {
          block_part_ = BlockPart::kPositions;
          return;
        }
        break;
      case 'u':
        if (line == kUsesHeader) {
          block_part_ = BlockPart::kUses;
          return;
        }
        if (line == kUsesNotInitialized) {
          block_.uses_state = ValueDetailRecord::UsesState::kNotInitialized;
          block_part_ = BlockPart::kUses;
          return;
        }
        break;
      case 'f':
        if (line.starts_with(kFromInstructionPrefix)) return ParseFromInstruction(line, line_no);
        break;
      default:
        break;
    }
  }
  if (LooksLikePre2019ValueLine(line)) return RejectPre2019(line_no);
  Unknown(line, line_no, "Used values");
}

void BufferAssignmentParser::StartValueBlock(ValueRef&& value, int64_t line_no) {
  block_ = ValueDetailRecord();
  block_.value = std::move(value);
  block_open_ = true;
  block_part_ = BlockPart::kHeader;
  block_line_no_ = line_no;
}

void BufferAssignmentParser::EmitValueBlock() {
  FlushInstruction();  // an instruction record goes before the value blocks that name it
  if (!block_open_) return;
  block_open_ = false;
  sink()->OnValueDetail(std::move(block_));
}

void BufferAssignmentParser::ParsePosition(std::string_view line, int64_t line_no) {
  // `  NAME[ INDEX]`: the index only for tuple-shaped positions.
  std::string_view rest = line.substr(kEntryIndent.size());
  size_t space = rest.find(' ');
  std::string_view name = rest.substr(0, space);
  if (name.empty()) return Unknown(line, line_no, "positions");
  ValueDetailRecord::Position position;
  if (space != std::string_view::npos) {
    std::string_view index = rest.substr(space + 1);
    if (!IsShapeIndexText(index)) return Unknown(line, line_no, "positions");
    position.shape_index = std::string(index);
  }
  position.instruction = std::string(name);
  block_.positions.push_back(std::move(position));
}

void BufferAssignmentParser::ParseUse(std::string_view line, int64_t line_no) {
  // `  NAME, operand N[ INDEX]`: the index only for tuple-shaped operands.
  constexpr std::string_view kOperand = ", operand ";
  std::string_view rest = line.substr(kEntryIndent.size());
  size_t comma = rest.find(kOperand);
  if (comma == std::string_view::npos || comma == 0) return Unknown(line, line_no, "uses");
  ValueDetailRecord::Use use;
  std::string_view operand = rest.substr(comma + kOperand.size());
  size_t space = operand.find(' ');
  if (space != std::string_view::npos) {
    std::string_view index = operand.substr(space + 1);
    if (!IsShapeIndexText(index)) return Unknown(line, line_no, "uses");
    use.shape_index = std::string(index);
  }
  if (!ReadCount(operand.substr(0, space), "operand number", line, line_no, "uses", &use.operand)) return;
  use.instruction = std::string(rest.substr(0, comma));
  block_.uses.push_back(std::move(use));
}

void BufferAssignmentParser::ParseFromInstruction(std::string_view line, int64_t line_no) {
  std::string_view text = line.substr(kFromInstructionPrefix.size());
  ConsumePrefix(&text, " ");  // no space in the 2021-09 … 2024-01 era
  std::string_view head = text;
  ConsumePrefix(&head, "ROOT ");
  ConsumePrefix(&head, "%");
  size_t name_end = head.find(' ');
  if (name_end == 0 || name_end == std::string_view::npos) return Unknown(line, line_no, "from instruction");
  std::string_view name = head.substr(0, name_end);
  era_has_from_instruction_ = true;
  block_part_ = BlockPart::kFromInstruction;
  block_.defining_instruction = std::string(name);
  last_from_line_no_ = line_no;
  const uint64_t* seen_text_size = instruction_text_sizes_.Find(name);

  // 2024-01-16 … 2024-11-01: the next value-short may be glued to the end of the line. Decided by the next
  // line; keep the text only if its instruction still has to be emitted.
  if (text.back() == '>') {
    size_t open = text.rfind('<');
    ValueRef glued;
    std::string_view bad_number;
    if (open != std::string_view::npos && open > static_cast<size_t>(head.data() - text.data()) + name_end &&
        ParseValueShort(text.substr(open), &glued, &bad_number) == CountStatus::kOk) {
      glue_pending_ = true;
      glued_value_ = std::move(glued);
      glued_line_no_ = line_no;
      glued_text_is_new_ = seen_text_size == nullptr;
      if (glued_text_is_new_) {
        glued_text_.assign(text);
        glued_suffix_size_ = text.size() - open;
        glued_name_.assign(name);
      } else {
        last_from_text_differs_ = *seen_text_size != text.size() && *seen_text_size != open;
      }
      return;
    }
  }
  if (seen_text_size != nullptr) {
    // A repeat: only its length is looked at, to notice a last line cut short (see Finish).
    last_from_text_differs_ = *seen_text_size != text.size();
    return;
  }
  EmitNewInstruction(name, text, line, line_no);
}

void BufferAssignmentParser::ResolveGluedLine(std::string_view next_line) {
  glue_pending_ = false;
  const bool split = next_line == kPositionsHeader;  // the glued line held a value block's header too
  if (glued_text_is_new_) {
    std::string_view text = glued_text_;
    if (split) text.remove_suffix(glued_suffix_size_);
    EmitNewInstruction(glued_name_, text, text, glued_line_no_);
  }
  if (split) {
    EmitValueBlock();
    StartValueBlock(std::move(glued_value_), glued_line_no_);
  }
}

void BufferAssignmentParser::EmitNewInstruction(std::string_view name, std::string_view text,
                                                std::string_view line, int64_t line_no) {
  FlushInstruction();
  instruction_text_sizes_.Insert(name, text.size());
  last_from_text_differs_ = false;
  std::optional<InstructionRecord> record = ParseHloInstructionText(text);
  if (!record) return Unknown(line, line_no, "from instruction");
  pending_instruction_ = std::move(record);
}

void BufferAssignmentParser::FlushInstruction() {
  if (!pending_instruction_) return;
  sink()->OnInstruction(std::move(*pending_instruction_));
  pending_instruction_.reset();
}

void BufferAssignmentParser::CheckLastFromInstruction() {
  if (last_from_line_no_ != last_line_no_) return;
  bool cut_short = last_from_text_differs_;
  if (pending_instruction_) {
    BracketTracker brackets;
    brackets.Feed(pending_instruction_->text);
    cut_short = !brackets.balanced();
  }
  if (cut_short) {
    Report(
        Severity::kWarning, last_line_no_,
        "the file ends with the from-instruction text of " + block_.defining_instruction +
            " cut short (unbalanced brackets or quotes, or shorter than its earlier printing): truncated?");
  }
}

}  // namespace xladb::ingest
