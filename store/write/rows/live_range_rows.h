// LiveRangeRows: the records of HloLiveRange's printout (docs/formats.md §4) as rows of one module.
//
//   LiveRangeHeaderRecord   → module_summary.schedule_length, through FileFacts
//   ScheduleEntryRecord     → schedule(time, instruction)
//   LiveRangeRecord         → buffer_live_ranges(value_id, live_start, live_end): the value named by
//                             (instruction, shape index), found through BufferAssignmentRows::FindValue; a
//                             range that names no value of the module is a warning
//   PeakMomentRecord        → module_summary.peak_time, through FileFacts (§4.1)
//   PeakBufferRecord        → peak_buffers(ordinal, instruction, shape_index, logical_bytes, cumulative_bytes,
//                             value_id)
//   StackTraceHeaderRecord  → module_summary.stack_trace_peak_bytes, through FileFacts (§4.2)
//   StackTraceNodeRecord    → stack_trace_nodes (a node the module has already is kept)
//
// Live ranges, the schedule, the stack-trace nodes and the peak list go by bulk append
// (store/backend/bulk_batch.h). Live ranges of values this file has already read are written as they come;
// the others (values stored by an earlier file of the split format, or by none) wait for WriteUnmatched() at
// the file's end, and the peak buffers for WritePeakBuffers(), so that the values they name are all known.
//
// Contract: owned by one file's FileWriter, with the BufferAssignmentRows of the same file; statement errors
// go to FileContext::Guard. Not thread-safe.
#ifndef XLADB_STORE_WRITE_ROWS_LIVE_RANGE_ROWS_H_
#define XLADB_STORE_WRITE_ROWS_LIVE_RANGE_ROWS_H_

#include <cstdint>
#include <vector>

#include "ingest/records/records.h"
#include "store/write/rows/buffer_assignment_rows.h"
#include "store/write/rows/file_context.h"
#include "store/write/rows/first_seen_ids.h"
#include "store/backend/bulk_batch.h"

namespace xladb::store {

class LiveRangeRows {
 public:
  LiveRangeRows(FileContext* file, BufferAssignmentRows* values);

  void Add(ingest::LiveRangeHeaderRecord&& r) { file_->facts.schedule_length = r.schedule_end_time; }
  void Add(ingest::ScheduleEntryRecord&& r);
  void Add(ingest::LiveRangeRecord&& r);
  void Add(ingest::PeakMomentRecord&& r) { file_->facts.peak_time = r.time; }
  void Add(ingest::PeakBufferRecord&& r);
  void Add(ingest::StackTraceHeaderRecord&& r) { file_->facts.stack_peak = r.peak_bytes; }
  void Add(ingest::StackTraceNodeRecord&& r);

  // At the file's end, in this order: WriteUnmatched(), Flush() (after the values' Flush()),
  // WritePeakBuffers().
  void WriteUnmatched();
  void Flush();
  void WritePeakBuffers();

 private:
  void WriteLiveRange(int64_t value_id, int64_t start, int64_t end);

  FileContext* file_;
  BufferAssignmentRows* values_;
  BulkBatch live_ranges_;
  BulkBatch schedule_;
  BulkBatch stack_trace_nodes_;
  BulkBatch peak_buffer_rows_;
  // The value ids, schedule times, stack-trace and peak-list ordinals written, when the file created the module.
  FirstSeenIds written_live_ranges_, written_times_, written_stack_trace_nodes_, written_peak_ordinals_;
  std::vector<ingest::PeakBufferRecord> peak_buffers_;
  std::vector<ingest::LiveRangeRecord> unmatched_;
};

}  // namespace xladb::store

#endif  // XLADB_STORE_WRITE_ROWS_LIVE_RANGE_ROWS_H_
