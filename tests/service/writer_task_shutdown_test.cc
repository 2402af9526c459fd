// IngestQueue::RunOnWriter across a shutdown: a caller's task must outlive the writer's work on it.
#include <gtest/gtest.h>

#include <chrono>
#include <future>
#include <latch>
#include <thread>

#include "service/ingest_queue.h"
#include "tests/store/test_dirs.h"

namespace xladb::service {
namespace {

using std::chrono::milliseconds;

// A label, delete or prune task the writer has started when the daemon is told to stop (SIGTERM during the
// daily prune's VACUUM, or a big DeleteRun): its caller waits for it and gets its result. (The caller was
// answered "shutting down" at once and its frame unwound while the writer thread still ran the task and then
// wrote the result into that frame: a use after free.)
TEST(WriterTaskShutdown, ATaskTheWriterStartedIsWaitedForAndItsResultReturned) {
  testing::TempDir tmp;
  auto queue = IngestQueue::Start(tmp / "x.db", nullptr, ingest::SourceLimits{});
  ASSERT_TRUE(queue.ok()) << queue.status().ToString();
  std::latch started(1), release(1);
  std::future<Status> caller = std::async(std::launch::async, [&] {
    return (*queue)->RunOnWriter([&](store::Database&) {
      started.count_down();
      release.wait();
      return Status::NotFound("the task's own result");
    });
  });
  started.wait();
  std::thread stopper([&] { (*queue)->Shutdown(); });
  while (!(*queue)->stopping()) std::this_thread::sleep_for(milliseconds(1));
  // Shutdown has begun and the task is still running: its caller must still be waiting.
  EXPECT_EQ(caller.wait_for(milliseconds(1000)), std::future_status::timeout);
  release.count_down();
  const Status result = caller.get();
  stopper.join();
  EXPECT_EQ(result.code(), Status::Code::kNotFound) << result.ToString();
  // A task submitted once shutdown has begun is refused.
  EXPECT_EQ((*queue)->RunOnWriter([](store::Database&) { return Status::Ok(); }).code(),
            Status::Code::kFailedPrecondition);
}

}  // namespace
}  // namespace xladb::service
