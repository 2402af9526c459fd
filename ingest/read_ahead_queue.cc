#include "ingest/read_ahead_queue.h"

#include <utility>

namespace xladb::ingest {

bool ReadAheadQueue::Push(std::unique_ptr<ReadAheadFile> ahead) {
  const size_t bytes = ahead->approx_bytes();
  std::unique_lock<std::mutex> lock(mu_);
  // One file always fits, however big, so a file over max_bytes cannot wait forever.
  cv_.wait(lock, [&] {
    return stopped_ || queue_.empty() || (queue_.size() < max_files_ && queued_bytes_ + bytes <= max_bytes_);
  });
  if (stopped_) return false;
  queue_.push_back({std::move(ahead), nullptr, bytes});
  queued_bytes_ += bytes;
  cv_.notify_all();
  return true;
}

bool ReadAheadQueue::RunInPlace(DumpEntry* entry) {
  std::unique_lock<std::mutex> lock(mu_);
  if (stopped_) return false;
  in_place_done_ = nullptr;
  queue_.push_back({nullptr, entry, 0});
  cv_.notify_all();
  cv_.wait(lock, [&] { return stopped_ || in_place_done_ == entry; });
  return in_place_done_ == entry;
}

void ReadAheadQueue::Close() {
  std::lock_guard<std::mutex> lock(mu_);
  closed_ = true;
  cv_.notify_all();
}

bool ReadAheadQueue::Pop(Item* item) {
  std::unique_lock<std::mutex> lock(mu_);
  cv_.wait(lock, [&] { return stopped_ || closed_ || !queue_.empty(); });
  if (stopped_ || queue_.empty()) return false;
  *item = std::move(queue_.front());
  queue_.pop_front();
  queued_bytes_ -= item->bytes;
  cv_.notify_all();
  return true;
}

void ReadAheadQueue::Finished(const Item& item) {
  if (item.in_place == nullptr) return;
  std::lock_guard<std::mutex> lock(mu_);
  in_place_done_ = item.in_place;
  cv_.notify_all();
}

void ReadAheadQueue::Stop() {
  std::lock_guard<std::mutex> lock(mu_);
  stopped_ = true;
  queue_.clear();
  queued_bytes_ = 0;
  cv_.notify_all();
}

}  // namespace xladb::ingest
