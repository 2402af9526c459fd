#include "ingest/records/record_pipe.h"

#include <gtest/gtest.h>

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
