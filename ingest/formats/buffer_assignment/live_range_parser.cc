#include "ingest/formats/buffer_assignment/live_range_parser.h"

#include <cmath>
#include <optional>
#include <string>
#include <utility>

#include "ingest/formats/buffer_assignment/hlo_value_text.h"
#include "ingest/text/printed_number.h"

namespace xladb::ingest {
namespace {

using Severity = IssueRecord::Severity;

constexpr std::string_view kSequenceHeader = "  InstructionSequence:";
constexpr std::string_view kRangesHeader = "  BufferLiveRange:";
constexpr std::string_view kPeakPrefix = "  Live ranges at ";
constexpr std::string_view kPeakSuffix = " (peak):";
constexpr std::string_view kStackTracePrefix = "  Stack trace breakdown for peak usage: ";
constexpr std::string_view kEntryIndent = "    ";

// Box-drawing pieces of FormatStackTraceBreakdown (UTF-8).
constexpr std::string_view kTreeBranch = "\u251c\u2500\u2500 ";  // "├── "
constexpr std::string_view kTreeLast = "\u2514\u2500\u2500 ";    // "└── "
constexpr std::string_view kTreeContinue = "\u2502   ";          // "│   "
constexpr std::string_view kTreeBlank = "    ";

std::string_view SectionName(int section) {
  static constexpr std::string_view kNames[] = {"live range (before header)",
                                                "live range (not available)",
                                                "live range header",
                                                "InstructionSequence",
                                                "BufferLiveRange",
                                                "peak list",
                                                "stack trace breakdown"};
  return kNames[section];
}

// Reads the depth and the rest of a stack-tree line: `  ` + (`│   ` | `    `)* + (`├── ` | `└── `) for nested
// nodes, `    ` for top-level ones. Returns false if the prefix is not of that form.
bool ReadTreePrefix(std::string_view* rest, int32_t* depth) {
  if (!ConsumePrefix(rest, "  ")) return false;
  int32_t groups = 0;
  for (;;) {
    if (ConsumePrefix(rest, kTreeBranch) || ConsumePrefix(rest, kTreeLast)) break;
    if (ConsumePrefix(rest, kTreeContinue)) {
      ++groups;
      continue;
    }
    if (rest->starts_with(kTreeBlank)) {
      rest->remove_prefix(kTreeBlank.size());
      ++groups;
      continue;
    }
    if (groups == 0 && ConsumePrefix(rest, "  ")) break;  // top-level: a plain two-space connector
    return false;
  }
  *depth = groups;
  return true;
}

// `N bytes` with N space-grouped (or plain, before 2025-08).
std::optional<int64_t> ParseGroupedBytes(std::string_view text) {
  if (!ConsumeSuffix(&text, " bytes")) return std::nullopt;
  return ParseSpaceGroupedInt64(text);
}

}  // namespace

LiveRangeParser::LiveRangeParser(RecordSink* sink) : BufferTextParser(sink) {}

void LiveRangeParser::ParseLine(std::string_view line, int64_t line_no) {
  last_line_no_ = line_no;
  if (line.empty()) return;  // blank lines separate nothing here; trailing ones are common
  if (section_ == Section::kStart) {
    if (line.starts_with(kHeaderPrefix)) return ParseHeader(line, line_no);
    if (line == kNotAvailableLine) {
      section_ = Section::kNotAvailable;
      Report(Severity::kWarning, line_no,
             "HloLiveRange not available (finalized or constructed from proto): no live ranges in this file");
      return;
    }
    return Unknown(line, line_no, SectionName(static_cast<int>(section_)));
  }
  if (section_ == Section::kNotAvailable) {
    return Unknown(line, line_no, SectionName(static_cast<int>(section_)));
  }

  // Section headers (two-space indent).
  if (line == kSequenceHeader) {
    section_ = Section::kSchedule;
    return;
  }
  if (line == kRangesHeader) {
    CheckScheduleLength(line_no);
    section_ = Section::kRanges;
    return;
  }
  if (line.starts_with(kPeakPrefix) && line.ends_with(kPeakSuffix)) {
    CheckScheduleLength(line_no);
    return StartPeak(line, line_no);
  }
  if (line.starts_with(kStackTracePrefix)) return StartStackTrace(line, line_no);

  switch (section_) {
    case Section::kSchedule:
      if (line.starts_with(kEntryIndent)) return ParseScheduleEntry(line, line_no);
      break;
    case Section::kRanges:
      if (line.starts_with(kEntryIndent)) return ParseRange(line, line_no);
      break;
    case Section::kPeak:
      if (line.starts_with(kEntryIndent)) return ParsePeakLine(line, line_no);
      break;
    case Section::kStackTrace:
      return ParseStackTraceNode(line, line_no);
    default:
      break;
  }
  Unknown(line, line_no, SectionName(static_cast<int>(section_)));
}

void LiveRangeParser::ParseHeader(std::string_view line, int64_t line_no) {
  std::string_view rest = line.substr(kHeaderPrefix.size());
  if (!ConsumeSuffix(&rest, "):")) return Unknown(line, line_no, "live range header");
  int64_t end_time = 0;
  if (!ReadCount(rest, "HloLiveRange max", line, line_no, "live range header", &end_time)) return;
  schedule_end_time_ = end_time;
  section_ = Section::kHeader;
  LiveRangeHeaderRecord record;
  record.schedule_end_time = end_time;
  sink()->OnLiveRangeHeader(std::move(record));
}

void LiveRangeParser::ParseScheduleEntry(std::string_view line, int64_t line_no) {
  std::string_view rest = line.substr(kEntryIndent.size());
  size_t colon = rest.find(':');
  if (colon == std::string_view::npos || colon + 1 == rest.size()) {
    return Unknown(line, line_no, "InstructionSequence");
  }
  int64_t time = 0;
  if (!ReadCount(rest.substr(0, colon), "schedule time", line, line_no, "InstructionSequence", &time)) return;
  if (time != schedule_entries_) {
    Report(Severity::kInvariant, line_no,
           "InstructionSequence entry " + std::to_string(schedule_entries_) + " is printed with time " +
               std::to_string(time));
  }
  ++schedule_entries_;
  ScheduleEntryRecord record;
  record.time = time;
  record.instruction = std::string(rest.substr(colon + 1));
  sink()->OnScheduleEntry(std::move(record));
}

void LiveRangeParser::CheckScheduleLength(int64_t line_no) {
  if (schedule_checked_ || schedule_end_time_ < 0) return;
  schedule_checked_ = true;
  if (schedule_entries_ != schedule_end_time_) {
    Report(Severity::kInvariant, line_no,
           "HloLiveRange (max " + std::to_string(schedule_end_time_) + ") but InstructionSequence has " +
               std::to_string(schedule_entries_) + " entries");
  }
}

void LiveRangeParser::ParseRange(std::string_view line, int64_t line_no) {
  std::string_view rest = line.substr(kEntryIndent.size());
  size_t colon = rest.rfind(':');
  size_t dash = colon == std::string_view::npos ? std::string_view::npos : rest.find('-', colon);
  if (dash == std::string_view::npos) return Unknown(line, line_no, "BufferLiveRange");
  std::string_view key = rest.substr(0, colon);
  std::optional<NameWithShapeIndex> split = SplitGluedShapeIndex(key);
  if (!split) return Unknown(line, line_no, "BufferLiveRange");
  int64_t start = 0;
  int64_t end = 0;
  if (!ReadCount(rest.substr(colon + 1, dash - colon - 1), "live range start", line, line_no,
                 "BufferLiveRange", &start) ||
      !ReadCount(rest.substr(dash + 1), "live range end", line, line_no, "BufferLiveRange", &end)) {
    return;
  }
  LiveRangeRecord record;
  record.instruction = std::string(split->name);
  if (!split->shape_index.empty()) record.shape_index = std::string(split->shape_index);
  record.start = start;
  record.end = end;
  if (!ranges_frozen_) {
    ranges_.Append({static_cast<uint64_t>(start), static_cast<uint64_t>(end), split->name.size()}, key);
  }
  sink()->OnLiveRange(std::move(record));
}

void LiveRangeParser::StartPeak(std::string_view line, int64_t line_no) {
  std::string_view number =
      line.substr(kPeakPrefix.size(), line.size() - kPeakPrefix.size() - kPeakSuffix.size());
  int64_t time = 0;
  if (!ReadCount(number, "peak time", line, line_no, "peak list", &time)) return;
  if (section_ == Section::kPeak) ClosePeakList(line_no);  // a second peak list: check the first one
  section_ = Section::kPeak;
  peak_time_ = time;
  peak_variant_ = PeakVariant::kNone;
  peak_ordinal_ = 0;
  peak_cursor_ = 0;
  running_sum_ = 0;
  peak_closed_ = false;
  peak_unmatched_.Clear();
  peak_unmatched_built_ = false;
  ranges_frozen_ = true;
  spanning_.clear();
  ranges_.ForEach<3>([&](const std::array<uint64_t, 3>& numbers, std::string_view key) {
    const auto start = static_cast<int64_t>(numbers[0]);
    const auto end = static_cast<int64_t>(numbers[1]);
    if (start <= time && time <= end) spanning_.push_back({key, static_cast<size_t>(numbers[2])});
  });
  PeakMomentRecord record;
  record.time = time;
  sink()->OnPeakMoment(std::move(record));
}

int64_t LiveRangeParser::AlignPeakLine(std::string_view key, bool compare_index, int64_t line_no) {
  auto matches = [&](const SpanningRange& r) {
    return compare_index ? r.key == key : r.key.substr(0, r.name_size) == key;
  };
  if (peak_cursor_ < spanning_.size() && matches(spanning_[peak_cursor_])) {
    return static_cast<int64_t>(peak_cursor_++);
  }
  size_t found = peak_cursor_;
  while (found < spanning_.size() && !matches(spanning_[found])) ++found;
  std::string expected = peak_cursor_ < spanning_.size() ? std::string(spanning_[peak_cursor_].key)
                                                         : std::string("(end of the spanning live ranges)");
  if (found == spanning_.size()) {
    Report(Severity::kInvariant, line_no,
           "peak line " + std::to_string(peak_ordinal_) + " `" + std::string(key) +
               "` is not the next live range spanning t=" + std::to_string(peak_time_) + " (expected `" +
               expected + "`, " + std::to_string(spanning_.size()) + " ranges span t)");
    return -1;
  }
  Report(Severity::kInvariant, line_no,
         "peak line " + std::to_string(peak_ordinal_) + " `" + std::string(key) + "` skips " +
             std::to_string(found - peak_cursor_) +
             " live range(s) spanning t=" + std::to_string(peak_time_) + ", first `" + expected + "`");
  peak_cursor_ = found + 1;
  return static_cast<int64_t>(found);
}

void LiveRangeParser::ParsePeakLine(std::string_view line, int64_t line_no) {
  std::string_view rest = line.substr(kEntryIndent.size());
  // V3 tail first: ` (cumulative: <m> bytes)`.
  std::string_view cumulative_text;
  bool has_cumulative = false;
  if (ConsumeSuffix(&rest, " bytes)")) {
    size_t open = rest.rfind(" (cumulative: ");
    if (open == std::string_view::npos) return Unknown(line, line_no, "peak list");
    cumulative_text = rest.substr(open + 14);
    rest = rest.substr(0, open);
    has_cumulative = true;
  }
  if (!ConsumeSuffix(&rest, " bytes")) return Unknown(line, line_no, "peak list");
  size_t colon = rest.find(": ");
  if (colon == std::string_view::npos) return Unknown(line, line_no, "peak list");
  std::string_view key = rest.substr(0, colon);
  std::optional<NameWithShapeIndex> split = SplitGluedShapeIndex(key);
  if (!split) return Unknown(line, line_no, "peak list");
  int64_t bytes = 0;
  int64_t cumulative = -1;
  if (!ReadCount(rest.substr(colon + 2), "peak buffer size", line, line_no, "peak list", &bytes)) return;
  if (has_cumulative &&
      !ReadCount(cumulative_text, "peak cumulative size", line, line_no, "peak list", &cumulative)) {
    return;
  }
  bool index_printed = !split->shape_index.empty();
  PeakVariant variant = has_cumulative  ? PeakVariant::kV3
                        : index_printed ? PeakVariant::kV2
                                        : PeakVariant::kV1;
  if (peak_variant_ == PeakVariant::kNone) peak_variant_ = variant;

  PeakBufferRecord record;
  record.ordinal = peak_ordinal_;
  record.instruction = std::string(split->name);
  record.index_printed = index_printed;
  record.logical_bytes = bytes;
  record.cumulative_bytes = cumulative;
  if (index_printed) record.shape_index = std::string(split->shape_index);

  if (peak_variant_ == PeakVariant::kV3) {
    if (!peak_unmatched_built_) {
      for (const SpanningRange& r : spanning_) ++*peak_unmatched_.Insert(r.key, 0).first;
      peak_unmatched_built_ = true;
    }
    uint64_t* unmatched = peak_unmatched_.Find(key);
    if (unmatched == nullptr || *unmatched == 0) {
      Report(Severity::kInvariant, line_no,
             "peak line " + std::to_string(peak_ordinal_) + " `" + std::string(key) +
                 "` is not a live range spanning t=" + std::to_string(peak_time_) +
                 (unmatched == nullptr ? std::string() : std::string(" (listed twice)")));
    } else {
      --*unmatched;
    }
  } else {
    int64_t range = AlignPeakLine(key, /*compare_index=*/peak_variant_ == PeakVariant::kV2, line_no);
    if (!index_printed && range >= 0) {
      const SpanningRange& r = spanning_[static_cast<size_t>(range)];
      record.shape_index = std::string(r.key.substr(r.name_size));
    }
  }

  if (has_cumulative) {
    // Checked addition: sizes near int64's limit overflowed the running sum (undefined behaviour; found after
    // fuzzing found the same in the OOM parser, tests/fuzz/regressions/live_range_parser/).
    const bool overflow = __builtin_add_overflow(running_sum_, bytes, &running_sum_);
    if (overflow || cumulative != running_sum_) {
      Report(Severity::kInvariant, line_no,
             "peak line " + std::to_string(peak_ordinal_) + " `" + std::string(key) + "`: cumulative " +
                 std::to_string(cumulative) + " bytes, but the running sum of sizes is " +
                 (overflow ? std::string("more than int64") : std::to_string(running_sum_)));
      running_sum_ = cumulative;  // resynchronise so one bad line is one issue
    }
  }
  ++peak_ordinal_;
  sink()->OnPeakBuffer(std::move(record));
}

void LiveRangeParser::ClosePeakList(int64_t line_no) {
  if (peak_closed_ || peak_time_ < 0) return;
  peak_closed_ = true;
  size_t missing = 0;
  std::string first_missing;
  if (peak_variant_ == PeakVariant::kV3) {
    for (const SpanningRange& r : spanning_) {
      uint64_t* unmatched = peak_unmatched_.Find(r.key);
      if (unmatched != nullptr && *unmatched > 0) {
        if (missing == 0) first_missing = std::string(r.key);
        missing += static_cast<size_t>(*unmatched);
        *unmatched = 0;
      }
    }
  } else if (peak_cursor_ < spanning_.size()) {
    missing = spanning_.size() - peak_cursor_;
    first_missing = std::string(spanning_[peak_cursor_].key);
  }
  if (missing > 0) {
    Report(Severity::kInvariant, line_no,
           "peak list at t=" + std::to_string(peak_time_) + " lacks " + std::to_string(missing) + " of the " +
               std::to_string(spanning_.size()) + " live ranges spanning t (first `" + first_missing + "`)");
  }
  // Only a later peak list reads them again, and it builds its own.
  spanning_ = std::vector<SpanningRange>();
  peak_unmatched_.Clear();
}

void LiveRangeParser::StartStackTrace(std::string_view line, int64_t line_no) {
  std::optional<int64_t> bytes = ParseGroupedBytes(line.substr(kStackTracePrefix.size()));
  if (!bytes) return Unknown(line, line_no, "stack trace breakdown");
  ClosePeakList(line_no);
  section_ = Section::kStackTrace;
  StackTraceHeaderRecord record;
  record.peak_bytes = *bytes;
  stack_peak_bytes_ = *bytes;
  sink()->OnStackTraceHeader(std::move(record));
}

void LiveRangeParser::ParseStackTraceNode(std::string_view line, int64_t line_no) {
  std::string_view rest = line;
  StackTraceNodeRecord node;
  if (!ReadTreePrefix(&rest, &node.depth)) return Unknown(line, line_no, "stack trace breakdown");
  // Anchored at the end: ` (<p>%, total: <N> bytes, current: <N> bytes, remaining: <N> bytes)`, or the first
  // form ` (<p>%, <N> bytes)`.
  if (!ConsumeSuffix(&rest, ")")) return Unknown(line, line_no, "stack trace breakdown");
  std::optional<int64_t> total;
  size_t remaining_at = rest.rfind(", remaining: ");
  if (remaining_at != std::string_view::npos) {
    std::optional<int64_t> remaining = ParseGroupedBytes(rest.substr(remaining_at + 13));
    rest = rest.substr(0, remaining_at);
    size_t current_at = rest.rfind(", current: ");
    if (!remaining || current_at == std::string_view::npos) {
      return Unknown(line, line_no, "stack trace breakdown");
    }
    std::optional<int64_t> current = ParseGroupedBytes(rest.substr(current_at + 11));
    rest = rest.substr(0, current_at);
    size_t total_at = rest.rfind("%, total: ");
    if (!current || total_at == std::string_view::npos)
      return Unknown(line, line_no, "stack trace breakdown");
    total = ParseGroupedBytes(rest.substr(total_at + 10));
    rest = rest.substr(0, total_at);
    node.current_bytes = *current;
    node.remaining_bytes = *remaining;
  } else {
    size_t total_at = rest.rfind("%, ");
    if (total_at == std::string_view::npos) return Unknown(line, line_no, "stack trace breakdown");
    total = ParseGroupedBytes(rest.substr(total_at + 3));
    rest = rest.substr(0, total_at);
    node.current_bytes = -1;
    node.remaining_bytes = -1;
  }
  size_t open = rest.rfind(" (");
  if (!total || open == std::string_view::npos) return Unknown(line, line_no, "stack trace breakdown");
  std::optional<double> percent = ParseDouble(rest.substr(open + 2));
  if (!percent) return Unknown(line, line_no, "stack trace breakdown");
  node.ordinal = stack_node_ordinal_++;
  node.name = std::string(rest.substr(0, open));
  node.total_bytes = *total;
  if (!std::isfinite(*percent)) {
    // Stored as the share it stands for (a store keeps no NaN alike everywhere: SQLite's REAL takes it as
    // NULL, and stack_trace_nodes.percent is NOT NULL).
    const double share = stack_peak_bytes_ > 0 ? 100.0 * static_cast<double>(*total) / stack_peak_bytes_ : 0.0;
    Report(Severity::kInvariant, line_no,
           "stack trace node '" + node.name + "': percentage " + std::string(rest.substr(open + 2)) +
               " is not a finite number; stored as " + std::to_string(share));
    percent = share;
  }
  node.percent = *percent;
  sink()->OnStackTraceNode(std::move(node));
}

Status LiveRangeParser::Finish() {
  if (section_ == Section::kStart) {
    if (embedded()) {
      // The tail of a buffer-assignment file whose header line was unreadable: the file itself was read.
      Report(Severity::kWarning, last_line_no_,
             "the HloLiveRange tail has no readable `HloLiveRange (max T):` header");
      return Status::Ok();
    }
    Report(Severity::kError, 0, "no `HloLiveRange (max T):` header: not an HloLiveRange text");
    return Status::DataLoss("not an HloLiveRange text: no `HloLiveRange (max T):` header");
  }
  if (section_ == Section::kNotAvailable) return Status::Ok();
  if (section_ == Section::kHeader || section_ == Section::kSchedule || section_ == Section::kRanges) {
    Report(Severity::kWarning, last_line_no_,
           std::string("file ends inside the ") + std::string(SectionName(static_cast<int>(section_))) +
               " section, before the peak list (truncated?)");
  }
  if (section_ == Section::kPeak) ClosePeakList(last_line_no_);
  WarnIfLastLineUnknown(last_line_no_, "live-range");
  return Status::Ok();
}

}  // namespace xladb::ingest
