// InactivityWatchdog: cancels a client call (grpc::ClientContext::TryCancel) when Touch() has not been called
// for `limit`. The CLI bounds uploads by silence this way, and gives a broken Query stream a short time to
// bring its status before cancelling it. fired() says whether it cancelled.
//
// Contract: owns one thread, started by the constructor and joined by the destructor; Touch() and fired()
// are thread-safe. `ctx` must outlive the watchdog.
#ifndef XLADB_CLI_CALL_WATCHDOG_H_
#define XLADB_CLI_CALL_WATCHDOG_H_

#include <grpcpp/grpcpp.h>

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <mutex>
#include <thread>

namespace xladb::cli {

class InactivityWatchdog {
 public:
  InactivityWatchdog(grpc::ClientContext* ctx, std::chrono::seconds limit)
      : ctx_(ctx), limit_(limit), last_(std::chrono::steady_clock::now()), thread_([this] { Watch(); }) {}
  ~InactivityWatchdog() {
    {
      std::lock_guard<std::mutex> lock(mu_);
      stop_ = true;
    }
    cv_.notify_one();
    thread_.join();
  }
  void Touch() {
    std::lock_guard<std::mutex> lock(mu_);
    last_ = std::chrono::steady_clock::now();
  }
  bool fired() const { return fired_; }

 private:
  void Watch() {
    std::unique_lock<std::mutex> lock(mu_);
    while (!stop_) {
      if (std::chrono::steady_clock::now() - last_ > limit_) {
        fired_ = true;
        ctx_->TryCancel();
        return;
      }
      cv_.wait_for(lock, std::chrono::milliseconds(200));
    }
  }
  grpc::ClientContext* ctx_;
  std::chrono::seconds limit_;
  std::mutex mu_;
  std::condition_variable cv_;
  std::chrono::steady_clock::time_point last_;
  bool stop_ = false;
  std::atomic<bool> fired_{false};
  std::thread thread_;
};

}  // namespace xladb::cli

#endif  // XLADB_CLI_CALL_WATCHDOG_H_
