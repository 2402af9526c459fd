// ReportRows: the reports XLA and libtpu print about a compile as a whole: the memory-usage report
// (docs/formats.md §5), libtpu's utilization counters (§8) and the OOM report (§9). Their rows are keyed by
// the file that printed them (file_id, …), with the module as a column (NULL when the file names none).
//
//   MemoryReportTotalRecord     → memory_report_totals(memory_space, total_bytes); a space printed twice is a
//                                 warning, the first kept
//   MemoryReportRowRecord       → memory_report_rows(ordinal, section, allocation_index, memory_space, …, shapes)
//   MemoryReportOmittedRecord   → a warning in ingest_issues: XLA's own truncation of the report
//   UtilizationBlockRecord      → nothing: the block's kernel is on each of its counters
//   UtilizationCounterRecord    → utilization_counters(block_ordinal, counter, kernel, numerator, denominator,
//                                 ratio, ratio_text), and FileFacts.counters_changed (the module's
//                                 kernel_spill_summary is recomputed); a counter printed twice in a block is a
//                                 warning, the first kept
//   OomStatRecord               → oom_stats(label, bytes_approx, bytes_text, percent)
//   OomBufferRecord             → oom_buffers(buffer_number, size, op_name, source, xla_label, shape, …)
//
// Report totals, rows and counters are gathered and written by bulk append (store/backend/bulk_batch.h), the
// rest a statement a row (a few a file). A repeat (a space's total, a counter of a block) is told from what the
// file printed before, not from the database's answer; counters compare as the database keeps their text (up
// to a NUL, StoredText), so two that differ only after one are a repeat on both backends.
//
// Contract: owned by one file's FileWriter; statement errors go to FileContext::Guard. Not thread-safe.
#ifndef XLADB_STORE_WRITE_ROWS_REPORT_ROWS_H_
#define XLADB_STORE_WRITE_ROWS_REPORT_ROWS_H_

#include <cstdint>
#include <optional>
#include <set>
#include <string>
#include <unordered_set>
#include <utility>

#include "ingest/records/records.h"
#include "store/backend/bulk_batch.h"
#include "store/write/rows/file_context.h"

namespace xladb::store {

class ReportRows {
 public:
  explicit ReportRows(FileContext* file);

  void Add(ingest::MemoryReportTotalRecord&& r);
  void Add(ingest::MemoryReportRowRecord&& r);
  void Add(ingest::MemoryReportOmittedRecord&& r);
  void Add(ingest::UtilizationBlockRecord&&) {}
  void Add(ingest::UtilizationCounterRecord&& r);
  void Add(ingest::OomStatRecord&& r);
  void Add(ingest::OomBufferRecord&& r);

  // Writes the report totals, rows and counters gathered; at the file's end, before its derived facts (the
  // spill summary reads the counters).
  void Flush();

 private:
  // The file's module, or NULL when the file names none.
  std::optional<int64_t> ModuleOrNull() const;

  FileContext* file_;
  BulkBatch totals_, report_rows_, counters_;
  std::unordered_set<int32_t> totals_seen_;  // the memory spaces whose total the file printed
  std::set<std::pair<int64_t, std::string>> counters_seen_;  // the (block, counter) pairs the file printed
};

}  // namespace xladb::store

#endif  // XLADB_STORE_WRITE_ROWS_REPORT_ROWS_H_
