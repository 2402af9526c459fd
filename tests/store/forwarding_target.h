// Targets for tests that act between the ingest driver's calls: ForwardingTarget passes every call on to a
// RunWriter (a base: tests override the calls they watch and call the base), ThrowingTarget throws in the
// middle of one file as a bug or std::bad_alloc would.
#ifndef XLADB_TESTS_STORE_FORWARDING_TARGET_H_
#define XLADB_TESTS_STORE_FORWARDING_TARGET_H_

#include <atomic>
#include <new>
#include <optional>
#include <string>
#include <utility>

#include "ingest/records/ingest_target.h"
#include "ingest/records/record_sink.h"
#include "store/write/run_writer.h"

namespace xladb::testing {

class ForwardingTarget : public ingest::IngestTarget {
 public:
  explicit ForwardingTarget(store::RunWriter& writer) : writer_(writer) {}
  StatusOr<int64_t> BeginRun(const ingest::RunSpec& spec) override { return writer_.BeginRun(spec); }
  StatusOr<FileState> CheckFile(int64_t run_id, const std::string& path, const std::string& hash) override {
    return writer_.CheckFile(run_id, path, hash);
  }
  StatusOr<ingest::RecordSink*> BeginFile(const ingest::FileSpec& spec) override { return writer_.BeginFile(spec); }
  StatusOr<ingest::FileWriteStats> CommitFile(const ingest::FileOutcome& outcome) override {
    return writer_.CommitFile(outcome);
  }
  Status AbortFile(const ingest::FileOutcome& outcome) override { return writer_.AbortFile(outcome); }
  Status RecordFileWithoutRows(const ingest::FileSpec& spec, const ingest::FileOutcome& outcome) override {
    return writer_.RecordFileWithoutRows(spec, outcome);
  }
  Status FinishRun(int64_t run_id, int64_t newest_mtime_us) override {
    return writer_.FinishRun(run_id, newest_mtime_us);
  }
  bool TakeRereadRequest() override { return writer_.TakeRereadRequest(); }

 private:
  store::RunWriter& writer_;
};

// The writer, except that the file at `throw_at` ("": none) gets a sink that throws std::bad_alloc at its first
// live range (its allocations, values and instructions given to the writer by then). Counts the files ended
// (committed, aborted or recorded without rows); the count may be read from another thread.
class ThrowingTarget : public ForwardingTarget {
 public:
  ThrowingTarget(store::RunWriter& writer, std::string throw_at)
      : ForwardingTarget(writer), throw_at_(std::move(throw_at)) {}
  StatusOr<ingest::RecordSink*> BeginFile(const ingest::FileSpec& spec) override {
    auto sink = ForwardingTarget::BeginFile(spec);
    if (!sink.ok() || *sink == nullptr || spec.path != throw_at_) return sink;
    throwing_.emplace(*sink);
    return static_cast<ingest::RecordSink*>(&*throwing_);
  }
  StatusOr<ingest::FileWriteStats> CommitFile(const ingest::FileOutcome& outcome) override {
    return Ended(ForwardingTarget::CommitFile(outcome));
  }
  Status AbortFile(const ingest::FileOutcome& outcome) override { return Ended(ForwardingTarget::AbortFile(outcome)); }
  Status RecordFileWithoutRows(const ingest::FileSpec& spec, const ingest::FileOutcome& outcome) override {
    return Ended(ForwardingTarget::RecordFileWithoutRows(spec, outcome));
  }

  std::atomic<int> files_ended{0};

 private:
  class ThrowingSink : public ingest::ForwardingSink {
   public:
    using ForwardingSink::ForwardingSink;
    void OnLiveRange(ingest::LiveRangeRecord&&) override { throw std::bad_alloc(); }
  };
  template <typename T>
  T Ended(T result) {
    ++files_ended;
    return result;
  }

  std::string throw_at_;
  std::optional<ThrowingSink> throwing_;
};

}  // namespace xladb::testing

#endif  // XLADB_TESTS_STORE_FORWARDING_TARGET_H_
