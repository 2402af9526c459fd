#include "ingest/records/record_pipe.h"

#include <utility>

namespace xladb::ingest {
namespace {

// Visitor that calls the On* method matching each record type.
struct Deliverer {
  RecordSink* sink;
#define XLADB_DELIVER_RECORD(Name, plural) \
  void operator()(Name##Record&& r) { sink->On##Name(std::move(r)); }
  XLADB_RECORD_TYPES(XLADB_DELIVER_RECORD)
#undef XLADB_DELIVER_RECORD
};

}  // namespace

void Deliver(AnyRecord&& record, RecordSink* sink) { std::visit(Deliverer{sink}, std::move(record)); }

void RecordCollector::DeliverAll(RecordSink* sink) {
  for (AnyRecord& record : records_) Deliver(std::move(record), sink);
  std::vector<AnyRecord>().swap(records_);
  bytes_ = 0;
}

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
