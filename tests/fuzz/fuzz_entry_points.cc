#include "tests/fuzz/fuzz_entry_points.h"

#include <array>
#include <cstdint>
#include <memory>
#include <optional>

#include "ingest/source/byte_source.h"
#include "ingest/text/dump_name.h"
#include "ingest/source/file_kind.h"
#include "ingest/text/hlo_instruction_text.h"
#include "ingest/text/line_parser.h"
#include "ingest/source/line_reader.h"
#include "ingest/parser_registry.h"
#include "ingest/records/record_list.h"
#include "ingest/records/record_sink.h"
#include "ingest/source/sniff.h"
#include "base/status.h"

namespace xladb::fuzz {
namespace {

using ingest::FileKind;

// Counts what a parser emits and checks the issue contract (record_sink.h, records.h): an issue has a reason
// and a line number that is 0 (not tied to a line) or a line the parser has been given.
class CountingSink : public ingest::RecordSink {
 public:
  int64_t records = 0;
  int64_t max_line_seen = 0;  // the highest line number passed to ParseLine so far (set by the driver loop)
  std::string broken;         // first contract violation seen

#define XLADB_COUNT_RECORD(Name, plural) \
  void On##Name(ingest::Name##Record&& r) override { Count(r); }
  XLADB_RECORD_TYPES(XLADB_COUNT_RECORD)
#undef XLADB_COUNT_RECORD

