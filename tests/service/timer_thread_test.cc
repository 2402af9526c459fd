// TimerThread (base/timer_thread.h): the daemon's daily prune and a streaming call's deadline run on it.
#include "base/timer_thread.h"

#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <mutex>
#include <optional>
#include <thread>

namespace xladb {
namespace {

using std::chrono::milliseconds;

// Counts runs; Await blocks until `n` runs happened (false after 10 s: the test fails rather than hangs).
class RunCounter {
 public:
  void Run() {
    std::lock_guard<std::mutex> lock(mu_);
    ++runs_;
    cv_.notify_all();
  }
  bool Await(int n) {
    std::unique_lock<std::mutex> lock(mu_);
    return cv_.wait_for(lock, std::chrono::seconds(10), [&] { return runs_ >= n; });
  }
  int runs() {
    std::lock_guard<std::mutex> lock(mu_);
    return runs_;
  }

 private:
  std::mutex mu_;
  std::condition_variable cv_;
  int runs_ = 0;
};

TEST(TimerThread, WithoutAPeriodRunsOnceAfterTheDelay) {
  RunCounter counter;
  {
    TimerThread timer(milliseconds(20), std::nullopt, [&] { counter.Run(); });
    ASSERT_TRUE(counter.Await(1));
    std::this_thread::sleep_for(milliseconds(100));  // five more delays: a second run would have come
  }
  EXPECT_EQ(counter.runs(), 1);
}

TEST(TimerThread, DestroyedBeforeTheDelayNeverRunsAndDoesNotWaitItOut) {
  RunCounter counter;
  const auto start = std::chrono::steady_clock::now();
  { TimerThread timer(std::chrono::hours(1), std::nullopt, [&] { counter.Run(); }); }
  EXPECT_EQ(counter.runs(), 0);
  // Generous: the destructor wakes the thread; waiting out the hour would fail here (or time the test out).
  EXPECT_LT(std::chrono::steady_clock::now() - start, std::chrono::minutes(1));
}

TEST(TimerThread, WithAPeriodRunsAtOnceThenEveryPeriodUntilDestroyed) {
  RunCounter counter;
  std::optional<TimerThread> timer;
  timer.emplace(milliseconds(0), milliseconds(5), [&] { counter.Run(); });
  ASSERT_TRUE(counter.Await(3));
  timer.reset();
  const int runs = counter.runs();
  std::this_thread::sleep_for(milliseconds(50));
  EXPECT_EQ(counter.runs(), runs) << "a task ran after the timer was destroyed";
}

TEST(TimerThread, ADailyTimerRunsAtStartOnly) {
  RunCounter counter;
  {
    TimerThread timer(milliseconds(0), std::chrono::hours(24), [&] { counter.Run(); });
    ASSERT_TRUE(counter.Await(1));
  }
  EXPECT_EQ(counter.runs(), 1);
}

}  // namespace
}  // namespace xladb
