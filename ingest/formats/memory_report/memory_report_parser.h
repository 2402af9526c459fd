// MemoryReportParser: reads `*-memory-usage-report.txt` (§5), the text of BufferAssignment::MemoryUsageReport
// and BufferAllocation::MemoryUsageReport (xla/service/buffer_assignment.cc).
//
// Eras
//   V1 (2024-10-04 … 2026-03-10), §5.1:
//     `Total bytes used: <int> (<human>)`                      → MemoryReportTotalRecord{memory_space = -1}
//     `Allocations sorted by size:`, column header, 78 dashes, then rows
//     `<%10s cum>(<%3.0f>%); <%10s rest>; <allocation header>` → MemoryReportRowRecord{kAllocationsBySize}:
//         cumulative/percent/remaining from the columns, allocation_index and size_bytes_approx from the
//         header (`allocation <i>: size <human>, …:`), shapes = the whole header text
//     `The rest <k> allocations are less than <p>% …`          → MemoryReportOmittedRecord{values = false}
//     `Allocations sorted by size with their values:`, then per allocation its header line, alone for an
//     allocation with exactly one value (no record: the header carries nothing the first section lacks),
//     or followed by a TAB-prefixed table (§5.3):
//     `\t<%9s cum>(<%3.0f>%); <%10s size>; <%12d offset>; <%16d count>; <shapes_list>`
//                                                              → MemoryReportRowRecord{kAllocationValues},
//         allocation_index from the header above, table_ordinal = 0-based table number in the section
//     `\tThe rest <k> values are less than <p>% …`              → MemoryReportOmittedRecord{values = true}
//   V2 (2026-03-10 onward), §5.2: per memory space
//     `Memory Space: <name> (color=<int>)`, `Total bytes: <int> (<human>)`
//                                                              → MemoryReportTotalRecord{memory_space = color}
//     then one two-space-prefixed table per allocation (separated by empty lines; no allocation headers)
//                                                              → MemoryReportRowRecord{kMemorySpace},
//         memory_space/memory_space_name from the group, table_ordinal = 0-based table number in the group
// The era is decided by the first non-empty line. Row `ordinal` counts rows of every section in file order.
// shapes_list is kept as printed (UTF-8 `×` included). Human sizes go through ParseHumanBytes (lossy).
//
// Invariants checked (IssueRecord::Severity::kInvariant, never fatal):
//   * first section: cumulative sizes and percentages non-decreasing, allocation sizes non-increasing,
//     cumulative + remaining within human rounding of `Total bytes used`, and, when no truncation note was
//     printed, the last cumulative within human rounding of `Total bytes used`;
//   * every table: cumulative sizes and percentages non-decreasing, sizes non-increasing.
// Lines no rule matches are counted with CountUnknownLine. Numbers past int64, or negative where the printer
// cannot print a negative, are reported (kInvariant) and their line skipped.
//
// Contract: the parser does not own the sink, which must outlive it. Memory is O(longest line): only the
// previous row of the current section/table is remembered. Finish() fails (kDataLoss, plus a kError issue)
// when the first non-empty line is neither `Total bytes used:` nor `Memory Space:`; an empty input is OK
// with a kWarning. Not thread-safe; one instance per file.
#ifndef XLADB_INGEST_FORMATS_MEMORY_REPORT_MEMORY_REPORT_PARSER_H_
#define XLADB_INGEST_FORMATS_MEMORY_REPORT_MEMORY_REPORT_PARSER_H_

#include <cstdint>
#include <string>
#include <string_view>

#include "ingest/text/line_parser.h"

namespace xladb::ingest {

class MemoryReportParser : public LineParser {
 public:
  explicit MemoryReportParser(RecordSink* sink) : LineParser(sink) {}

  void ParseLine(std::string_view line, int64_t line_no) override;
  Status Finish() override;

 private:
  enum class Era { kUnknown, kV1, kV2, kNotAReport };
  enum class State {
    kStart,            // before the first non-empty line
    kV1Head,           // after `Total bytes used:`, before the first section's rows
    kV1BySize,         // inside the first section's rows
    kV1Values,         // inside `Allocations sorted by size with their values:`
    kV2Space,          // inside a `Memory Space:` group
  };

  // What is remembered of the last row of the current ranked list (first section or one table), for the
  // ordering invariants.
  struct RankedList {
    bool has_row = false;
    int64_t cumulative = 0;
    std::string cumulative_text;
    double percent = 0;
    int64_t size = 0;
    std::string size_text;
    bool omitted = false;  // a `The rest …` note closed it
    void Reset() { *this = RankedList(); }
  };

  void ParseFirstLine(std::string_view line, int64_t line_no);
  void ParseV1BySize(std::string_view line, int64_t line_no);
  void ParseV1Values(std::string_view line, int64_t line_no);
  void ParseV2Space(std::string_view line, int64_t line_no);

  // `Total bytes used: N (h)` / `Total bytes: N (h)` after the prefix: returns false if not that shape.
  bool ParseTotal(std::string_view rest, int32_t memory_space, int64_t line_no);
  bool ParseMemorySpaceHeader(std::string_view line, int64_t line_no);
  // A first-section row; false if the line does not have the row shape.
  bool ParseBySizeRow(std::string_view line, int64_t line_no);
  // A table line (header, dashes, row or note) with the prefix already removed; false if none of those.
  bool ParseTableLine(std::string_view body, MemoryReportRowRecord::Section section, int64_t line_no);
  bool ParseTableRow(std::string_view body, MemoryReportRowRecord::Section section, int64_t line_no);
  // `The rest <k> allocations|values are less than <p>% of the total size and not shown.`
  bool ParseOmittedNote(std::string_view line, bool values, int64_t line_no);

  // Ordering invariants of one ranked list, then remembers the row.
  void CheckRankedRow(RankedList* list, const MemoryReportRowRecord& row, std::string_view cumulative_text,
                      std::string_view size_text, std::string_view where, int64_t line_no);
  void FinishFirstSection(int64_t line_no);

  Era era_ = Era::kUnknown;
  State state_ = State::kStart;
  int64_t next_ordinal_ = 0;

  // V1
  int64_t total_bytes_used_ = -1;
  bool by_size_header_seen_ = false;   // the 78-dash line was read
  bool first_section_checked_ = false;
  RankedList by_size_;
  int64_t current_allocation_ = -1;   // from the last section-2 header

  // Tables (V1 section 2 and V2)
  bool in_table_ = false;             // after a table's column header, until an empty line
  int64_t table_ordinal_ = -1;
  RankedList table_;

  // V2
  int32_t memory_space_ = -1;
  std::string memory_space_name_;
};

}  // namespace xladb::ingest

#endif  // XLADB_INGEST_FORMATS_MEMORY_REPORT_MEMORY_REPORT_PARSER_H_
