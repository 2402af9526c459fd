// BufferTextParser: the LineParser base shared by BufferAssignmentParser (buffer_assignment_parser.h) and
// LiveRangeParser (live_range_parser.h): how both read XLA's count fields and count the lines they do not
// recognise. It reads no format itself.
//
//   * Count fields (sizes, offsets, ids, times: non-negative int64 printed with %d) are read with
//     ReadCount: text that is not a number makes the line an unknown line; a negative number or one past
//     int64 is a kInvariant issue naming the value, and the caller skips the line.
//   * Embedding: a BufferAssignmentParser hands the HloLiveRange tail of its file to a LiveRangeParser
//     member and calls CountUnknownLinesIn(this) on it, so that the unknown lines of the tail count in the
//     parser the driver sees (LineParser::unknown_lines()).
//
// Contract: as LineParser (one file, one thread, sink outlives the parser).
#ifndef XLADB_INGEST_FORMATS_BUFFER_ASSIGNMENT_BUFFER_TEXT_PARSER_H_
#define XLADB_INGEST_FORMATS_BUFFER_ASSIGNMENT_BUFFER_TEXT_PARSER_H_

#include <cstdint>
#include <string_view>

#include "ingest/text/line_parser.h"
#include "ingest/records/record_sink.h"

namespace xladb::ingest {

class BufferTextParser : public LineParser {
 public:
  // From now on, lines this parser does not recognise are counted by `owner` (not null), which reads the
  // same file and outlives this parser's use.
  void CountUnknownLinesIn(BufferTextParser* owner) { unknown_line_owner_ = owner; }

 protected:
  explicit BufferTextParser(RecordSink* sink) : LineParser(sink) {}

  // True once CountUnknownLinesIn was called: this parser reads part of another parser's file.
  bool embedded() const { return unknown_line_owner_ != nullptr; }

  // Counts `line` as unknown (here or in the owner) and remembers it for WarnIfLastLineUnknown.
  void Unknown(std::string_view line, int64_t line_no, std::string_view context);

  // Reads `text` as a count field into *out. Otherwise returns false after counting the line as unknown
  // (not a number) or reporting a kInvariant issue "<what> <text> is negative / does not fit in int64; line
  // skipped".
  bool ReadCount(std::string_view text, std::string_view what, std::string_view line, int64_t line_no,
                 std::string_view context, int64_t* out);

  // At Finish(): a last line that no rule matched is most likely cut short; reports a kWarning saying so.
  void WarnIfLastLineUnknown(int64_t last_line_no, std::string_view format_name);

 private:
  BufferTextParser* unknown_line_owner_ = nullptr;
  int64_t last_unknown_line_no_ = -1;
};

}  // namespace xladb::ingest

#endif  // XLADB_INGEST_FORMATS_BUFFER_ASSIGNMENT_BUFFER_TEXT_PARSER_H_
