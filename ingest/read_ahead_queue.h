// ReadAheadQueue: the files a pipelined ingest's walk has read ahead (file_passes.h), on their way from the
// walk's thread to the writer's thread, which owns the target (dump_ingester.cc). Two cores, two stages: one
// reads, hashes, sniffs and parses the next files while the other stores the earlier ones.
//
// Contract
//   * Files reach the writer in the order the walk pushed them.
//   * Memory is bounded: Push blocks while `max_files` files or about `max_bytes` of content and records wait.
//   * A file too big to read ahead goes through RunInPlace: the walk waits until the writer is done with the
//     entry (which is only valid during the walk's visit), so the writer reads it in place.
//   * Push and RunInPlace return false once the writer has stopped (Stop: the run met a fatal error, or it
//     was asked to stop): the walk then hands over nothing more. Pending files are dropped.
//   * Thread-safe: one walk's thread (Push, RunInPlace, Close) and one writer's thread (Pop, Finished, Stop).
#ifndef XLADB_INGEST_READ_AHEAD_QUEUE_H_
#define XLADB_INGEST_READ_AHEAD_QUEUE_H_

#include <condition_variable>
#include <cstddef>
#include <deque>
#include <memory>
#include <mutex>

#include "ingest/file_passes.h"
#include "ingest/source/dump_source.h"

namespace xladb::ingest {

class ReadAheadQueue {
 public:
  struct Item {
    std::unique_ptr<ReadAheadFile> ahead;  // a file read ahead…
    DumpEntry* in_place = nullptr;         // …or one the writer reads in place while the walk waits
    size_t bytes = 0;
  };

  ReadAheadQueue(size_t max_files, size_t max_bytes) : max_files_(max_files), max_bytes_(max_bytes) {}

  // The walk's side.
  [[nodiscard]] bool Push(std::unique_ptr<ReadAheadFile> ahead);
  [[nodiscard]] bool RunInPlace(DumpEntry* entry);
  void Close();

  // The writer's side. Pop: the next file; false at the end (closed and empty, or stopped).
  [[nodiscard]] bool Pop(Item* item);
  void Finished(const Item& item);  // done with the item (an in-place entry: the walk goes on)
  void Stop();

 private:
  const size_t max_files_, max_bytes_;
  std::mutex mu_;
  std::condition_variable cv_;
  std::deque<Item> queue_;
  size_t queued_bytes_ = 0;
  bool closed_ = false, stopped_ = false;
  const DumpEntry* in_place_done_ = nullptr;  // the in-place entry the writer finished last
};

}  // namespace xladb::ingest

#endif  // XLADB_INGEST_READ_AHEAD_QUEUE_H_
