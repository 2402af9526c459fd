// FileKind: what a file in a dump folder is, as decided by the sniffer (sniff.h).
//
// The string names (FileKindName) are stored in the database (dump_files.kind) and are therefore a public
// interface: never rename one, only add.
#ifndef XLADB_INGEST_SOURCE_FILE_KIND_H_
#define XLADB_INGEST_SOURCE_FILE_KIND_H_

#include <string_view>

namespace xladb::ingest {

enum class FileKind {
  kUnknown = 0,               // text we could not recognise: an error verdict only if the name claims a format
  kBufferAssignment,          // *-buffer-assignment.txt, every era (§2), including the 2026 "diet" head
  kBufferAssignmentValues,    // *-buffer-assignment-values.txt (§3)
  kLiveRange,                 // *-live-range.txt (§4)
  kMemoryUsageReport,         // *-memory-usage-report.txt, V1 and V2 (§5)
  kHloModule,                 // HLO module text, short and long forms (§7)
  kTpuBundleProfile,          // libtpu *-hlo-static-bundle-profile.txt utilization counters (§8)
  kTpuPerBundleUtilization,   // libtpu per-bundle utilization report ("== CAPACTIY:")
  kOomReport,                 // "BufferAssignment OOM Debugging." text from logs (§9)
  kNotIngested,               // a known non-memory artifact (thunk sequence, .ll, .ptx, protos, per-pass HLO)
};

// Stable lower_snake_case name, e.g. "buffer_assignment".
std::string_view FileKindName(FileKind kind);

// True for kinds that have a parser.
bool IsIngestedKind(FileKind kind);

}  // namespace xladb::ingest

#endif  // XLADB_INGEST_SOURCE_FILE_KIND_H_
