// RecordPipe: carries records from a parser on one thread to a sink on another, in batches, through a
// bounded queue. It lets a big file be parsed on one core while the store writes on the other.
//
//   RecordPipe pipe(kBatch, kDepth);
//   std::thread parser([&] { …parser writes to pipe.input()…; pipe.Close(); });
//   pipe.Drain(target);          // on the writer's thread: replays every record into `target`, in order
//   parser.join();
//
// Contract
//   * Records arrive at the target in exactly the order the parser produced them.
//   * Memory is bounded: a batch holds at most `batch_records` records or about kBatchBytes of text, and at
//     most `depth` batches wait in the queue; the parser blocks when the writer falls behind.
//   * input() is used by one producer thread, Drain() by one consumer thread. Close() ends the stream
//     (from the producer); Abort() (from either side) makes both sides stop early.
//   * Batches the consumer is done with go back to the producer, which destroys their records before it
//     refills them: the records' strings are freed on the thread that allocated them, where malloc needs
//     no lock shared with the other thread, and the writer's thread does none of that work.
#ifndef XLADB_INGEST_RECORDS_RECORD_PIPE_H_
#define XLADB_INGEST_RECORDS_RECORD_PIPE_H_

#include <condition_variable>
#include <cstddef>
#include <deque>
#include <mutex>
#include <type_traits>
#include <variant>
#include <vector>

#include "ingest/records/record_list.h"
#include "ingest/records/record_sink.h"
#include "ingest/records/records.h"

namespace xladb::ingest {

// Any one record (the types of record_list.h, in its order).
template <typename Ignored, typename... Records>
struct VariantOfRecords {
  using type = std::variant<Records...>;
};
#define XLADB_RECORD_TYPE_AFTER_COMMA(Name, plural) , Name##Record
using AnyRecord = VariantOfRecords<void XLADB_RECORD_TYPES(XLADB_RECORD_TYPE_AFTER_COMMA)>::type;
#undef XLADB_RECORD_TYPE_AFTER_COMMA

// Hands `record` to the matching On* method of `sink`.
void Deliver(AnyRecord&& record, RecordSink* sink);

// The memory a record holds beyond its own size: instruction texts (up to MBs of backend config), and a
// value's uses and positions (a weight read by every layer of a generated 1 GiB program has 70,000 uses:
// about 6 MB in one record). Every other record is small. For the bounds of RecordPipe's batches and of
// files read ahead.
template <typename R>
size_t RecordTextBytes(const R& r) {
  if constexpr (std::is_same_v<R, InstructionRecord>) {
    return r.text.size() + r.op_name.size();
  } else if constexpr (std::is_same_v<R, ValueDetailRecord>) {
    size_t bytes = r.positions.capacity() * sizeof(ValueDetailRecord::Position) +
                   r.uses.capacity() * sizeof(ValueDetailRecord::Use);  // what the vectors hold, grown
    for (const auto& p : r.positions) bytes += p.instruction.size();
    for (const auto& u : r.uses) bytes += u.instruction.size();
    return bytes;
  } else {
    return 0;
  }
}

// Keeps every record of one file, in order, for Deliver() later (a file parsed ahead on one thread and stored
// on another: dump_ingester.cc). Single-threaded; handed to the other thread whole.
class RecordCollector : public RecordSink {
 public:
#define XLADB_COLLECT_METHOD(Name, plural) \
  void On##Name(Name##Record&& r) override { Keep(std::move(r)); }
  XLADB_RECORD_TYPES(XLADB_COLLECT_METHOD)
#undef XLADB_COLLECT_METHOD

  // Replays the records into `sink`, in the order they came, and forgets them.
  void DeliverAll(RecordSink* sink);
  // About how much memory the records hold (their text and the records themselves).
  size_t approx_bytes() const { return bytes_; }

 private:
  template <typename R>
  void Keep(R&& r) {
    bytes_ += sizeof(AnyRecord) + RecordTextBytes(r);
    records_.emplace_back(std::forward<R>(r));
  }
  std::vector<AnyRecord> records_;
  size_t bytes_ = 0;
};

class RecordPipe {
 public:
  static constexpr size_t kBatchBytes = size_t{1} << 20;

  RecordPipe(size_t batch_records = 4096, size_t depth = 4);

  RecordSink* input() { return &input_; }
  void Close();   // producer: flush the last batch and end the stream
  void Abort();   // either side: stop; pending records are dropped
  // Consumer: replays every record into `target` until the stream ends. Returns false if aborted.
  bool Drain(RecordSink* target);

 private:
  class Input : public RecordSink {
   public:
    explicit Input(RecordPipe* pipe) : pipe_(pipe) {}
#define XLADB_PIPE_INPUT_METHOD(Name, plural) \
  void On##Name(Name##Record&& r) override { Push(std::move(r)); }
    XLADB_RECORD_TYPES(XLADB_PIPE_INPUT_METHOD)
#undef XLADB_PIPE_INPUT_METHOD

   private:
    template <typename R>
    void Push(R&& r) {
      pipe_->batch_bytes_ += sizeof(r) + RecordTextBytes(r);
      pipe_->batch_.emplace_back(std::forward<R>(r));
      if (pipe_->batch_.size() >= pipe_->batch_records_ || pipe_->batch_bytes_ >= kBatchBytes) pipe_->Flush();
    }
    RecordPipe* pipe_;
  };

  void Flush();  // producer: hand the current batch to the queue (blocks while the queue is full)

  size_t batch_records_;
  size_t depth_;
  Input input_{this};
  std::vector<AnyRecord> batch_;  // producer-owned
  size_t batch_bytes_ = 0;        // producer-owned
  std::mutex mu_;
  std::condition_variable cv_;
  std::deque<std::vector<AnyRecord>> queue_;
  std::vector<std::vector<AnyRecord>> spent_;  // delivered batches, for the producer to clear and reuse
  bool closed_ = false;
  bool aborted_ = false;
};

}  // namespace xladb::ingest

#endif  // XLADB_INGEST_RECORDS_RECORD_PIPE_H_
