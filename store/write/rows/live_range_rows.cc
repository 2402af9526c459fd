#include "store/write/rows/live_range_rows.h"

#include <optional>
#include <utility>

#include "store/backend/row_binding.h"

namespace xladb::store {
namespace {

const BulkInsert kLiveRangeInsert{
    "buffer_live_ranges", "module_id, value_id, live_start, live_end, file_id",
    "ON CONFLICT(module_id, value_id) DO UPDATE SET live_start = excluded.live_start, "
    "live_end = excluded.live_end, file_id = excluded.file_id",
    2};
const BulkInsert kScheduleInsert{
    "schedule", "module_id, time, instruction, file_id",
    "ON CONFLICT(module_id, time) DO UPDATE SET instruction = excluded.instruction, file_id = excluded.file_id", 2};
// A node the module has already (another file printed its breakdown first) is kept.
const BulkInsert kStackTraceNodeInsert{
    "stack_trace_nodes",
    "module_id, ordinal, depth, name, percent, total_bytes, current_bytes, remaining_bytes, file_id",
    "ON CONFLICT(module_id, ordinal) DO NOTHING", 2};
// The peak list a later file prints replaces the stored entry of the same ordinal.
const BulkInsert kPeakBufferInsert{
    "peak_buffers", "module_id, ordinal, instruction, shape_index, logical_bytes, cumulative_bytes, value_id, file_id",
    "ON CONFLICT(module_id, ordinal) DO UPDATE SET instruction = excluded.instruction, "
    "shape_index = excluded.shape_index, logical_bytes = excluded.logical_bytes, "
    "cumulative_bytes = excluded.cumulative_bytes, value_id = excluded.value_id, file_id = excluded.file_id",
    2};

}  // namespace

LiveRangeRows::LiveRangeRows(FileContext* file, BufferAssignmentRows* values)
    : file_(file),
      values_(values),
      live_ranges_(&kLiveRangeInsert),
      schedule_(&kScheduleInsert),
      stack_trace_nodes_(&kStackTraceNodeInsert),
      peak_buffer_rows_(&kPeakBufferInsert) {
  // Not the stack-trace nodes: a node the module has is kept (DO NOTHING), and a row that may change nothing
  // cannot be held (BulkBatch::HoldIn).
  for (BulkBatch* b : {&live_ranges_, &schedule_, &peak_buffer_rows_}) b->HoldIn(file->held_rows);
}

void LiveRangeRows::Add(ingest::ScheduleEntryRecord&& r) {
  FileContext& f = *file_;
  if (f.module_id == 0) return;
  f.Guard([&] {
    schedule_.Int(f.module_id);
    schedule_.Int(r.time);
    schedule_.Text(r.instruction);
    schedule_.Int(f.file_id);
    f.EndModuleRow(schedule_, written_times_, r.time);
  });
}

void LiveRangeRows::Add(ingest::LiveRangeRecord&& r) {
  FileContext& f = *file_;
  if (f.module_id == 0) return;
  f.facts.rows_changed = true;
  if (auto id = values_->FindValueInFile(r.instruction, r.shape_index)) {
    f.Guard([&] { WriteLiveRange(*id, r.start, r.end); });
    return;
  }
  unmatched_.push_back(std::move(r));  // a value of an earlier file, or of none (WriteUnmatched)
}

void LiveRangeRows::Add(ingest::PeakBufferRecord&& r) {
  if (file_->module_id == 0) return;
  peak_buffers_.push_back(std::move(r));
}

void LiveRangeRows::Add(ingest::StackTraceNodeRecord&& r) {
  FileContext& f = *file_;
  if (f.module_id == 0) return;
  f.Guard([&] {
    BulkBatch& b = stack_trace_nodes_;
    b.Int(f.module_id);
    b.Int(r.ordinal);
    b.Int(r.depth);
    b.Text(r.name);
    b.Real(r.percent);
    b.Int(r.total_bytes);
    b.Int(r.current_bytes);
    b.Int(r.remaining_bytes);
    b.Int(f.file_id);
    f.EndModuleRow(b, written_stack_trace_nodes_, r.ordinal);
  });
}

void LiveRangeRows::WriteLiveRange(int64_t value_id, int64_t start, int64_t end) {
  FileContext& f = *file_;
  live_ranges_.Int(f.module_id);
  live_ranges_.Int(value_id);
  live_ranges_.Int(start);
  live_ranges_.Int(end);
  live_ranges_.Int(f.file_id);
  f.EndModuleRow(live_ranges_, written_live_ranges_, value_id);
}

void LiveRangeRows::WriteUnmatched() {
  for (const auto& lr : unmatched_) {
    auto id = values_->FindValue(lr.instruction, lr.shape_index);
    if (!id) {
      file_->issues.Add(IssueRecord::Severity::kWarning, 0,
                        "live range for " + lr.instruction + lr.shape_index + " matches no buffer value of the module");
      continue;
    }
    WriteLiveRange(*id, lr.start, lr.end);
  }
}

void LiveRangeRows::Flush() {
  file_->rows += live_ranges_.Flush(file_->sql());
  file_->rows += schedule_.Flush(file_->sql());
  file_->rows += stack_trace_nodes_.Flush(file_->sql());
}

void LiveRangeRows::WritePeakBuffers() {
  FileContext& f = *file_;
  BulkBatch& b = peak_buffer_rows_;
  for (const auto& p : peak_buffers_) {
    b.Int(f.module_id);
    b.Int(p.ordinal);
    b.Text(p.instruction);
    b.Text(p.shape_index);
    b.Int(p.logical_bytes);
    b.Opt(NonNegative(p.cumulative_bytes));
    b.Opt(values_->FindValue(p.instruction, p.shape_index));
    b.Int(f.file_id);
    f.EndModuleRow(b, written_peak_ordinals_, p.ordinal);
  }
  f.rows += b.Flush(f.sql());
}

}  // namespace xladb::store
