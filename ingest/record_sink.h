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
// Implementations: store::RunWriter (the database), CountingSink (parse-only benchmarks), VectorSink
// (tests, in tests/ingest/vector_sink.h).
#ifndef XLADB_INGEST_RECORD_SINK_H_
#define XLADB_INGEST_RECORD_SINK_H_

#include <cstdint>

#include "ingest/records.h"

namespace xladb::ingest {

class RecordSink {
 public:
  virtual ~RecordSink() = default;

  // Buffer assignment (§2, §3)
  virtual void OnAllocation(AllocationRecord&&) {}
  virtual void OnAllocatedValue(AllocatedValueRecord&&) {}
  virtual void OnCrossColorReuse(CrossColorReuseRecord&&) {}
  virtual void OnTotalBytes(TotalBytesRecord&&) {}
  virtual void OnValueDetail(ValueDetailRecord&&) {}

  // Instructions, from any format that prints them. Emitted at most once per instruction name per file.
  virtual void OnInstruction(InstructionRecord&&) {}
  virtual void OnComputation(ComputationRecord&&) {}
  virtual void OnHloModule(HloModuleRecord&&) {}

  // HloLiveRange (§4)
  virtual void OnLiveRangeHeader(LiveRangeHeaderRecord&&) {}
  virtual void OnScheduleEntry(ScheduleEntryRecord&&) {}
  virtual void OnLiveRange(LiveRangeRecord&&) {}
  virtual void OnPeakMoment(PeakMomentRecord&&) {}
  virtual void OnPeakBuffer(PeakBufferRecord&&) {}
  virtual void OnStackTraceHeader(StackTraceHeaderRecord&&) {}
  virtual void OnStackTraceNode(StackTraceNodeRecord&&) {}

  // Memory-usage report (§5)
  virtual void OnMemoryReportTotal(MemoryReportTotalRecord&&) {}
  virtual void OnMemoryReportRow(MemoryReportRowRecord&&) {}
  virtual void OnMemoryReportOmitted(MemoryReportOmittedRecord&&) {}

  // TPU utilization (§8)
  virtual void OnUtilizationBlock(UtilizationBlockRecord&&) {}
  virtual void OnUtilizationCounter(UtilizationCounterRecord&&) {}

  // OOM report (§9)
  virtual void OnOomStat(OomStatRecord&&) {}
  virtual void OnOomBuffer(OomBufferRecord&&) {}

  // Problems (unknown lines, invariant violations, warnings, errors).
  virtual void OnIssue(IssueRecord&&) {}
};

}  // namespace xladb::ingest

#endif  // XLADB_INGEST_RECORD_SINK_H_
