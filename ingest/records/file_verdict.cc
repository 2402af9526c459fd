#include "ingest/records/file_verdict.h"

#include "base/enum_names.h"

namespace xladb::ingest {

std::string_view FileVerdictName(FileVerdict verdict) {
  switch (verdict) {
    case FileVerdict::kIngested: return "ingested";
    case FileVerdict::kUnchanged: return "unchanged";
    case FileVerdict::kNotIngested: return "not_ingested";
    case FileVerdict::kError: return "error";
  }
  return "error";
}

std::optional<FileVerdict> ParseFileVerdict(std::string_view name) {
  return ValueNamed(name, kFileVerdicts, FileVerdictName);
}

}  // namespace xladb::ingest
