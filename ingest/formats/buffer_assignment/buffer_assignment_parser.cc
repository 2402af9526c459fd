#include "ingest/formats/buffer_assignment/buffer_assignment_parser.h"

#include <limits>
#include <optional>
#include <string>
#include <utility>

#include "ingest/text/hlo_instruction_text.h"
#include "ingest/formats/buffer_assignment/hlo_value_text.h"

namespace xladb::ingest {
namespace {

using Severity = IssueRecord::Severity;

constexpr std::string_view kBufferAssignmentHeader = "BufferAssignment:";
constexpr std::string_view kAllocationPrefix = "allocation ";
constexpr std::string_view kValuePrefix = " value: ";
constexpr std::string_view kCrossColorHeader = " reused by buffers of a different color:";
constexpr std::string_view kCrossColorValuePrefix = "  value: ";
constexpr std::string_view kTotalPrefix = "Total bytes used: ";
constexpr std::string_view kUsedValuesHeader = "Used values:";
constexpr std::string_view kPositionsHeader = " positions:";
constexpr std::string_view kUsesHeader = " uses:";
constexpr std::string_view kUsesNotInitialized = " uses are not initialized yet.";
constexpr std::string_view kFromInstructionPrefix = " from instruction:";
constexpr std::string_view kNoUses = "  (none)";
constexpr std::string_view kEntryIndent = "  ";

// Reads `<ID NAME[INDEX][ (phi)][ @COLOR]>` (HloValue::ToShortString, §2.4) spanning all of `text`.
// Returns kOk, kMalformed, or the problem of the id/color number (kNegative, kOutOfRange) with *bad_number
// set to it.
CountStatus ParseValueShort(std::string_view text, ValueRef* out, std::string_view* bad_number) {
  if (!ConsumePrefix(&text, "<") || !ConsumeSuffix(&text, ">")) return CountStatus::kMalformed;
  size_t space = text.find(' ');
  if (space == std::string_view::npos) return CountStatus::kMalformed;
  std::string_view id_text = text.substr(0, space);
  std::string_view rest = text.substr(space + 1);
  size_t name_end = rest.find(' ');
  std::string_view tail = name_end == std::string_view::npos ? std::string_view() : rest.substr(name_end);
  std::optional<NameWithShapeIndex> name = SplitGluedShapeIndex(rest.substr(0, name_end));
  if (!name) return CountStatus::kMalformed;
  bool is_phi = ConsumePrefix(&tail, " (phi)");
  int64_t color = -1;
  if (ConsumePrefix(&tail, " @")) {
    CountField field = ParseCountField(tail);
    if (field.status == CountStatus::kOk && field.value > std::numeric_limits<int32_t>::max()) {
      field.status = CountStatus::kOutOfRange;
    }
    if (field.status != CountStatus::kOk) {
      *bad_number = tail;
      return field.status;
    }
    color = field.value;
    tail = {};
  }
  if (!tail.empty()) return CountStatus::kMalformed;
  CountField id = ParseCountField(id_text);
  if (id.status != CountStatus::kOk) {
    *bad_number = id_text;
    return id.status;
  }
  out->id = id.value;
  out->instruction = std::string(name->name);
  out->index_printed = !name->shape_index.empty();
  out->shape_index = out->index_printed ? std::string(name->shape_index) : std::string("{}");
  out->is_phi = is_phi;
  out->color = static_cast<int32_t>(color);
  return CountStatus::kOk;
}

// Consumes `[0-9]+` at the front of `*text`; false if there is no digit.
bool ConsumeDigits(std::string_view* text) {
  size_t n = 0;
  while (n < text->size() && (*text)[n] >= '0' && (*text)[n] <= '9') ++n;
  text->remove_prefix(n);
  return n > 0;
}

// ` [<digits>,<digits>]: ` somewhere in the line: the offset/size pair of pre-2019 allocation value lines.
// Each candidate is checked only as far as its own digits, so the scan stays linear.
bool HasOffsetSizePair(std::string_view line) {
  for (size_t at = line.find(" ["); at != std::string_view::npos; at = line.find(" [", at + 1)) {
    std::string_view rest = line.substr(at + 2);
    if (ConsumeDigits(&rest) && ConsumePrefix(&rest, ",") && ConsumeDigits(&rest) &&
        rest.starts_with("]: ")) {
      return true;
    }
  }
  return false;
}

// The value lines of the TF-1.x printers (before 2019-09-09, §2.1): LogicalBuffer::ToString
// ` name[](#id @c) [offset,size]: shape` under allocations, and HloValue blocks `<id name @c>, positions:`.
bool LooksLikePre2019ValueLine(std::string_view line) {
  return line.find(">, positions:") != std::string_view::npos ||
         (line.starts_with(" ") && line.find("](#") != std::string_view::npos) ||
         (line.starts_with(" ") && HasOffsetSizePair(line));
}

std::string_view SectionName(int section) {
  static constexpr std::string_view kNames[] = {"buffer assignment (before any section header)",
                                                "allocations",
                                                "buffer assignment summary",
                                                "Used values",
                                                "live range",
                                                "rejected"};
  return kNames[section];
}

}  // namespace

BufferAssignmentParser::BufferAssignmentParser(RecordSink* sink) : BufferTextParser(sink), live_range_(sink) {
  live_range_.CountUnknownLinesIn(this);
}

void BufferAssignmentParser::ParseLine(std::string_view line, int64_t line_no) {
  last_line_no_ = line_no;
  if (section_ == Section::kLiveRange) return live_range_.ParseLine(line, line_no);
  if (section_ == Section::kRejected) return;
  if (glue_pending_) ResolveGluedLine(line == kPositionsHeader);
  FlushInstruction();
  if (line.empty()) {
    EmitValueBlock();
    if (section_ == Section::kAllocations) section_ = Section::kSummary;
    return;
  }
  switch (line.front()) {
    case ' ':
      if (section_ == Section::kUsedValues) return ParseUsedValuesLine(line, line_no);
      if (section_ == Section::kAllocations) return ParseAllocationSectionLine(line, line_no);
      break;
    case '<':
      if (section_ == Section::kUsedValues) return ParseUsedValuesLine(line, line_no);
      break;
    case 'a':
      if (section_ == Section::kAllocations && line.starts_with(kAllocationPrefix)) {
        return ParseAllocationHeader(line, line_no);
      }
      break;
    case 'B':
      if (line == kBufferAssignmentHeader) {
        EmitValueBlock();
        saw_section_header_ = true;
        section_ = Section::kAllocations;
        return;
      }
      break;
    case 'T':
      if (line.starts_with(kTotalPrefix)) return ParseTotalBytes(line, line_no);
      break;
    case 'U':
      if (line == kUsedValuesHeader) {
        EmitValueBlock();
        saw_section_header_ = true;
        section_ = Section::kUsedValues;
        return;
      }
      break;
    case 'H':
      if (line.starts_with(LiveRangeParser::kHeaderPrefix) || line == LiveRangeParser::kNotAvailableLine) {
        return StartLiveRange(line, line_no);
      }
      break;
    default:
      break;
  }
  if (LooksLikePre2019ValueLine(line)) return RejectPre2019(line_no);
  Unknown(line, line_no, SectionName(static_cast<int>(section_)));
}

// ---------------------------------------------------------------------------------------------------
// Allocations

void BufferAssignmentParser::ParseAllocationSectionLine(std::string_view line, int64_t line_no) {
  if (line.starts_with(kValuePrefix)) return ParseAllocatedValue(line, line_no);
  if (line == kCrossColorHeader) {
    if (!have_allocation_) return Unknown(line, line_no, "allocations");
    in_cross_color_block_ = true;
    return;
  }
  if (in_cross_color_block_ && line.starts_with(kCrossColorValuePrefix)) {
    return ParseCrossColorValue(line, line_no);
  }
  if (LooksLikePre2019ValueLine(line)) return RejectPre2019(line_no);
  Unknown(line, line_no, "allocations");
}

void BufferAssignmentParser::ParseAllocationHeader(std::string_view line, int64_t line_no) {
  constexpr std::string_view kContext = "allocation header";
  have_allocation_ = false;
  in_cross_color_block_ = false;
  std::string_view rest = line.substr(kAllocationPrefix.size());
  if (!ConsumeSuffix(&rest, ":")) return Unknown(line, line_no, kContext);
  size_t colon = rest.find(": ");
  if (colon == std::string_view::npos) return Unknown(line, line_no, kContext);
  AllocationRecord record;
  if (!ReadCount(rest.substr(0, colon), "allocation index", line, line_no, kContext, &record.index)) return;
  rest = rest.substr(colon + 2);
  if (rest.starts_with("0x")) {  // the object pointer printed before 2022-09-07
    size_t comma = rest.find(", ");
    if (comma == std::string_view::npos || comma == 2) return Unknown(line, line_no, kContext);
    for (char c : rest.substr(2, comma - 2)) {
      bool hex = (c >= '0' && c <= '9') || (c >= 'a' && c <= 'f') || (c >= 'A' && c <= 'F');
      if (!hex) return Unknown(line, line_no, kContext);
    }
    record.address = std::string(rest.substr(0, comma));
    rest = rest.substr(comma + 2);
  }
  if (!ConsumePrefix(&rest, "size ")) return Unknown(line, line_no, kContext);
  size_t size_end = rest.find(',');
  if (!ReadCount(rest.substr(0, size_end), "allocation size", line, line_no, kContext, &record.size_bytes)) {
    return;
  }
  rest = size_end == std::string_view::npos ? std::string_view() : rest.substr(size_end);

  // Flags. The |…| shapes may contain ", " (tuples), so each shape span is cut at its closing '|' before
  // looking for the next flag; shapes never contain '|'.
  auto read_bar_shape = [&rest](std::string* shape) {
    size_t bar = rest.find('|');
    if (bar == std::string_view::npos) return false;
    *shape = std::string(rest.substr(0, bar));
    rest = rest.substr(bar + 1);
    return true;
  };
  while (!rest.empty()) {
    if (!ConsumePrefix(&rest, ", ")) return Unknown(line, line_no, kContext);
    if (ConsumePrefix(&rest, "color ")) {
      size_t end = rest.find(',');
      int64_t color = 0;
      if (!ReadCount(rest.substr(0, end), "allocation color", line, line_no, kContext, &color)) return;
      if (color > std::numeric_limits<int32_t>::max()) {
        Report(Severity::kInvariant, line_no,
               "allocation " + std::to_string(record.index) + ": color " + std::to_string(color) +
                   " does not fit in int32; line skipped");
        return;
      }
      record.color = static_cast<int32_t>(color);
      rest = end == std::string_view::npos ? std::string_view() : rest.substr(end);
    } else if (ConsumePrefix(&rest, "parameter ")) {
      size_t end = rest.find_first_of(", ");
      if (end == std::string_view::npos) return Unknown(line, line_no, kContext);
      if (!ReadCount(rest.substr(0, end), "parameter number", line, line_no, kContext,
                     &record.parameter_number)) {
        return;
      }
      rest = rest.substr(end);
      if (ConsumePrefix(&rest, ", shape |") && !read_bar_shape(&record.parameter_shape)) {
        return Unknown(line, line_no, kContext);
      }
      if (!ConsumePrefix(&rest, " at ShapeIndex ")) return Unknown(line, line_no, kContext);
      size_t close = rest.find('}');
      if (close == std::string_view::npos || !IsShapeIndexText(rest.substr(0, close + 1))) {
        return Unknown(line, line_no, kContext);
      }
      record.parameter_shape_index = std::string(rest.substr(0, close + 1));
      rest = rest.substr(close + 1);
    } else if (ConsumePrefix(&rest, "output shape is |")) {
      if (!read_bar_shape(&record.output_shape)) return Unknown(line, line_no, kContext);
      record.is_output = true;
    } else if (ConsumePrefix(&rest, "constant")) {
      record.is_constant = true;
    } else if (ConsumePrefix(&rest, "thread-local")) {
      record.is_thread_local = true;
    } else if (ConsumePrefix(&rest, "maybe-live-out")) {
      record.is_maybe_live_out = true;
    } else if (ConsumePrefix(&rest, "preallocated-temp")) {
      record.is_preallocated_temp = true;
    } else {
      return Unknown(line, line_no, kContext);
    }
  }

  have_allocation_ = true;
  allocation_index_ = record.index;
  allocation_size_ = record.size_bytes;
  ++allocation_count_;
  if (__builtin_add_overflow(allocation_bytes_, record.size_bytes, &allocation_bytes_)) {
    allocation_bytes_overflow_ = true;
  }
  sink()->OnAllocation(std::move(record));
}

bool BufferAssignmentParser::ReadLeadingValueShort(std::string_view line, size_t prefix_size, int64_t line_no,
                                                   std::string_view context, ValueRef* value,
                                                   std::string_view* rest) {
  std::string_view text = line.substr(prefix_size);
  size_t close = text.find('>');
  if (!text.starts_with("<") || close == std::string_view::npos) {
    Unknown(line, line_no, context);
    return false;
  }
  std::string_view bad_number;
  CountStatus status = ParseValueShort(text.substr(0, close + 1), value, &bad_number);
  if (status != CountStatus::kOk) {
    if (status == CountStatus::kMalformed) {
      Unknown(line, line_no, context);
    } else {
      Report(Severity::kInvariant, line_no,
             DescribeCountProblem("value id/color", bad_number, status) + "; line skipped");
    }
    return false;
  }
  *rest = text.substr(close + 1);
  return true;
}

void BufferAssignmentParser::ParseAllocatedValue(std::string_view line, int64_t line_no) {
  constexpr std::string_view kContext = "allocation value";
  AllocatedValueRecord record;
  std::string_view rest;
  if (!ReadLeadingValueShort(line, kValuePrefix.size(), line_no, kContext, &record.value, &rest)) return;
  if (!ConsumePrefix(&rest, " (size=")) return Unknown(line, line_no, kContext);
  size_t comma = rest.find(",offset=");
  size_t paren = rest.find(')');
  if (comma == std::string_view::npos || paren == std::string_view::npos || paren < comma) {
    return Unknown(line, line_no, kContext);
  }
  if (!ReadCount(rest.substr(0, comma), "value size", line, line_no, kContext, &record.size_bytes) ||
      !ReadCount(rest.substr(comma + 8, paren - comma - 8), "value offset", line, line_no, kContext,
                 &record.offset_bytes)) {
    return;
  }
  rest = rest.substr(paren + 1);
  if (!ConsumePrefix(&rest, ": ") && rest != ":") return Unknown(line, line_no, kContext);
  if (rest == ":") rest = {};
  if (!have_allocation_) return Unknown(line, line_no, "value line without a readable allocation header");
  record.allocation_index = allocation_index_;
  record.shape = std::string(rest);
  if (record.size_bytes > allocation_size_ || record.offset_bytes > allocation_size_ - record.size_bytes) {
    Report(Severity::kInvariant, line_no,
           "value " + std::to_string(record.value.id) + " " + record.value.instruction +
               record.value.shape_index + ": offset " + std::to_string(record.offset_bytes) + " + size " +
               std::to_string(record.size_bytes) + " exceeds the size " + std::to_string(allocation_size_) +
               " of allocation " + std::to_string(allocation_index_));
  }
  sink()->OnAllocatedValue(std::move(record));
}

void BufferAssignmentParser::ParseCrossColorValue(std::string_view line, int64_t line_no) {
  constexpr std::string_view kContext = "cross-color reuse";
  CrossColorReuseRecord record;
  std::string_view rest;
  if (!ReadLeadingValueShort(line, kCrossColorValuePrefix.size(), line_no, kContext, &record.value, &rest)) return;
  if (!ConsumePrefix(&rest, " (color=") || !ConsumeSuffix(&rest, ")"))
    return Unknown(line, line_no, kContext);
  int64_t color = 0;
  if (!ReadCount(rest, "reuse color", line, line_no, kContext, &color)) return;
  if (color > std::numeric_limits<int32_t>::max()) {
    Report(Severity::kInvariant, line_no, "reuse color " + std::to_string(color) + " does not fit in int32");
    return;
  }
  record.allocation_index = allocation_index_;
  record.color = static_cast<int32_t>(color);
  sink()->OnCrossColorReuse(std::move(record));
}

void BufferAssignmentParser::ParseTotalBytes(std::string_view line, int64_t line_no) {
  std::string_view rest = line.substr(kTotalPrefix.size());
  size_t space = rest.find(' ');
  if (space != std::string_view::npos) {
    std::string_view human = rest.substr(space);  // ` (17.77MiB)` since 2021-08-09
    if (!human.starts_with(" (") || !human.ends_with(")")) return Unknown(line, line_no, "Total bytes used");
  }
  TotalBytesRecord record;
  if (!ReadCount(rest.substr(0, space), "Total bytes used", line, line_no, "Total bytes used",
                 &record.total_bytes)) {
    return;
  }
  saw_section_header_ = true;
  EmitValueBlock();
  section_ = Section::kSummary;
  if (allocation_count_ > 0 && (allocation_bytes_overflow_ || allocation_bytes_ != record.total_bytes)) {
    Report(Severity::kInvariant, line_no,
           "Total bytes used " + std::to_string(record.total_bytes) + " but the " +
               std::to_string(allocation_count_) + " allocation sizes sum to " +
               (allocation_bytes_overflow_ ? std::string("more than int64")
                                           : std::to_string(allocation_bytes_)));
  }
  sink()->OnTotalBytes(std::move(record));
}

// ---------------------------------------------------------------------------------------------------
// Used values

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

void BufferAssignmentParser::ResolveGluedLine(bool split) {
  glue_pending_ = false;
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

// ---------------------------------------------------------------------------------------------------
// Hand-over, rejection, end

void BufferAssignmentParser::StartLiveRange(std::string_view line, int64_t line_no) {
  EmitValueBlock();
  saw_section_header_ = true;
  section_ = Section::kLiveRange;
  instruction_text_sizes_.Clear();  // every later line goes to live_range_: no from-instruction line follows
  live_range_.ParseLine(line, line_no);
}

void BufferAssignmentParser::RejectPre2019(int64_t line_no) {
  Report(Severity::kError, line_no,
         "buffer assignment printed before 2019-09 (LogicalBuffer value lines `name[](#id @c) [offset,size]: "
         "shape` or `<id name @c>, positions:` blocks): not supported");
  block_open_ = false;
  section_ = Section::kRejected;
}

Status BufferAssignmentParser::Finish() {
  if (glue_pending_) ResolveGluedLine(false);
  CheckLastFromInstruction();
  FlushInstruction();
  if (section_ == Section::kRejected) {
    return Status::DataLoss(
        "buffer assignment printed before 2019-09 (TF 1.x value lines): this format is not supported; dump "
        "with "
        "a newer XLA");
  }
  if (block_open_) {
    bool complete = block_part_ == BlockPart::kFromInstruction ||
                    (!era_has_from_instruction_ && block_part_ == BlockPart::kUses);
    if (!complete) {
      Report(Severity::kWarning, last_line_no_,
             "file ends inside the Used-values block of value " + std::to_string(block_.value.id) + " " +
                 block_.value.instruction + " (started at line " + std::to_string(block_line_no_) +
                 "): truncated?");
    }
    EmitValueBlock();
  }
  if (!saw_section_header_) {
    Report(Severity::kError, 0,
           "no `BufferAssignment:`, `Total bytes used:`, `Used values:` or `HloLiveRange` line: not a "
           "buffer-assignment text");
    return Status::DataLoss("not a buffer-assignment text: none of its section headers was found");
  }
  if (section_ == Section::kLiveRange) return live_range_.Finish();  // it checks its own last line
  WarnIfLastLineUnknown(last_line_no_, "buffer-assignment");
  return Status::Ok();
}

}  // namespace xladb::ingest