 private:
  template <typename Record>
  void Count(const Record&) {
    ++records;
  }
  void Count(const ingest::IssueRecord& issue) {
    ++records;
    if (!broken.empty()) return;
    if (issue.reason.empty()) broken = "an issue without a reason (line " + std::to_string(issue.line) + ")";
    if (issue.line < 0 || issue.line > max_line_seen) {
      broken = "issue line " + std::to_string(issue.line) + " outside the lines read (1.." +
               std::to_string(max_line_seen) + "): " + issue.reason;
    }
  }
};

// The driver's parse loop (dump_ingester.cc) over bytes in memory.
std::string ParseAs(FileKind kind, std::string_view data) {
  CountingSink sink;
  std::unique_ptr<ingest::LineParser> parser = ingest::MakeParser(kind, &sink);
  if (parser == nullptr) return "MakeParser gave no parser for " + std::string(ingest::FileKindName(kind));
  std::unique_ptr<ingest::ByteSource> source = ingest::MakeMemorySource(data);
  ingest::LineReader reader(source.get());
  std::string_view line;
  while (reader.Next(&line)) {
    sink.max_line_seen = reader.line_number();
    parser->ParseLine(line, reader.line_number());
  }
  if (!reader.status().ok()) return "LineReader failed on bytes in memory: " + reader.status().ToString();
  if (reader.bytes_consumed() != static_cast<int64_t>(data.size())) {
    return "LineReader consumed " + std::to_string(reader.bytes_consumed()) + " of " + std::to_string(data.size()) +
           " bytes";
  }
  Status finished = parser->Finish();
  if (!sink.broken.empty()) return sink.broken;
  if (!finished.ok() && finished.message().empty()) return "Finish() returned an error without a message";
  if (parser->unknown_lines() < 0 || parser->unknown_lines() > reader.line_number()) {
    return "unknown_lines() = " + std::to_string(parser->unknown_lines()) + " with " +
           std::to_string(reader.line_number()) + " lines read";
  }
  return {};
}

std::string FuzzBufferAssignment(std::string_view data) { return ParseAs(FileKind::kBufferAssignment, data); }
std::string FuzzLiveRange(std::string_view data) { return ParseAs(FileKind::kLiveRange, data); }
std::string FuzzHloModule(std::string_view data) { return ParseAs(FileKind::kHloModule, data); }
std::string FuzzMemoryReport(std::string_view data) { return ParseAs(FileKind::kMemoryUsageReport, data); }
std::string FuzzTpuBundleProfile(std::string_view data) { return ParseAs(FileKind::kTpuBundleProfile, data); }
std::string FuzzTpuPerBundleUtilization(std::string_view data) {
  return ParseAs(FileKind::kTpuPerBundleUtilization, data);
}
std::string FuzzOomReport(std::string_view data) { return ParseAs(FileKind::kOomReport, data); }

bool IsKnownBackendHint(std::string_view hint) {
  return hint.empty() || hint == "tpu" || hint == "gpu" || hint == "cpu";
}

std::string FuzzSniff(std::string_view data) {
  std::string_view name;
  std::string_view head = data;
  if (size_t nl = data.find('\n'); nl != std::string_view::npos) {
    name = data.substr(0, nl);
    head = data.substr(nl + 1);
  }
  head = head.substr(0, ingest::kSniffBytes);
  ingest::SniffResult result = ingest::SniffFile(name, head);
  if ((result.kind == FileKind::kUnknown || result.kind == FileKind::kNotIngested) && result.reason.empty()) {
    return "SniffFile gave " + std::string(ingest::FileKindName(result.kind)) + " without a reason";
  }
  if (!IsKnownBackendHint(result.backend_hint)) return "SniffFile backend_hint '" + result.backend_hint + "'";
  if (!IsKnownBackendHint(ingest::BackendHintFromContent(head))) return "BackendHintFromContent gave an odd hint";
  FileKind claimed = ingest::KindClaimedByName(ingest::ParseDumpName(name));
  if (claimed != FileKind::kUnknown && !ingest::IsIngestedKind(claimed)) {
    return "KindClaimedByName gave a kind without a parser: " + std::string(ingest::FileKindName(claimed));
  }
  // Pure function: the same input gives the same verdict.
  ingest::SniffResult again = ingest::SniffFile(name, head);
  if (again.kind != result.kind || again.reason != result.reason) return "SniffFile is not deterministic";
  return {};
}

bool EndsWith(std::string_view s, std::string_view suffix) {
  return s.size() >= suffix.size() && s.substr(s.size() - suffix.size()) == suffix;
}

std::string FuzzDumpName(std::string_view data) {
  ingest::DumpName dn = ingest::ParseDumpName(data);
  ingest::IsModuleTextStage(dn);
  // The parser never invents text: every piece it returns is taken from the name (dump_name.h, §1.4).
  if (!EndsWith(data, dn.compression)) return "compression '" + dn.compression + "' is not a suffix of the name";
  std::string_view rest = data.substr(0, data.size() - dn.compression.size());
  if (!EndsWith(rest, dn.artifact)) return "artifact '" + dn.artifact + "' is not a suffix of the name";
  for (const std::string* piece : {&dn.module_name, &dn.stage, &dn.changelist}) {
    if (rest.find(*piece) == std::string_view::npos) return "'" + *piece + "' is not part of the name";
  }
  if (dn.timestamp_us < -1 || dn.xla_module_id < -1 || dn.libtpu_step < -1) return "a negative number other than -1";
  return {};
}

std::string FuzzHloInstructionText(std::string_view data) {
  std::optional<ingest::InstructionRecord> record = ingest::ParseHloInstructionText(data);
  std::optional<ingest::HloInstructionPieces> pieces = ingest::SplitHloInstructionText(data);
  if (record.has_value() != pieces.has_value()) {
    return "ParseHloInstructionText and SplitHloInstructionText disagree on whether this is an instruction";
  }
  if (pieces.has_value()) {
    if (!EndsWith(data, pieces->text)) return "pieces.text is not the tail of the input";
    if (record->text != pieces->text) return "record.text differs from pieces.text";
    ingest::TopLevelItems attributes(pieces->attributes);
    std::string_view item;
    size_t total = 0;
    while (attributes.Next(&item)) {
      total += item.size();
      std::string_view key, value;
      if (ingest::SplitKeyValue(item, &key, &value)) ingest::UnquoteValue(value);
    }
    if (total > pieces->attributes.size()) return "TopLevelItems returned more bytes than it was given";
  }
  ingest::BracketTracker tracker;
  tracker.Feed(data.substr(0, data.size() / 2));
  tracker.Feed(data.substr(data.size() / 2));
  std::string unescaped = ingest::UnescapeCString(data);
  if (unescaped.size() > data.size()) return "UnescapeCString made the text longer";
  return {};
}

constexpr std::array<FuzzTarget, 10> kTargets = {{
    {"buffer_assignment_parser", &FuzzBufferAssignment},
    {"live_range_parser", &FuzzLiveRange},
    {"hlo_module_parser", &FuzzHloModule},
    {"memory_report_parser", &FuzzMemoryReport},
    {"tpu_bundle_profile_parser", &FuzzTpuBundleProfile},
    {"tpu_per_bundle_utilization_parser", &FuzzTpuPerBundleUtilization},
    {"oom_report_parser", &FuzzOomReport},
    {"sniff", &FuzzSniff},
    {"dump_name", &FuzzDumpName},
    {"hlo_instruction_text", &FuzzHloInstructionText},
}};

}  // namespace

std::span<const FuzzTarget> AllFuzzTargets() { return kTargets; }

const FuzzTarget* FindFuzzTarget(std::string_view name) {
  for (const FuzzTarget& target : kTargets) {
    if (target.name == name) return &target;
  }
  return nullptr;
}

}  // namespace xladb::fuzz
