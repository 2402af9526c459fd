// TimerThread: a thread that runs a task after a delay, and again every period when one is given, until the
// object is destroyed. It serves the daemon's daily prune (at start, then every 24 hours) and a query's
// deadline (once, after its timeout).
//
// Contract: the task runs on the timer's own thread, never two at a time. Destruction wakes the thread and
// joins it: a task already running finishes first, none starts after. The task must not destroy the timer.
// The object is not copyable or movable (the thread holds `this`); hold it in a std::optional or a
// std::unique_ptr to start it later.
#ifndef XLADB_BASE_TIMER_THREAD_H_
#define XLADB_BASE_TIMER_THREAD_H_

#include <chrono>
#include <condition_variable>
#include <functional>
#include <mutex>
#include <optional>
#include <thread>

namespace xladb {

class TimerThread {
 public:
  // `period` unset: the task runs once, after `delay`, unless the timer is destroyed first.
  TimerThread(std::chrono::milliseconds delay, std::optional<std::chrono::milliseconds> period,
              std::function<void()> task);
  ~TimerThread();
  TimerThread(const TimerThread&) = delete;
  TimerThread& operator=(const TimerThread&) = delete;

 private:
  void Run(std::chrono::milliseconds delay, std::optional<std::chrono::milliseconds> period);

  std::function<void()> task_;
  std::mutex mu_;
  std::condition_variable wake_;
  bool stop_ = false;
  std::thread thread_;  // last: started after the members it uses are built
};

}  // namespace xladb

#endif  // XLADB_BASE_TIMER_THREAD_H_
