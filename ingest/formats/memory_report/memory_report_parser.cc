#include "ingest/formats/memory_report/memory_report_parser.h"

#include <cstdint>
#include <limits>
#include <optional>
#include <utility>

#include "ingest/text/blank_text.h"
#include "ingest/text/printed_number.h"

namespace xladb::ingest {
namespace {

using Severity = IssueRecord::Severity;
using Section = MemoryReportRowRecord::Section;

constexpr std::string_view kTotalBytesUsed = "Total bytes used: ";
constexpr std::string_view kTotalBytes = "Total bytes: ";
constexpr std::string_view kMemorySpace = "Memory Space: ";
constexpr std::string_view kColorOpen = " (color=";
constexpr std::string_view kBySizeTitle = "Allocations sorted by size:";
constexpr std::string_view kBySizeColumns = "cumulative_size; total_size - cumulative_size; allocation";
constexpr std::string_view kValuesTitle = "Allocations sorted by size with their values:";
constexpr std::string_view kTableColumnsHead = "cumulative_size;";
constexpr std::string_view kTableColumnsTail = "shapes_list";
constexpr std::string_view kAllocation = "allocation ";
constexpr std::string_view kRest = "The rest ";
constexpr std::string_view kRestAllocations = " allocations are less than ";
constexpr std::string_view kRestValues = " values are less than ";
constexpr std::string_view kRestTail = "% of the total size and not shown.";
constexpr std::string_view kPercentClose = "%); ";

bool IsDashRule(std::string_view s) {
  return s.size() >= 10 && s.find_first_not_of('-') == std::string_view::npos;
}

// Largest difference between a tsl::strings::HumanReadableNumBytes string and the byte count it was printed
// from (§6.4): `B` is exact; KiB keeps one decimal (±0.05 KiB); larger units first truncate the count to the
// unit below (< unit/1024) and keep two decimals (±0.005 unit). One more byte covers ParseHumanBytes's
// rounding to the nearest integer.
int64_t HumanRoundingBytes(std::string_view human) {
  human = StripBlanks(human);
  if (human.ends_with("KiB")) return 52;
  double unit = 1024.0 * 1024.0;
  for (std::string_view suffix : {"MiB", "GiB", "TiB", "PiB", "EiB"}) {
    if (human.ends_with(suffix)) return static_cast<int64_t>(unit / 1024.0 + unit * 0.005) + 1;
    unit *= 1024.0;
  }
  return 0;
}

// `allocation <index>: size <human>[, <flag>]*:` (ToShortString with human sizes, §2.2). Sets *index and
// *size_text; false if the text does not have that shape.
bool ParseHumanAllocationHeader(std::string_view header, int64_t* index, std::string_view* size_text) {
  if (!header.starts_with(kAllocation) || !header.ends_with(':')) return false;
  std::string_view rest = header.substr(kAllocation.size());
  const size_t colon = rest.find(": size ");
  if (colon == std::string_view::npos) return false;
  std::optional<int64_t> parsed = ParseInt64(rest.substr(0, colon));
  if (!parsed) return false;
  rest = rest.substr(colon + 7);
  size_t end = rest.find(',');
  if (end == std::string_view::npos) end = rest.size() - 1;  // the final ':'
  *index = *parsed;
  *size_text = rest.substr(0, end);
  return true;
}

// `<human>(<percent>%); <rest>`: the cumulative column shared by the first section and the tables.
bool SplitCumulative(std::string_view s, std::string_view* cumulative, std::string_view* percent,
                     std::string_view* rest) {
  const size_t open = s.find('(');
  if (open == std::string_view::npos) return false;
  const size_t close = s.find(kPercentClose, open);
  if (close == std::string_view::npos) return false;
  *cumulative = StripBlanks(s.substr(0, open));
  *percent = StripBlanks(s.substr(open + 1, close - open - 1));
  *rest = s.substr(close + kPercentClose.size());
  return !cumulative->empty() && !percent->empty();
}

// Splits off the next `;`-terminated column of `*rest` (blanks trimmed).
bool NextColumn(std::string_view* rest, std::string_view* column) {
  const size_t semi = rest->find(';');
  if (semi == std::string_view::npos) return false;
  *column = StripBlanks(rest->substr(0, semi));
  rest->remove_prefix(semi + 1);
  return true;
}

// |a - b| <= slack, without overflow (a difference past int64 is never within slack).
bool WithinSlack(int64_t a, int64_t b, int64_t slack) {
  int64_t difference = 0;
  if (__builtin_sub_overflow(a, b, &difference)) return false;
  return difference >= -slack && difference <= slack;
}

std::string Quoted(std::string_view s) { return "'" + std::string(s) + "'"; }

}  // namespace

void MemoryReportParser::ParseLine(std::string_view line, int64_t line_no) {
  if (era_ == Era::kNotAReport) return;  // reported once, at its first line
  switch (state_) {
    case State::kStart:
      if (!line.empty()) ParseFirstLine(line, line_no);
      return;
    case State::kV1Head:
    case State::kV1BySize:
      ParseV1BySize(line, line_no);
      return;
    case State::kV1Values:
      ParseV1Values(line, line_no);
      return;
    case State::kV2Space:
      ParseV2Space(line, line_no);
      return;
  }
}

void MemoryReportParser::ParseFirstLine(std::string_view line, int64_t line_no) {
  if (line.starts_with(kTotalBytesUsed)) {
    era_ = Era::kV1;
    state_ = State::kV1Head;
    if (!ParseTotal(line.substr(kTotalBytesUsed.size()), -1, line_no)) {
      CountUnknownLine(line, line_no, "memory report total");
    }
    return;
  }
  if (line.starts_with(kMemorySpace)) {
    era_ = Era::kV2;
    state_ = State::kV2Space;
    if (!ParseMemorySpaceHeader(line, line_no)) CountUnknownLine(line, line_no, "memory report V2");
    return;
  }
  era_ = Era::kNotAReport;
  CountUnknownLine(line, line_no, "memory report first line");
  Report(Severity::kError, line_no,
         "not a memory-usage report: the first line is neither `Total bytes used:` (V1) nor `Memory Space:` "
         "(V2)");
}

bool MemoryReportParser::ParseTotal(std::string_view rest, int32_t memory_space, int64_t line_no) {
  std::string_view number = rest;
  std::string_view human;
  const size_t space = rest.find(' ');
  if (space != std::string_view::npos) {
    number = rest.substr(0, space);
    human = rest.substr(space + 1);
    if (!human.starts_with('(') || !human.ends_with(')')) return false;
    human = human.substr(1, human.size() - 2);
  }
  std::optional<int64_t> total = ParseInt64(number);
  if (!total || *total < 0) {
    Report(Severity::kInvariant, line_no, "total bytes " + Quoted(number) + " is not a byte count in int64 range");
    return true;
  }
  if (!human.empty()) {
    std::optional<int64_t> approx = ParseHumanBytes(human);
    if (!approx || !WithinSlack(*approx, *total, HumanRoundingBytes(human))) {
      Report(Severity::kInvariant, line_no,
             "total bytes " + std::to_string(*total) + " disagrees with its human form " + Quoted(human));
    }
  }
  if (memory_space < 0) total_bytes_used_ = *total;
  MemoryReportTotalRecord record;
  record.memory_space = memory_space;
  record.total_bytes = *total;
  sink()->OnMemoryReportTotal(std::move(record));
  return true;
}

void MemoryReportParser::ParseV1BySize(std::string_view line, int64_t line_no) {
  if (line.empty() || line == kBySizeTitle || line == kBySizeColumns) return;
  if (IsDashRule(line)) {
    by_size_header_seen_ = true;
    state_ = State::kV1BySize;
    return;
  }
  if (line == kValuesTitle) {
    FinishFirstSection(line_no);
    state_ = State::kV1Values;
    return;
  }
  if (line.starts_with(kRest)) {
    if (ParseOmittedNote(line, /*values=*/false, line_no)) {
      by_size_.omitted = true;
      return;
    }
  } else if (by_size_header_seen_ && ParseBySizeRow(line, line_no)) {
    return;
  }
  CountUnknownLine(line, line_no, "memory report V1 `Allocations sorted by size:`");
}

bool MemoryReportParser::ParseBySizeRow(std::string_view line, int64_t line_no) {
  std::string_view cumulative_text;
  std::string_view percent_text;
  std::string_view rest;
  if (!SplitCumulative(StripLeadingBlanks(line), &cumulative_text, &percent_text, &rest)) return false;
  std::string_view remaining_text;
  if (!NextColumn(&rest, &remaining_text) || !rest.starts_with(' ')) return false;
  const std::string_view header = rest.substr(1);
  int64_t index = 0;
  std::string_view size_text;
  if (!ParseHumanAllocationHeader(header, &index, &size_text)) return false;

  std::optional<int64_t> cumulative = ParseHumanBytes(cumulative_text);
  std::optional<double> percent = ParseDouble(percent_text);
  std::optional<int64_t> remaining = ParseHumanBytes(remaining_text);
  std::optional<int64_t> size = ParseHumanBytes(size_text);
  if (!cumulative || *cumulative < 0 || !percent || *percent < 0 || !remaining || *remaining < 0 || !size ||
      *size < 0 || index < 0) {
    Report(Severity::kInvariant, line_no,
           "unreadable or negative number in allocation row: cumulative " + Quoted(cumulative_text) +
               ", percent " + Quoted(percent_text) + ", remaining " + Quoted(remaining_text) + ", allocation " +
               std::to_string(index) + " size " + Quoted(size_text));
    return true;
  }

  MemoryReportRowRecord row;
  row.section = Section::kAllocationsBySize;
  row.ordinal = next_ordinal_++;
  row.allocation_index = index;
  row.cumulative_bytes_approx = *cumulative;
  row.cumulative_percent = *percent;
  row.remaining_bytes_approx = *remaining;
  row.size_bytes_approx = *size;
  row.shapes = std::string(header);

  if (total_bytes_used_ >= 0) {
    const int64_t slack = HumanRoundingBytes(cumulative_text) + HumanRoundingBytes(remaining_text);
    int64_t sum = 0;
    if (__builtin_add_overflow(*cumulative, *remaining, &sum) || !WithinSlack(sum, total_bytes_used_, slack)) {
      Report(Severity::kInvariant, line_no,
             "allocation " + std::to_string(index) + ": cumulative " + Quoted(cumulative_text) + " + remaining " +
                 Quoted(remaining_text) + " is not Total bytes used " + std::to_string(total_bytes_used_));
    }
  }
  CheckRankedRow(&by_size_, row, cumulative_text, size_text, "allocations sorted by size", line_no);
  sink()->OnMemoryReportRow(std::move(row));
  return true;
}

void MemoryReportParser::FinishFirstSection(int64_t line_no) {
  if (first_section_checked_) return;
  first_section_checked_ = true;
  if (by_size_.omitted || !by_size_.has_row || total_bytes_used_ < 0) return;
  if (!WithinSlack(by_size_.cumulative, total_bytes_used_, HumanRoundingBytes(by_size_.cumulative_text))) {
    Report(Severity::kInvariant, line_no,
           "last cumulative size " + Quoted(by_size_.cumulative_text) + " of `Allocations sorted by size:` is not "
               "Total bytes used " + std::to_string(total_bytes_used_) + " although no allocation was omitted");
  }
}

void MemoryReportParser::ParseV1Values(std::string_view line, int64_t line_no) {
  if (line.empty()) {
    in_table_ = false;
    return;
  }
  if (line.starts_with(kAllocation)) {
    int64_t index = 0;
    std::string_view size_text;
    if (ParseHumanAllocationHeader(line, &index, &size_text)) {
      std::optional<int64_t> size = ParseHumanBytes(size_text);
      if (index < 0 || !size || *size < 0) {
        Report(Severity::kInvariant, line_no,
               "allocation header with unreadable or negative index/size: " + std::string(line.substr(0, 200)));
      }
      current_allocation_ = index;
      in_table_ = false;
      return;
    }
  } else if ((line.front() == '\t' || line.front() == ' ') &&
             ParseTableLine(StripLeadingBlanks(line), Section::kAllocationValues, line_no)) {
    return;
  }
  CountUnknownLine(line, line_no, "memory report V1 `Allocations sorted by size with their values:`");
}

void MemoryReportParser::ParseV2Space(std::string_view line, int64_t line_no) {
  if (line.empty()) {
    in_table_ = false;
    return;
  }
  if (line.starts_with(kMemorySpace)) {
    if (ParseMemorySpaceHeader(line, line_no)) return;
  } else if (line.starts_with(kTotalBytes)) {
    if (ParseTotal(line.substr(kTotalBytes.size()), memory_space_, line_no)) return;
  } else if ((line.front() == ' ' || line.front() == '\t') &&
             ParseTableLine(StripLeadingBlanks(line), Section::kMemorySpace, line_no)) {
    return;
  }
  CountUnknownLine(line, line_no, "memory report V2 `Memory Space:` group");
}

bool MemoryReportParser::ParseMemorySpaceHeader(std::string_view line, int64_t line_no) {
  std::string_view rest = line.substr(kMemorySpace.size());
  const size_t open = rest.rfind(kColorOpen);
  if (open == std::string_view::npos || !rest.ends_with(')')) return false;
  std::string_view color_text = rest.substr(open + kColorOpen.size());
  color_text.remove_suffix(1);
  std::optional<int64_t> color = ParseInt64(color_text);
  if (!color || *color < 0 || *color > std::numeric_limits<int32_t>::max()) {
    Report(Severity::kInvariant, line_no, "memory space color " + Quoted(color_text) + " is not a color number");
    return true;
  }
  memory_space_ = static_cast<int32_t>(*color);
  memory_space_name_ = std::string(rest.substr(0, open));
  table_ordinal_ = -1;
  in_table_ = false;
  table_.Reset();
  return true;
}

bool MemoryReportParser::ParseTableLine(std::string_view body, Section section, int64_t line_no) {
  if (body.starts_with(kTableColumnsHead) && body.ends_with(kTableColumnsTail)) {
    ++table_ordinal_;
    table_.Reset();
    in_table_ = true;
    return true;
  }
  if (!in_table_) return false;
  if (IsDashRule(body)) return true;
  if (body.starts_with(kRest)) {
    if (!ParseOmittedNote(body, /*values=*/true, line_no)) return false;
    table_.omitted = true;
    return true;
  }
  return ParseTableRow(body, section, line_no);
}

bool MemoryReportParser::ParseTableRow(std::string_view body, Section section, int64_t line_no) {
  std::string_view cumulative_text;
  std::string_view percent_text;
  std::string_view rest;
  if (!SplitCumulative(body, &cumulative_text, &percent_text, &rest)) return false;
  std::string_view size_text;
  std::string_view offset_text;
  std::string_view count_text;
  if (!NextColumn(&rest, &size_text) || !NextColumn(&rest, &offset_text) || !NextColumn(&rest, &count_text)) {
    return false;
  }
  if (rest.starts_with(' ')) rest.remove_prefix(1);

  std::optional<int64_t> cumulative = ParseHumanBytes(cumulative_text);
  std::optional<double> percent = ParseDouble(percent_text);
  std::optional<int64_t> size = ParseHumanBytes(size_text);
  std::optional<int64_t> offset = ParseInt64(offset_text);
  std::optional<int64_t> count = ParseInt64(count_text);
  if (!cumulative || *cumulative < 0 || !percent || *percent < 0 || !size || *size < 0 || !offset || *offset < 0 ||
      !count || *count < 0) {
    Report(Severity::kInvariant, line_no,
           "unreadable or negative number in table row: cumulative " + Quoted(cumulative_text) + ", percent " +
               Quoted(percent_text) + ", size " + Quoted(size_text) + ", offset " + Quoted(offset_text) +
               ", values " + Quoted(count_text));
    return true;
  }

  MemoryReportRowRecord row;
  row.section = section;
  row.ordinal = next_ordinal_++;
  if (section == Section::kAllocationValues) {
    row.allocation_index = current_allocation_;
  } else {
    row.memory_space = memory_space_;
    row.memory_space_name = memory_space_name_;
  }
  row.table_ordinal = table_ordinal_;
  row.cumulative_bytes_approx = *cumulative;
  row.cumulative_percent = *percent;
  row.size_bytes_approx = *size;
  row.offset_bytes = *offset;
  row.value_count = *count;
  row.shapes = std::string(rest);
  CheckRankedRow(&table_, row, cumulative_text, size_text, "per-allocation table", line_no);
  sink()->OnMemoryReportRow(std::move(row));
  return true;
}

bool MemoryReportParser::ParseOmittedNote(std::string_view line, bool values, int64_t line_no) {
  if (!line.starts_with(kRest) || !line.ends_with(kRestTail)) return false;
  std::string_view rest = line.substr(kRest.size(), line.size() - kRest.size() - kRestTail.size());
  const std::string_view middle = values ? kRestValues : kRestAllocations;
  const size_t at = rest.find(middle);
  if (at == std::string_view::npos) return false;
  const std::string_view count_text = rest.substr(0, at);
  const std::string_view percent_text = rest.substr(at + middle.size());
  std::optional<int64_t> count = ParseInt64(count_text);
  std::optional<double> percent = ParseDouble(percent_text);
  if (!count || *count < 0 || !percent) {
    Report(Severity::kInvariant, line_no,
           "truncation note with unreadable count " + Quoted(count_text) + " or percent " + Quoted(percent_text));
    return true;
  }
  MemoryReportOmittedRecord record;
  record.after_ordinal = next_ordinal_ - 1;
  record.omitted_count = *count;
  record.threshold_percent = *percent;
  record.values = values;
  sink()->OnMemoryReportOmitted(std::move(record));
  return true;
}

void MemoryReportParser::CheckRankedRow(RankedList* list, const MemoryReportRowRecord& row,
                                        std::string_view cumulative_text, std::string_view size_text,
                                        std::string_view where, int64_t line_no) {
  if (list->has_row) {
    const std::string at = " in " + std::string(where) + " (row " + std::to_string(row.ordinal) + ")";
    if (row.cumulative_bytes_approx < list->cumulative) {
      Report(Severity::kInvariant, line_no,
             "cumulative size decreases from " + Quoted(list->cumulative_text) + " to " + Quoted(cumulative_text) + at);
    }
    // NaN percentages (a zero total) compare false and are never reported.
    if (row.cumulative_percent < list->percent) {
      Report(Severity::kInvariant, line_no,
             "cumulative percentage decreases from " + std::to_string(list->percent) + "% to " +
                 std::to_string(row.cumulative_percent) + "%" + at);
    }
    if (row.size_bytes_approx > list->size) {
      Report(Severity::kInvariant, line_no,
             "size increases from " + Quoted(list->size_text) + " to " + Quoted(size_text) + at +
                 ", but rows are sorted by size descending");
    }
  }
  list->has_row = true;
  list->cumulative = row.cumulative_bytes_approx;
  list->cumulative_text = std::string(cumulative_text);
  list->percent = row.cumulative_percent;
  list->size = row.size_bytes_approx;
  list->size_text = std::string(size_text);
}

Status MemoryReportParser::Finish() {
  switch (era_) {
    case Era::kNotAReport:
      return Status::DataLoss(
          "not a memory-usage report: the first line is neither `Total bytes used:` nor `Memory Space:`");
    case Era::kUnknown:
      Report(Severity::kWarning, 0, "empty memory-usage report");
      return Status::Ok();
    case Era::kV1:
      if (state_ != State::kV1Values) {
        FinishFirstSection(0);
        Report(Severity::kWarning, 0,
               "memory-usage report ends before `Allocations sorted by size with their values:` (truncated?)");
      }
      return Status::Ok();
    case Era::kV2:
      return Status::Ok();
  }
  return Status::Ok();
}

}  // namespace xladb::ingest
