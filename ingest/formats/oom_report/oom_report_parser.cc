#include "ingest/formats/oom_report/oom_report_parser.h"

#include <utility>

#include "ingest/text/blank_text.h"
#include "ingest/text/hlo_instruction_text.h"
#include "ingest/text/printed_number.h"

namespace xladb::ingest {
namespace {

using Severity = IssueRecord::Severity;

constexpr std::string_view kHeader = "BufferAssignment OOM Debugging.";
constexpr std::string_view kStatsTitle = "BufferAssignment stats:";
constexpr std::string_view kPeakBuffers = "Peak buffers:";
constexpr std::string_view kBuffer = "Buffer ";
constexpr std::string_view kSize = "Size: ";
constexpr std::string_view kOperator = "Operator: ";
constexpr std::string_view kEntryParameter = "Entry Parameter Subshape: ";
constexpr std::string_view kLabel = "XLA Label: ";
constexpr std::string_view kShape = "Shape: ";

bool IsSeparator(std::string_view stripped) {
  return stripped.size() >= 10 && stripped.find_first_not_of('=') == std::string_view::npos;
}

bool IsStatLabel(std::string_view label) {
  if (label.empty()) return false;
  for (char c : label) {
    if (!((c >= 'a' && c <= 'z') || c == '_' || c == ' ')) return false;
  }
  return true;
}

}  // namespace

void OomReportParser::ParseLine(std::string_view line, int64_t line_no) {
  if (line.ends_with(kHeader)) {
    StartReport(line_no);
    return;
  }
  const std::string_view stripped = StripBlanks(line);
  const bool indented = !stripped.empty() && IsBlank(line.front());  // blank-only lines count as empty
  switch (state_) {
    case State::kPreamble:
      if (indented && StartBuffer(stripped, line_no)) {
        Report(Severity::kWarning, line_no,
               "OOM report starts mid-way, at `" + std::string(stripped) +
                   "`: no `BufferAssignment OOM Debugging.` header or stats before it");
        return;
      }
      ++preamble_lines_;
      ScanLogLine(line);
      return;
    case State::kStats:
      if (line.empty() || line == kStatsTitle) return;
      if (line == kPeakBuffers) {
        saw_peak_buffers_ = true;
        state_ = State::kBetween;
        return;
      }
      ParseStat(line, line_no);
      return;
    case State::kBetween:
      if (stripped.empty()) return;
      if (!indented) {
        state_ = State::kTrailer;
        ++trailing_lines_;
        ScanLogLine(line);
        return;
      }
      if (!StartBuffer(stripped, line_no)) CountUnknownLine(line, line_no, "OOM report peak buffers");
      return;
    case State::kBuffer:
      if (!indented) {
        DropTruncatedBuffer("a non-indented line follows it at line " + std::to_string(line_no));
        if (stripped.empty()) {
          state_ = State::kBetween;
          return;
        }
        state_ = State::kTrailer;
        ++trailing_lines_;
        ScanLogLine(line);
        return;
      }
      if (stripped.starts_with(kBuffer) && stripped.ends_with(':')) {
        DropTruncatedBuffer("the next buffer starts at line " + std::to_string(line_no));
        // The open buffer is gone: unless this line starts the next one (`Buffer x:` with a non-number does
        // not), no buffer is open, and ParseBufferLine must not run on the empty pending_ (found by fuzzing:
        // it wrote into a disengaged std::optional, a leak under ASan and undefined behaviour).
        state_ = State::kBetween;
        if (StartBuffer(stripped, line_no)) return;
      } else if (ParseBufferLine(stripped, line_no)) {
        return;
      }
      CountUnknownLine(line, line_no, "OOM report buffer");
      return;
    case State::kTrailer:
      ++trailing_lines_;
      ScanLogLine(line);
      return;
  }
}

void OomReportParser::ScanLogLine(std::string_view line) {
  constexpr std::string_view kFailed = "Out of memory while trying to allocate ";
  constexpr std::string_view kLimit = "Limit:";
  const auto emit = [&](const char* label, std::string_view digits) {
    std::optional<int64_t> bytes = ParseInt64(digits);
    if (!bytes || *bytes < 0) return false;
    OomStatRecord record;
    record.label = label;
    record.bytes_approx = *bytes;
    record.bytes_text = std::string(digits) + " bytes";
    sink()->OnOomStat(std::move(record));
    return true;
  };
  if (const size_t at = line.find(kFailed); !saw_failed_allocation_ && at != std::string_view::npos) {
    std::string_view rest = line.substr(at + kFailed.size());
    const size_t end = rest.find(" bytes");
    if (end != std::string_view::npos) saw_failed_allocation_ = emit(kOomFailedAllocationLabel, rest.substr(0, end));
    return;
  }
  const std::string_view stripped = StripBlanks(line);
  if (!saw_limit_ && stripped.starts_with(kLimit)) {
    saw_limit_ = emit(kOomLimitLabel, StripBlanks(stripped.substr(kLimit.size())));
  }
}

void OomReportParser::StartReport(int64_t line_no) {
  if (pending_) DropTruncatedBuffer("a new report starts at line " + std::to_string(line_no));
  ++reports_;
  state_ = State::kStats;
  last_buffer_number_ = -1;
  last_size_bytes_ = -1;
  last_size_text_.clear();
}

void OomReportParser::ParseStat(std::string_view line, int64_t line_no) {
  const size_t colon = line.find(": ");
  if (colon == std::string_view::npos || !IsStatLabel(StripBlanks(line.substr(0, colon)))) {
    CountUnknownLine(line, line_no, "OOM report stats");
    return;
  }
  OomStatRecord record;
  record.label = std::string(StripBlanks(line.substr(0, colon)));
  std::string_view value = StripBlanks(line.substr(colon + 2));
  std::string_view percent_text;
  if (value.ends_with("%)")) {
    const size_t open = value.rfind(" (");
    if (open == std::string_view::npos) {
      CountUnknownLine(line, line_no, "OOM report stats");
      return;
    }
    percent_text = value.substr(open + 2, value.size() - open - 4);
    value = StripBlanks(value.substr(0, open));
  }
  std::optional<int64_t> bytes = ParseHumanBytes(value);
  std::optional<double> percent;
  if (!percent_text.empty()) percent = ParseDouble(percent_text);
  if (!bytes || (!percent_text.empty() && !percent)) {
    Report(Severity::kInvariant, line_no,
           "stat '" + record.label + "' has an unreadable size '" + std::string(value) + "' or percent '" +
               std::string(percent_text) + "'");
    return;
  }
  record.bytes_approx = *bytes;
  record.bytes_text = std::string(value);
  if (percent) record.percent = *percent;
  sink()->OnOomStat(std::move(record));
}

bool OomReportParser::StartBuffer(std::string_view stripped, int64_t line_no) {
  if (!stripped.starts_with(kBuffer) || !stripped.ends_with(':')) return false;
  const std::string_view number_text = stripped.substr(kBuffer.size(), stripped.size() - kBuffer.size() - 1);
  if (number_text.empty() || number_text.find_first_not_of("0123456789") != std::string_view::npos) return false;
  // Not emplace(): clang 14 evaluates is_default_constructible of this nested struct (with default member
  // initializers) while OomReportParser is still incomplete, caches `false`, and rejects emplace().
  pending_.emplace(PendingBuffer());
  pending_->first_line = line_no;
  state_ = State::kBuffer;
  std::optional<int64_t> number = ParseInt64(number_text);
  if (number) {
    pending_->record.buffer_number = *number;
  } else {
    pending_->record.buffer_number = -1;
    Report(Severity::kInvariant, line_no, "buffer number " + std::string(number_text) + " is past int64");
  }
  return true;
}

bool OomReportParser::ParseBufferLine(std::string_view stripped, int64_t line_no) {
  OomBufferRecord& record = pending_->record;
  if (IsSeparator(stripped)) {
    FinishBuffer(line_no);
    return true;
  }
  if (stripped.starts_with(kSize)) {
    record.size_text = std::string(stripped.substr(kSize.size()));
    pending_->has_size = true;
    return true;
  }
  if (stripped.starts_with(kOperator)) {
    const std::string_view metadata = stripped.substr(kOperator.size());
    record.op_metadata = std::string(metadata);
    TopLevelItems fields(metadata, ' ');
    std::string_view field;
    while (fields.Next(&field)) {
      std::string_view key;
      std::string_view value;
      if (!SplitKeyValue(field, &key, &value)) continue;
      if (key == "op_name") {
        record.op_name = UnquoteValue(value);
      } else if (key == "source_file") {
        record.source_file = UnquoteValue(value);
      } else if (key == "source_line") {
        std::optional<int64_t> source_line = ParseInt64(value);
        if (source_line && *source_line >= 0) record.source_line = *source_line;
      }
    }
    return true;
  }
  if (stripped.starts_with(kEntryParameter)) {
    record.is_entry_parameter = true;  // xla_label stays empty: not printed for entry parameters
    record.shape = std::string(stripped.substr(kEntryParameter.size()));
    pending_->has_label = true;
    pending_->has_shape = true;
    return true;
  }
  if (stripped.starts_with(kLabel)) {
    record.xla_label = std::string(stripped.substr(kLabel.size()));
    pending_->has_label = true;
    return true;
  }
  if (stripped.starts_with(kShape)) {
    record.shape = std::string(stripped.substr(kShape.size()));
    pending_->has_shape = true;
    return true;
  }
  return false;
}

void OomReportParser::FinishBuffer(int64_t line_no) {
  PendingBuffer pending = std::move(*pending_);
  pending_.reset();
  state_ = State::kBetween;
  OomBufferRecord& record = pending.record;
  const std::string name = "buffer " + std::to_string(record.buffer_number);

  // `record.buffer_number - 1`, not `last_buffer_number_ + 1`: after `Buffer 9223372036854775807:` the latter
  // overflows int64 (found by fuzzing); where it is used, buffer_number >= 0, so the former cannot.
  if (record.buffer_number < 0) {
    // Unreadable number, already reported.
  } else if (last_buffer_number_ >= 0 && record.buffer_number - 1 != last_buffer_number_) {
    Report(Severity::kInvariant, pending.first_line,
           name + " follows buffer " + std::to_string(last_buffer_number_) + "; peak buffers are numbered 1, 2, …");
  } else if (last_buffer_number_ < 0 && reports_ > 0 && record.buffer_number != 1) {
    Report(Severity::kInvariant, pending.first_line, name + " is the first buffer of the report, not buffer 1");
  }
  last_buffer_number_ = record.buffer_number;

  if (!pending.has_size || !pending.has_label || !pending.has_shape) {
    Report(Severity::kInvariant, line_no,
           name + " lacks " + (!pending.has_size ? "its Size" : "its XLA Label / Shape or Entry Parameter Subshape"));
  }
  std::optional<int64_t> size = ParseHumanBytes(record.size_text);
  if (pending.has_size && !size) {
    Report(Severity::kInvariant, line_no, name + " has an unreadable size '" + record.size_text + "'");
  }
  if (size) {
    record.size_bytes_approx = *size;
    if (last_size_bytes_ >= 0 && *size > last_size_bytes_) {
      Report(Severity::kInvariant, pending.first_line,
             name + " size " + record.size_text + " exceeds the previous buffer's " + last_size_text_ +
                 "; peak buffers are sorted by size descending");
    }
    last_size_bytes_ = *size;
    last_size_text_ = record.size_text;
  }
  ++buffers_;
  sink()->OnOomBuffer(std::move(record));
}

void OomReportParser::DropTruncatedBuffer(std::string_view why) {
  if (!pending_) return;
  Report(Severity::kWarning, pending_->first_line,
         "truncated OOM report: buffer " + std::to_string(pending_->record.buffer_number) +
             " has no `==========================` separator (" + std::string(why) + "); it is not recorded");
  pending_.reset();
}

Status OomReportParser::Finish() {
  DropTruncatedBuffer("the input ends");
  if (reports_ == 0 && buffers_ == 0) {
    Report(Severity::kError, 0, "not an OOM report: no `BufferAssignment OOM Debugging.` and no peak buffer");
    return Status::DataLoss("not an OOM report: no `BufferAssignment OOM Debugging.` line and no `Buffer <i>:`");
  }
  if (reports_ > 0 && !saw_peak_buffers_) {
    Report(Severity::kWarning, 0, "truncated OOM report: it ends before `Peak buffers:`");
  }
  return Status::Ok();
}

}  // namespace xladb::ingest
