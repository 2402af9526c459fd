#include "base/timer_thread.h"

#include <utility>

namespace xladb {

TimerThread::TimerThread(std::chrono::milliseconds delay, std::optional<std::chrono::milliseconds> period,
                         std::function<void()> task)
    : task_(std::move(task)), thread_([this, delay, period] { Run(delay, period); }) {}

TimerThread::~TimerThread() {
  {
    std::lock_guard<std::mutex> lock(mu_);
    stop_ = true;
  }
  wake_.notify_all();
  thread_.join();
}

void TimerThread::Run(std::chrono::milliseconds delay, std::optional<std::chrono::milliseconds> period) {
  std::unique_lock<std::mutex> lock(mu_);
  for (auto wait = delay; !wake_.wait_for(lock, wait, [&] { return stop_; }); wait = *period) {
    lock.unlock();
    task_();
    lock.lock();
    if (!period) return;
  }
}

}  // namespace xladb
