#include "ingest/parser_registry.h"

#include "ingest/formats/buffer_assignment/buffer_assignment_parser.h"
#include "ingest/formats/hlo_module/hlo_module_parser.h"
#include "ingest/formats/buffer_assignment/live_range_parser.h"
#include "ingest/formats/memory_report/memory_report_parser.h"
#include "ingest/formats/oom_report/oom_report_parser.h"
#include "ingest/formats/tpu_utilization/tpu_bundle_profile_parser.h"
#include "ingest/formats/tpu_utilization/tpu_per_bundle_utilization_parser.h"

namespace xladb::ingest {

std::unique_ptr<LineParser> MakeParser(FileKind kind, RecordSink* sink) {
  switch (kind) {
    case FileKind::kBufferAssignment:
    case FileKind::kBufferAssignmentValues:
      return std::make_unique<BufferAssignmentParser>(sink);
    case FileKind::kLiveRange: return std::make_unique<LiveRangeParser>(sink);
    case FileKind::kMemoryUsageReport: return std::make_unique<MemoryReportParser>(sink);
    case FileKind::kHloModule: return std::make_unique<HloModuleParser>(sink);
    case FileKind::kTpuBundleProfile: return std::make_unique<TpuBundleProfileParser>(sink);
    case FileKind::kTpuPerBundleUtilization: return std::make_unique<TpuPerBundleUtilizationParser>(sink);
    case FileKind::kOomReport: return std::make_unique<OomReportParser>(sink);
    case FileKind::kUnknown:
    case FileKind::kNotIngested: break;
  }
  return nullptr;
}

}  // namespace xladb::ingest
