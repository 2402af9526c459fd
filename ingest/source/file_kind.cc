#include "ingest/source/file_kind.h"

namespace xladb::ingest {

std::string_view FileKindName(FileKind kind) {
  switch (kind) {
    case FileKind::kUnknown: return "unknown";
    case FileKind::kBufferAssignment: return "buffer_assignment";
    case FileKind::kBufferAssignmentValues: return "buffer_assignment_values";
    case FileKind::kLiveRange: return "live_range";
    case FileKind::kMemoryUsageReport: return "memory_usage_report";
    case FileKind::kHloModule: return "hlo_module";
    case FileKind::kTpuBundleProfile: return "tpu_bundle_profile";
    case FileKind::kTpuPerBundleUtilization: return "tpu_per_bundle_utilization";
    case FileKind::kOomReport: return "oom_report";
    case FileKind::kNotIngested: return "not_ingested";
  }
  return "unknown";
}

bool IsIngestedKind(FileKind kind) {
  return kind != FileKind::kUnknown && kind != FileKind::kNotIngested;
}

}  // namespace xladb::ingest
