// FileVerdict: how the ingest of one file of a run ended.
//
// The names (FileVerdictName) are the schema's dump_files.verdict values and the keys of an ingest's counts
// by verdict (IngestSummary::files_by_verdict, the IngestJob message's files_by_verdict): a public interface,
// so never rename one. They are spelled here only; code compares the enum.
#ifndef XLADB_INGEST_RECORDS_FILE_VERDICT_H_
#define XLADB_INGEST_RECORDS_FILE_VERDICT_H_

#include <optional>
#include <string_view>

namespace xladb::ingest {

enum class FileVerdict {
  kIngested,     // parsed and its rows stored
  kUnchanged,    // the store holds this content at this path already: skipped, counted, never recorded again
  kNotIngested,  // a known file without memory data (or the run's metadata file), recorded with why
  kError,        // unreadable, not what its name claims, or its rows could not be stored; recorded with why
};

// Every verdict, in the order an ingest's counts are printed.
inline constexpr FileVerdict kFileVerdicts[] = {FileVerdict::kIngested, FileVerdict::kUnchanged,
                                                FileVerdict::kNotIngested, FileVerdict::kError};

// "ingested", "unchanged", "not_ingested" or "error".
std::string_view FileVerdictName(FileVerdict verdict);
// The verdict `name` names (FileVerdictName); nullopt for any other text.
std::optional<FileVerdict> ParseFileVerdict(std::string_view name);

}  // namespace xladb::ingest

#endif  // XLADB_INGEST_RECORDS_FILE_VERDICT_H_
