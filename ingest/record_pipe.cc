#include "ingest/record_pipe.h"

#include <utility>

namespace xladb::ingest {
namespace {

// Visitor that calls the On* method matching each record type.
struct Deliverer {
  RecordSink* sink;
  void operator()(AllocationRecord&& r) { sink->OnAllocation(std::move(r)); }
  void operator()(AllocatedValueRecord&& r) { sink->OnAllocatedValue(std::move(r)); }
  void operator()(CrossColorReuseRecord&& r) { sink->OnCrossColorReuse(std::move(r)); }
  void operator()(TotalBytesRecord&& r) { sink->OnTotalBytes(std::move(r)); }
  void operator()(ValueDetailRecord&& r) { sink->OnValueDetail(std::move(r)); }
  void operator()(InstructionRecord&& r) { sink->OnInstruction(std::move(r)); }
  void operator()(ComputationRecord&& r) { sink->OnComputation(std::move(r)); }
  void operator()(HloModuleRecord&& r) { sink->OnHloModule(std::move(r)); }
  void operator()(LiveRangeHeaderRecord&& r) { sink->OnLiveRangeHeader(std::move(r)); }
  void operator()(ScheduleEntryRecord&& r) { sink->OnScheduleEntry(std::move(r)); }
  void operator()(LiveRangeRecord&& r) { sink->OnLiveRange(std::move(r)); }
  void operator()(PeakMomentRecord&& r) { sink->OnPeakMoment(std::move(r)); }
  void operator()(PeakBufferRecord&& r) { sink->OnPeakBuffer(std::move(r)); }
  void operator()(StackTraceHeaderRecord&& r) { sink->OnStackTraceHeader(std::move(r)); }
  void operator()(StackTraceNodeRecord&& r) { sink->OnStackTraceNode(std::move(r)); }
  void operator()(MemoryReportTotalRecord&& r) { sink->OnMemoryReportTotal(std::move(r)); }
  void operator()(MemoryReportRowRecord&& r) { sink->OnMemoryReportRow(std::move(r)); }
  void operator()(MemoryReportOmittedRecord&& r) { sink->OnMemoryReportOmitted(std::move(r)); }
  void operator()(UtilizationBlockRecord&& r) { sink->OnUtilizationBlock(std::move(r)); }
  void operator()(UtilizationCounterRecord&& r) { sink->OnUtilizationCounter(std::move(r)); }
  void operator()(OomStatRecord&& r) { sink->OnOomStat(std::move(r)); }
  void operator()(OomBufferRecord&& r) { sink->OnOomBuffer(std::move(r)); }
  void operator()(IssueRecord&& r) { sink->OnIssue(std::move(r)); }
};

}  // namespace

void Deliver(AnyRecord&& record, RecordSink* sink) { std::visit(Deliverer{sink}, std::move(record)); }

RecordPipe::RecordPipe(size_t batch_records, size_t depth) : batch_records_(batch_records), depth_(depth) {
  batch_.reserve(batch_records_);
}

void RecordPipe::Flush() {
  if (batch_.empty()) return;
  std::unique_lock<std::mutex> lock(mu_);
  cv_.wait(lock, [&] { return queue_.size() < depth_ || aborted_; });
  if (aborted_) {
    batch_.clear();
    batch_bytes_ = 0;
    return;
  }
  queue_.push_back(std::move(batch_));
  batch_ = {};
  if (!spent_.empty()) {
    batch_ = std::move(spent_.back());
    spent_.pop_back();
  }
  cv_.notify_all();
  lock.unlock();
  batch_.clear();  // frees the delivered records' memory here, on the thread that allocated it
  batch_bytes_ = 0;
  batch_.reserve(batch_records_);
}

void RecordPipe::Close() {
  Flush();
  std::lock_guard<std::mutex> lock(mu_);
  closed_ = true;
  cv_.notify_all();
}

void RecordPipe::Abort() {
  std::lock_guard<std::mutex> lock(mu_);
  aborted_ = true;
  queue_.clear();
  spent_.clear();
  cv_.notify_all();
}

bool RecordPipe::Drain(RecordSink* target) {
  for (;;) {
    std::vector<AnyRecord> batch;
    {
      std::unique_lock<std::mutex> lock(mu_);
      cv_.wait(lock, [&] { return !queue_.empty() || closed_ || aborted_; });
      if (aborted_) return false;
      if (queue_.empty()) return true;  // closed and drained
      batch = std::move(queue_.front());
      queue_.pop_front();
      cv_.notify_all();
    }
    for (auto& r : batch) Deliver(std::move(r), target);
    std::lock_guard<std::mutex> lock(mu_);
    if (spent_.size() < depth_ && !closed_) spent_.push_back(std::move(batch));  // else freed here
  }
}

}  // namespace xladb::ingest
