// ReadAheadQueue (ingest/read_ahead_queue.h): order, the bound on waiting files, the walk waiting for a file
// read in place, and a stop that frees a blocked walk.
#include "ingest/read_ahead_queue.h"

#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <memory>
#include <string>
#include <thread>
#include <vector>

namespace xladb::ingest {
namespace {

using namespace std::chrono_literals;

std::unique_ptr<ReadAheadFile> FileNamed(const std::string& path) {
  auto file = std::make_unique<ReadAheadFile>();
  file->entry.path = path;
  return file;
}

TEST(ReadAheadQueue, FilesArriveInOrderAndTheWalkWaitsWhileItIsFull) {
  ReadAheadQueue queue(/*max_files=*/2, /*max_bytes=*/size_t{1} << 30);
  std::atomic<int> pushed{0};
  std::thread walk([&] {
    for (int i = 0; i < 5; ++i) {
      ASSERT_TRUE(queue.Push(FileNamed("f" + std::to_string(i))));
      ++pushed;
    }
    queue.Close();
  });
  // Two files fit; the third Push waits for the writer.
  const auto deadline = std::chrono::steady_clock::now() + 5s;
  while (pushed < 2 && std::chrono::steady_clock::now() < deadline) std::this_thread::sleep_for(1ms);
  std::this_thread::sleep_for(50ms);
  EXPECT_EQ(pushed, 2);
  std::vector<std::string> seen;
  ReadAheadQueue::Item item;
  while (queue.Pop(&item)) {
    seen.push_back(item.ahead->entry.path);
    queue.Finished(item);
  }
  walk.join();
  EXPECT_EQ(seen, (std::vector<std::string>{"f0", "f1", "f2", "f3", "f4"}));
}

TEST(ReadAheadQueue, AFileOverTheByteBoundStillPassesAlone) {
  ReadAheadQueue queue(/*max_files=*/8, /*max_bytes=*/1);
  std::thread walk([&] {
    EXPECT_TRUE(queue.Push(FileNamed("a")));  // over max_bytes, but the queue is empty
    EXPECT_TRUE(queue.Push(FileNamed("b")));  // waits until "a" is taken
    queue.Close();
  });
  ReadAheadQueue::Item item;
  ASSERT_TRUE(queue.Pop(&item));
  EXPECT_EQ(item.ahead->entry.path, "a");
  ASSERT_TRUE(queue.Pop(&item));
  EXPECT_EQ(item.ahead->entry.path, "b");
  EXPECT_FALSE(queue.Pop(&item));
  walk.join();
}

TEST(ReadAheadQueue, TheWalkWaitsUntilTheWriterIsDoneWithAFileReadInPlace) {
  ReadAheadQueue queue(8, size_t{1} << 30);
  DumpEntry big;
  big.path = "big";
  std::atomic<bool> writer_done{false}, walk_back{false};
  std::thread walk([&] {
    ASSERT_TRUE(queue.Push(FileNamed("small")));
    EXPECT_TRUE(queue.RunInPlace(&big));
    EXPECT_TRUE(writer_done);  // the entry was not left while the writer read it
    walk_back = true;
    queue.Close();
  });
  ReadAheadQueue::Item item;
  ASSERT_TRUE(queue.Pop(&item));
  EXPECT_EQ(item.ahead->entry.path, "small");
  queue.Finished(item);
  ASSERT_TRUE(queue.Pop(&item));
  ASSERT_EQ(item.in_place, &big);
  std::this_thread::sleep_for(50ms);
  EXPECT_FALSE(walk_back);
  writer_done = true;
  queue.Finished(item);
  EXPECT_FALSE(queue.Pop(&item));
  walk.join();
  EXPECT_TRUE(walk_back);
}

TEST(ReadAheadQueue, AStopFreesAWaitingWalkAndRefusesWhatComesAfter) {
  ReadAheadQueue queue(/*max_files=*/1, size_t{1} << 30);
  std::atomic<int> results{0};
  std::thread walk([&] {
    EXPECT_TRUE(queue.Push(FileNamed("first")));
    EXPECT_FALSE(queue.Push(FileNamed("second")));  // waits on the full queue until the stop
    DumpEntry entry;
    EXPECT_FALSE(queue.RunInPlace(&entry));
    ++results;
    queue.Close();
  });
  std::this_thread::sleep_for(50ms);
  EXPECT_EQ(results, 0);
  queue.Stop();
  walk.join();
  EXPECT_EQ(results, 1);
  ReadAheadQueue::Item item;
  EXPECT_FALSE(queue.Pop(&item));  // what was pending is dropped
}

}  // namespace
}  // namespace xladb::ingest
