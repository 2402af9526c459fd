// VectorSink: a RecordSink that keeps every record in vectors, for parser tests.
#ifndef XLADB_TESTS_INGEST_VECTOR_SINK_H_
#define XLADB_TESTS_INGEST_VECTOR_SINK_H_

#include <string>
#include <string_view>
#include <vector>

#include "ingest/byte_source.h"
#include "ingest/line_parser.h"
#include "ingest/line_reader.h"
#include "ingest/record_sink.h"

namespace xladb::ingest {

class VectorSink : public RecordSink {
 public:
  std::vector<AllocationRecord> allocations;
  std::vector<AllocatedValueRecord> allocated_values;
  std::vector<CrossColorReuseRecord> cross_color;
  std::vector<TotalBytesRecord> totals;
  std::vector<ValueDetailRecord> value_details;
  std::vector<InstructionRecord> instructions;
  std::vector<ComputationRecord> computations;
  std::vector<HloModuleRecord> modules;
  std::vector<LiveRangeHeaderRecord> live_range_headers;
  std::vector<ScheduleEntryRecord> schedule;
  std::vector<LiveRangeRecord> live_ranges;
  std::vector<PeakMomentRecord> peak_moments;
  std::vector<PeakBufferRecord> peak_buffers;
  std::vector<StackTraceHeaderRecord> stack_trace_headers;
  std::vector<StackTraceNodeRecord> stack_trace_nodes;
  std::vector<MemoryReportTotalRecord> report_totals;
  std::vector<MemoryReportRowRecord> report_rows;
  std::vector<MemoryReportOmittedRecord> report_omitted;
  std::vector<UtilizationBlockRecord> blocks;
  std::vector<UtilizationCounterRecord> counters;
  std::vector<OomStatRecord> oom_stats;
  std::vector<OomBufferRecord> oom_buffers;
  std::vector<IssueRecord> issues;

  void OnAllocation(AllocationRecord&& r) override { allocations.push_back(std::move(r)); }
  void OnAllocatedValue(AllocatedValueRecord&& r) override { allocated_values.push_back(std::move(r)); }
  void OnCrossColorReuse(CrossColorReuseRecord&& r) override { cross_color.push_back(std::move(r)); }
  void OnTotalBytes(TotalBytesRecord&& r) override { totals.push_back(std::move(r)); }
  void OnValueDetail(ValueDetailRecord&& r) override { value_details.push_back(std::move(r)); }
  void OnInstruction(InstructionRecord&& r) override { instructions.push_back(std::move(r)); }
  void OnComputation(ComputationRecord&& r) override { computations.push_back(std::move(r)); }
  void OnHloModule(HloModuleRecord&& r) override { modules.push_back(std::move(r)); }
  void OnLiveRangeHeader(LiveRangeHeaderRecord&& r) override { live_range_headers.push_back(std::move(r)); }
  void OnScheduleEntry(ScheduleEntryRecord&& r) override { schedule.push_back(std::move(r)); }
  void OnLiveRange(LiveRangeRecord&& r) override { live_ranges.push_back(std::move(r)); }
  void OnPeakMoment(PeakMomentRecord&& r) override { peak_moments.push_back(std::move(r)); }
  void OnPeakBuffer(PeakBufferRecord&& r) override { peak_buffers.push_back(std::move(r)); }
  void OnStackTraceHeader(StackTraceHeaderRecord&& r) override { stack_trace_headers.push_back(std::move(r)); }
  void OnStackTraceNode(StackTraceNodeRecord&& r) override { stack_trace_nodes.push_back(std::move(r)); }
  void OnMemoryReportTotal(MemoryReportTotalRecord&& r) override { report_totals.push_back(std::move(r)); }
  void OnMemoryReportRow(MemoryReportRowRecord&& r) override { report_rows.push_back(std::move(r)); }
  void OnMemoryReportOmitted(MemoryReportOmittedRecord&& r) override { report_omitted.push_back(std::move(r)); }
  void OnUtilizationBlock(UtilizationBlockRecord&& r) override { blocks.push_back(std::move(r)); }
  void OnUtilizationCounter(UtilizationCounterRecord&& r) override { counters.push_back(std::move(r)); }
  void OnOomStat(OomStatRecord&& r) override { oom_stats.push_back(std::move(r)); }
  void OnOomBuffer(OomBufferRecord&& r) override { oom_buffers.push_back(std::move(r)); }
  void OnIssue(IssueRecord&& r) override { issues.push_back(std::move(r)); }

  // Issues of one severity.
  size_t CountIssues(IssueRecord::Severity s) const {
    size_t n = 0;
    for (const auto& i : issues) n += (i.severity == s);
    return n;
  }
};

// Feeds `text` through `parser` with the real LineReader; returns Finish()'s status.
inline Status ParseText(LineParser& parser, std::string_view text) {
  auto source = MakeMemorySource(text);
  LineReader reader(source.get());
  std::string_view line;
  while (reader.Next(&line)) parser.ParseLine(line, reader.line_number());
  if (!reader.status().ok()) return reader.status();
  return parser.Finish();
}

// Reads a whole (small) test file into a string; empty on failure.
std::string ReadTestFile(const std::string& path);

// Path of a copied seed, e.g. SeedPath("000") → tests/data/seeds/000_….txt.
std::string SeedPath(std::string_view seed_number);

}  // namespace xladb::ingest

#endif  // XLADB_TESTS_INGEST_VECTOR_SINK_H_
