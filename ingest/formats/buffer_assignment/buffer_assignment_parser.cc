#include "ingest/formats/buffer_assignment/buffer_assignment_parser.h"

#include <limits>
#include <optional>
#include <string>
#include <utility>

#include "ingest/text/hlo_instruction_text.h"
#include "ingest/formats/buffer_assignment/hlo_value_text.h"
#include "ingest/formats/buffer_assignment/value_short_text.h"

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
  if (glue_pending_) ResolveGluedLine(line);
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
  if (glue_pending_) ResolveGluedLine({});
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
