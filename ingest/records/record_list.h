// The one list of record types (ingest/records/records.h). Everything that must name every record type is generated
// from it: the RecordSink interface (record_sink.h), RecordPipe's variant and its delivery (record_pipe.h),
// the store's per-file writer (store/write/file_writer.h) and the test sinks. Adding a record type is a struct in
// records.h, one line here, the parser that emits it and the store's row mapper that keeps it.
//
// XLADB_RECORD_TYPES(X) calls X(Name, plural) once per record type, in the order below (the order of
// docs/formats.md's sections):
//   * Name: the record is `NameRecord`, its sink method `OnName`;
//   * plural: what a list of them is called (tests/ingest/vector_sink.h keeps each in a member of that name).
#ifndef XLADB_INGEST_RECORDS_RECORD_LIST_H_
#define XLADB_INGEST_RECORDS_RECORD_LIST_H_

// clang-format off
#define XLADB_RECORD_TYPES(X)                                                                                   \
  /* Buffer assignment (§2, §3) */                                                                            \
  X(Allocation, allocations)                                                                                  \
  X(AllocatedValue, allocated_values)                                                                         \
  X(CrossColorReuse, cross_color)                                                                             \
  X(TotalBytes, totals)                                                                                       \
  X(ValueDetail, value_details)                                                                               \
  /* Instructions, from any format that prints them; at most once per instruction name per file (§7) */       \
  X(Instruction, instructions)                                                                                \
  X(Computation, computations)                                                                                \
  X(HloModule, modules)                                                                                       \
  /* HloLiveRange (§4) */                                                                                     \
  X(LiveRangeHeader, live_range_headers)                                                                      \
  X(ScheduleEntry, schedule)                                                                                  \
  X(LiveRange, live_ranges)                                                                                   \
  X(PeakMoment, peak_moments)                                                                                 \
  X(PeakBuffer, peak_buffers)                                                                                 \
  X(StackTraceHeader, stack_trace_headers)                                                                    \
  X(StackTraceNode, stack_trace_nodes)                                                                        \
  /* Memory-usage report (§5) */                                                                              \
  X(MemoryReportTotal, report_totals)                                                                         \
  X(MemoryReportRow, report_rows)                                                                             \
  X(MemoryReportOmitted, report_omitted)                                                                      \
  /* TPU utilization (§8) */                                                                                  \
  X(UtilizationBlock, blocks)                                                                                 \
  X(UtilizationCounter, counters)                                                                             \
  /* OOM report (§9) */                                                                                       \
  X(OomStat, oom_stats)                                                                                       \
  X(OomBuffer, oom_buffers)                                                                                   \
  /* Problems: unknown lines, invariant violations, warnings, errors */                                       \
  X(Issue, issues)
// clang-format on

#endif  // XLADB_INGEST_RECORDS_RECORD_LIST_H_
