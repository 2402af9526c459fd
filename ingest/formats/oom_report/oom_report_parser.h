// OomReportParser: reads the "BufferAssignment OOM Debugging." text XLA puts in GPU out-of-memory errors
// (§9): BufferAssignment::ToVerboseString, with StatsString (earlier Stats::ToString) inside it
// (xla/service/buffer_assignment.cc, 2021-09-23 onward). The input is text pasted from logs or issues, so
// it may carry anything before and after the report, and tabs may have become spaces.
//
// Lines → records
//   anything before a line ending in `BufferAssignment OOM Debugging.`  → counted as preamble
//                                        (e.g. `… RESOURCE_EXHAUSTED: Out of memory while trying to …`)
//   `BufferAssignment stats:`            → nothing
//   `<%33s label>: <%10s human>[ (<x.xx>%)]` → OomStatRecord (percent only on fragmentation lines)
//   `Peak buffers:`                      → nothing; buffers follow
//   per buffer, indented by TABs (or spaces):
//     `Buffer <i>:`, `Size: <human>`, optional `Operator: <OpMetadataToString>` (op_name, source_file and
//     source_line read from it), then `Entry Parameter Subshape: <shape>` or `XLA Label: <opcode>` +
//     `Shape: <shape>`, then the `==========================` separator → one OomBufferRecord
//   after the last buffer, the first line that is not indented    → counted as trailing text, as is the rest
//     (another `BufferAssignment OOM Debugging.` starts a new report)
// A paste that starts at an indented `Buffer <i>:` (no header) is read from there, with a kWarning.
// The log text before and after a report is scanned for two facts the report itself does not print, each
// emitted once per file as an OomStatRecord (records.h): `Out of memory while trying to allocate N bytes`
// (kOomFailedAllocationLabel) and the BFC allocator's stats line `Limit: N` (kOomLimitLabel).
//
// Invariants checked (kInvariant): buffers are numbered 1, 2, … without gaps (from the first one seen when
// the paste starts mid-way); sizes are non-increasing (TopKPeakBuffers sorts them descending); every
// complete buffer has a readable Size and a shape. A buffer cut off by the end of the input (or by a
// non-indented line) is a kWarning and is not emitted. Other lines inside the report are counted with
// CountUnknownLine.
//
// Contract: the sink is not owned and must outlive the parser. Memory: one buffer's lines. Finish() fails
// (kDataLoss, plus a kError issue) when the input holds neither the header nor a single buffer. Not
// thread-safe; one instance per file.
#ifndef XLADB_INGEST_FORMATS_OOM_REPORT_OOM_REPORT_PARSER_H_
#define XLADB_INGEST_FORMATS_OOM_REPORT_OOM_REPORT_PARSER_H_

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "ingest/text/line_parser.h"

namespace xladb::ingest {

class OomReportParser : public LineParser {
 public:
  explicit OomReportParser(RecordSink* sink) : LineParser(sink) {}

  void ParseLine(std::string_view line, int64_t line_no) override;
  Status Finish() override;

  // Lines before the first `BufferAssignment OOM Debugging.` (log text, the RESOURCE_EXHAUSTED message).
  int64_t preamble_lines() const { return preamble_lines_; }
  // Lines after a report's last buffer that are not part of it (later log text).
  int64_t trailing_lines() const { return trailing_lines_; }

 private:
  enum class State {
    kPreamble,     // before the header
    kStats,        // after `BufferAssignment OOM Debugging.`
    kBetween,      // after `Peak buffers:` or a buffer's separator
    kBuffer,       // inside a buffer
    kTrailer,      // after the report
  };

  struct PendingBuffer {
    OomBufferRecord record;
    int64_t first_line = 0;
    bool has_size = false;
    bool has_label = false;
    bool has_shape = false;
  };

  void StartReport(int64_t line_no);
  // A line of log text outside the report: emits the failed allocation and the limit it names.
  void ScanLogLine(std::string_view line);
  void ParseStat(std::string_view line, int64_t line_no);
  // `Buffer <i>:` (blanks already stripped); false if not that shape.
  bool StartBuffer(std::string_view stripped, int64_t line_no);
  // A line inside a buffer (blanks stripped); false if no rule matches.
  bool ParseBufferLine(std::string_view stripped, int64_t line_no);
  void FinishBuffer(int64_t line_no);
  // Reports the pending buffer as cut off and drops it.
  void DropTruncatedBuffer(std::string_view why);

  State state_ = State::kPreamble;
  int64_t reports_ = 0;
  bool saw_peak_buffers_ = false;
  int64_t buffers_ = 0;
  int64_t preamble_lines_ = 0;
  int64_t trailing_lines_ = 0;
  bool saw_failed_allocation_ = false;
  bool saw_limit_ = false;
  std::optional<PendingBuffer> pending_;
  int64_t last_buffer_number_ = -1;    // in the current report; -1 before its first buffer
  int64_t last_size_bytes_ = -1;
  std::string last_size_text_;
};

}  // namespace xladb::ingest

#endif  // XLADB_INGEST_FORMATS_OOM_REPORT_OOM_REPORT_PARSER_H_
