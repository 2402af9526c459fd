#include "ingest/formats/buffer_assignment/buffer_text_parser.h"

#include <string>

#include "ingest/formats/buffer_assignment/hlo_value_text.h"

namespace xladb::ingest {

void BufferTextParser::Unknown(std::string_view line, int64_t line_no, std::string_view context) {
  last_unknown_line_no_ = line_no;
  if (unknown_line_owner_ != nullptr) {
    unknown_line_owner_->Unknown(line, line_no, context);
  } else {
    CountUnknownLine(line, line_no, context);
  }
}

bool BufferTextParser::ReadCount(std::string_view text, std::string_view what, std::string_view line,
                                 int64_t line_no, std::string_view context, int64_t* out) {
  CountField field = ParseCountField(text);
  if (field.status == CountStatus::kOk) {
    *out = field.value;
    return true;
  }
  if (field.status == CountStatus::kMalformed) {
    Unknown(line, line_no, context);
  } else {
    Report(IssueRecord::Severity::kInvariant, line_no,
           DescribeCountProblem(what, text, field.status) + "; line skipped");
  }
  return false;
}

void BufferTextParser::WarnIfLastLineUnknown(int64_t last_line_no, std::string_view format_name) {
  if (last_line_no <= 0 || last_unknown_line_no_ != last_line_no) return;
  Report(IssueRecord::Severity::kWarning, last_line_no,
         "the last line is not a complete " + std::string(format_name) + " line (truncated?)");
}

}  // namespace xladb::ingest
