#include "ingest/records/record_pipe.h"

#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <thread>

#include "tests/ingest/vector_sink.h"

namespace xladb::ingest {
namespace {

TEST(RecordPipe, DeliversEveryRecordInOrderAcrossThreads) {
  RecordPipe pipe(/*batch_records=*/7, /*depth=*/2);  // tiny batches: many hand-offs, the producer blocks
  constexpr int kValues = 10000;
  std::thread producer([&] {
    for (int i = 0; i < kValues; ++i) {
      AllocatedValueRecord v;
      v.value.id = i;
      v.offset_bytes = 3 * i;
      pipe.input()->OnAllocatedValue(std::move(v));
      if (i % 1000 == 0) {
        IssueRecord issue;
        issue.line = i;
        pipe.input()->OnIssue(std::move(issue));
      }
    }
    pipe.Close();
  });
  VectorSink sink;
  EXPECT_TRUE(pipe.Drain(&sink));
  producer.join();
  ASSERT_EQ(sink.allocated_values.size(), static_cast<size_t>(kValues));
  for (int i = 0; i < kValues; ++i) {
    ASSERT_EQ(sink.allocated_values[i].value.id, i);
    ASSERT_EQ(sink.allocated_values[i].offset_bytes, 3 * i);
  }
  ASSERT_EQ(sink.issues.size(), 10u);
  EXPECT_EQ(sink.issues[9].line, 9000);
}

// A value read by every layer has tens of thousands of uses: its record counts them, so a batch of such
// records ends at about RecordPipe::kBatchBytes instead of holding 4,096 of them (60 MiB on a 1 GiB file).
TEST(RecordPipe, AValuesUsesCountTowardsTheBatchBound) {
  ValueDetailRecord detail;
  detail.uses.resize(20000);
  for (auto& use : detail.uses) use.instruction = "splash_mha_fwd_402420d8.202";  // 27 bytes: on the heap
  EXPECT_GE(RecordTextBytes(detail), 20000 * (sizeof(ValueDetailRecord::Use) + 27));
  EXPECT_GT(RecordTextBytes(detail), RecordPipe::kBatchBytes);

  // The producer of a one-batch queue that nobody drains yet stops after two such records: one queued, one
  // that ended its batch and waits for room.
  RecordPipe pipe(/*batch_records=*/4096, /*depth=*/1);
  std::atomic<int> pushed{0};
  std::thread producer([&] {
    for (int i = 0; i < 10; ++i) {
      ValueDetailRecord r = detail;
      r.value.id = i;
      pipe.input()->OnValueDetail(std::move(r));
      ++pushed;
    }
    pipe.Close();
  });
  for (int waited = 0; pushed < 1 && waited < 5000; ++waited) std::this_thread::sleep_for(std::chrono::milliseconds(1));
  std::this_thread::sleep_for(std::chrono::milliseconds(100));
  EXPECT_EQ(pushed, 1);  // the second record's push is the one waiting
  VectorSink sink;
  EXPECT_TRUE(pipe.Drain(&sink));
  producer.join();
  ASSERT_EQ(sink.value_details.size(), 10u);
  EXPECT_EQ(sink.value_details[9].value.id, 9);
  EXPECT_EQ(sink.value_details[9].uses.size(), 20000u);
}

TEST(RecordPipe, AbortStopsABlockedProducer) {
  RecordPipe pipe(/*batch_records=*/1, /*depth=*/1);
  std::thread producer([&] {
    for (int i = 0; i < 1000; ++i) pipe.input()->OnTotalBytes(TotalBytesRecord{i});  // blocks: nobody drains
    pipe.Close();
  });
  std::this_thread::sleep_for(std::chrono::milliseconds(20));
  pipe.Abort();
  producer.join();  // returns: the producer is not stuck
  VectorSink sink;
  EXPECT_FALSE(pipe.Drain(&sink));
}

}  // namespace
}  // namespace xladb::ingest
