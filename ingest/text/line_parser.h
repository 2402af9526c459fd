// LineParser: the interface every format parser implements, and the bookkeeping they share.
//
// Contract
//   * The driver feeds a file line by line: ParseLine(line, line_no) for each line (without the '\n'; a
//     trailing '\r' is already removed), then Finish() once. The string_view is valid only during the call.
//   * Memory stays bounded by the longest line plus what the format forces a parser to remember (e.g. the
//     live ranges needed to re-key a V1 peak list); never by the file size.
//   * Lines no rule matches go to CountUnknownLine(): counted, the first kMaxRecordedUnknownLines recorded
//     as IssueRecords, never fatal.
//   * Finish() returns an error Status when the input cannot be read as the format at all (the driver then
//     rolls the file back and records the error); invariant violations are issues, not errors.
//   * A parser instance reads one file and is then discarded. Not thread-safe; one thread at a time.
#ifndef XLADB_INGEST_TEXT_LINE_PARSER_H_
#define XLADB_INGEST_TEXT_LINE_PARSER_H_

#include <cstdint>
#include <string>
#include <string_view>

#include "ingest/records/record_sink.h"
#include "base/status.h"

namespace xladb::ingest {

class LineParser {
 public:
  static constexpr int kMaxRecordedUnknownLines = 20;

  explicit LineParser(RecordSink* sink) : sink_(sink) {}
  virtual ~LineParser() = default;
  LineParser(const LineParser&) = delete;
  LineParser& operator=(const LineParser&) = delete;

  virtual void ParseLine(std::string_view line, int64_t line_no) = 0;
  virtual Status Finish() = 0;

  int64_t unknown_lines() const { return unknown_lines_; }

 protected:
  RecordSink* sink() { return sink_; }

  // Counts a line no rule matched; records it (shortened to 200 bytes) while few have been seen.
  void CountUnknownLine(std::string_view line, int64_t line_no, std::string_view context = {});
  // Records an issue of the given severity.
  void Report(IssueRecord::Severity severity, int64_t line_no, std::string reason);

 private:
  RecordSink* sink_;
  int64_t unknown_lines_ = 0;
};

}  // namespace xladb::ingest

#endif  // XLADB_INGEST_TEXT_LINE_PARSER_H_
