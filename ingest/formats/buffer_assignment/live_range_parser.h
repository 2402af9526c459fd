// LiveRangeParser: reads the text of HloLiveRange::ToString (xla/hlo/utils/hlo_live_range.cc; until 2023-03
// xla/service/hlo_live_range.cc) and its stack-trace tail FormatStackTraceBreakdown
// (xla/hlo/utils/hlo_stack_trace.cc), §4 of docs/formats.md.
//
// Where the text lives:
//   * 2021-04-07 … 2026-04-03: the tail of `*-buffer-assignment.txt`. BufferAssignmentParser hands every line
//     from `HloLiveRange (max` on to a LiveRangeParser member.
//   * 2026-04-03 onward: `*-live-range.txt`, read by a LiveRangeParser alone. From 2026-04-13 that file may
//     hold the single line `HloLiveRange not available (finalized or constructed from proto)`: a kWarning
//     issue, not an error.
//
// Lines → records:
//   HloLiveRange (max <T>):                  OnLiveRangeHeader
//     InstructionSequence:                   (section)
//       <i>:<NAME>                           OnScheduleEntry
//     BufferLiveRange:                       (section)
//       <NAME>{<INDEX>}:<start>-<end>        OnLiveRange (the index is always printed)
//     Live ranges at <t> (peak):             OnPeakMoment
//       <peak line>                          OnPeakBuffer, three variants (§4.1):
//         V1 (2021-04 … 2025-04)  `<NAME>: <n> bytes`      the list is the sub-sequence of BufferLiveRange
//                                                          entries with start <= t <= end, in order; that
//                                                          alignment fills shape_index (index_printed=false)
//         V2 (2025-04 … 2025-05)  `<NAME>{<INDEX>}: <n> bytes`                         same order as V1
//         V3 (2025-05 onward)     `<NAME>{<INDEX>}: <n> bytes (cumulative: <m> bytes)` sorted by bytes
//     Stack trace breakdown for peak usage: <N> bytes      OnStackTraceHeader (2025-07-23 onward, §4.2)
//       <tree prefix><name> (<p>%, total: <N> bytes, current: <N> bytes, remaining: <N> bytes)
//                                            OnStackTraceNode; depth from the indentation (4 columns a
//                                            level, UTF-8 `│ ├ └ ─`); numbers may be space-grouped; names
//                                            are raw (spaces, parentheses) so the node is read anchored at
//                                            the end of the line. The first 2025-07 form `<name> (<p>%, <N>
//                                            bytes)` gives total_bytes with current/remaining = -1.
//
// Invariants (kInvariant issues naming the numbers; parsing goes on):
//   * T equals the number of InstructionSequence entries, and entry i is printed with index i.
//   * The peak list is exactly the live ranges spanning t: names and indices in BufferLiveRange order for
//     V2, as a set for V3 (sorted by size), names in order for V1.
//   * V3: each cumulative column is the running sum of the sizes.
//   * A stack-trace node's percentage is a finite number (`nan%`, `inf%` are not: the node keeps
//     100 × total / the breakdown's peak bytes, 0 without a peak, and the line is the issue).
// Not invariants but warnings: a file that ends before the peak list (truncated).
//
// Memory: the BufferLiveRange entries up to the first peak list (key, start, end) are kept, as the peak time
// is known only after them: one ByteArena record each, about 8 bytes plus the key (37 MB for the 1.28 million
// entries, keys of 21 bytes, of a 1 GiB generated buffer assignment). At a peak list, the entries spanning its
// time are listed by reference (24 bytes each) and, for V3, counted in an ArenaStringMap; those two are freed
// once the list is checked. Everything else streams.
//
// Contract: the sink must outlive the parser. Errors are values: Finish() returns DataLoss only when no
// HloLiveRange header (nor the "not available" line) was found at all; when embedded in a
// BufferAssignmentParser that is a warning instead, as the rest of the file was read. Not thread-safe.
#ifndef XLADB_INGEST_FORMATS_BUFFER_ASSIGNMENT_LIVE_RANGE_PARSER_H_
#define XLADB_INGEST_FORMATS_BUFFER_ASSIGNMENT_LIVE_RANGE_PARSER_H_

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "base/arena_string_map.h"
#include "ingest/formats/buffer_assignment/buffer_text_parser.h"
#include "ingest/records/record_sink.h"
#include "base/status.h"

namespace xladb::ingest {

class LiveRangeParser : public BufferTextParser {
 public:
  explicit LiveRangeParser(RecordSink* sink);

  void ParseLine(std::string_view line, int64_t line_no) override;
  Status Finish() override;

  // The header line a live-range text starts with, and the 2026-04-13 one-line replacement.
  static constexpr std::string_view kHeaderPrefix = "HloLiveRange (max ";
  static constexpr std::string_view kNotAvailableLine =
      "HloLiveRange not available (finalized or constructed from proto)";

 private:
  enum class Section { kStart, kNotAvailable, kHeader, kSchedule, kRanges, kPeak, kStackTrace };
  enum class PeakVariant { kNone, kV1, kV2, kV3 };

  // A BufferLiveRange entry spanning the peak time, for the peak-list checks and V1 re-keying.
  struct SpanningRange {
    std::string_view key;  // `NAME{INDEX}` as printed (in ranges_)
    size_t name_size = 0;  // key.substr(0, name_size) is NAME, the rest INDEX
  };

  void ParseHeader(std::string_view line, int64_t line_no);
  void ParseScheduleEntry(std::string_view line, int64_t line_no);
  void ParseRange(std::string_view line, int64_t line_no);
  void StartPeak(std::string_view line, int64_t line_no);
  void ParsePeakLine(std::string_view line, int64_t line_no);
  void StartStackTrace(std::string_view line, int64_t line_no);
  void ParseStackTraceNode(std::string_view line, int64_t line_no);

  // Checks T against the InstructionSequence once that section is over.
  void CheckScheduleLength(int64_t line_no);
  // Finds the live range a V1/V2 peak line stands for; returns its index in spanning_ or -1.
  int64_t AlignPeakLine(std::string_view key, bool compare_index, int64_t line_no);
  // Reports the spanning live ranges that no peak line matched, then frees spanning_ and peak_unmatched_.
  void ClosePeakList(int64_t line_no);

  Section section_ = Section::kStart;
  int64_t last_line_no_ = 0;

  int64_t schedule_end_time_ = -1;  // T; -1 until the header is read
  int64_t schedule_entries_ = 0;
  bool schedule_checked_ = false;

  // The BufferLiveRange entries: one record {start, end, name size; key} each, in printed order.
  ByteArena ranges_;
  bool ranges_frozen_ = false;  // set at the first peak moment: later entries are not kept

  int64_t peak_time_ = -1;
  PeakVariant peak_variant_ = PeakVariant::kNone;
  int64_t peak_ordinal_ = 0;
  std::vector<SpanningRange> spanning_;  // the ranges with start <= t <= end, in order
  size_t peak_cursor_ = 0;               // V1/V2: next entry of spanning_ to match
  ArenaStringMap peak_unmatched_;        // V3: how many times each spanning key is still to be listed
  bool peak_unmatched_built_ = false;
  int64_t running_sum_ = 0;
  bool peak_closed_ = false;

  int64_t stack_node_ordinal_ = 0;
  int64_t stack_peak_bytes_ = 0;  // the breakdown's `for peak usage: <N> bytes`
};

}  // namespace xladb::ingest

#endif  // XLADB_INGEST_FORMATS_BUFFER_ASSIGNMENT_LIVE_RANGE_PARSER_H_
