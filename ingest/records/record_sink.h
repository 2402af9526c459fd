// RecordSink: where parsers put what they read.
//
// Contract
//   * A parser calls the On* methods in the order the facts appear in the file. Every method has an empty
//     default, so a sink implements only what it stores.
//   * Records are passed by rvalue reference: the sink may move from them. The parser does not touch a
//     record after passing it.
//   * A sink is used by one parser on one thread at a time; sinks need no locking of their own.
//   * Sinks do not fail through this interface: a sink that cannot store (a database error) remembers the
//     error and reports it to its owner after the file; parsing goes on regardless.
//
// The methods are generated from the one list of record types (record_list.h).
//
// Implementations: store::FileWriter (the database, one per file), CountingSink (parse-only benchmarks),
// VectorSink (tests, in tests/ingest/vector_sink.h).
#ifndef XLADB_INGEST_RECORDS_RECORD_SINK_H_
#define XLADB_INGEST_RECORDS_RECORD_SINK_H_

#include <utility>

#include "ingest/records/record_list.h"
#include "ingest/records/records.h"

namespace xladb::ingest {

class RecordSink {
 public:
  virtual ~RecordSink() = default;

  // One method per record type (record_list.h), each with an empty default.
#define XLADB_RECORD_SINK_METHOD(Name, plural) \
  virtual void On##Name(Name##Record&&) {}
  XLADB_RECORD_TYPES(XLADB_RECORD_SINK_METHOD)
#undef XLADB_RECORD_SINK_METHOD
};

// Passes every record on to `next`: a base for sinks that watch or filter a stream (tests override the
// methods they watch and call the base).
class ForwardingSink : public RecordSink {
 public:
  explicit ForwardingSink(RecordSink* next) : next_(next) {}
#define XLADB_FORWARDING_SINK_METHOD(Name, plural) \
  void On##Name(Name##Record&& r) override { next_->On##Name(std::move(r)); }
  XLADB_RECORD_TYPES(XLADB_FORWARDING_SINK_METHOD)
#undef XLADB_FORWARDING_SINK_METHOD

 private:
  RecordSink* next_;
};

}  // namespace xladb::ingest

#endif  // XLADB_INGEST_RECORDS_RECORD_SINK_H_
