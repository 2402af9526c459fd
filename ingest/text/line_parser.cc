#include "ingest/text/line_parser.h"

#include <utility>

namespace xladb::ingest {

void LineParser::CountUnknownLine(std::string_view line, int64_t line_no, std::string_view context) {
  ++unknown_lines_;
  if (unknown_lines_ > kMaxRecordedUnknownLines) return;
  constexpr size_t kShown = 200;
  std::string reason = "unrecognised line";
  if (!context.empty()) {
    reason += " in ";
    reason += context;
  }
  reason += ": ";
  reason += line.substr(0, kShown);
  if (line.size() > kShown) reason += "…";
  Report(IssueRecord::Severity::kUnknownLine, line_no, std::move(reason));
}

void LineParser::Report(IssueRecord::Severity severity, int64_t line_no, std::string reason) {
  IssueRecord issue;
  issue.line = line_no;
  issue.severity = severity;
  issue.reason = std::move(reason);
  sink_->OnIssue(std::move(issue));
}

}  // namespace xladb::ingest
