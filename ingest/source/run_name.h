// Run names: the default one for a dump path, and the rule every run name must follow.
//
// Default names. A folder is named by itself, an archive by its name without .tar.gz / .tar.zst / .tgz /
// .tar / .zip, a single file by its name without .gz / .zst and then .txt. XLA users often leave the dump
// folder under a generic name (--xla_dump_to=/ci/run-123/xla_dump), and two such runs ingested without an
// explicit name would otherwise share one run. So when the name is one of these, compared ignoring case,
//     xla_dump  xla_dumps  xla-dump  xla-dumps  xladump  xladumps  xla_dump_to
//     hlo_dump  hlo_dumps  hlo-dump  hlo-dumps  xla_hlo_dump  xla_hlo_dumps
//     dump  dumps  dump_dir  dumps_dir
// the parent folder's name is used instead, going up while that is generic too:
//     /ci/run-123/xla_dump        -> run-123
//     a/xla_dump.tar.zst          -> a
//     /ci/run-7/dumps/xla_dump    -> run-7
// Relative paths are made absolute against the working folder first (lexically; symlinks are not resolved).
// When no folder above is left (/xla_dump), the generic name itself is kept.
//
// Pure functions, thread-safe; DefaultRunNameForPath() alone looks at the file system (one stat()).
#ifndef XLADB_INGEST_SOURCE_RUN_NAME_H_
#define XLADB_INGEST_SOURCE_RUN_NAME_H_

#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "base/status.h"

namespace xladb::ingest {

inline constexpr size_t kMaxRunNameBytes = 200;
inline constexpr size_t kMaxLabelKeyBytes = 64;
inline constexpr size_t kMaxLabelValueBytes = 1024;

// The default run name for `path`; whether it is a folder is asked of the file system (a path that cannot be
// stat()ed is named as a file or archive by its name).
std::string DefaultRunNameForPath(const std::string& path);

// The same, for a path already known to be a folder or not.
std::string DefaultRunNameFor(const std::string& path, bool is_folder);

// True for the generic dump folder names listed above (ignoring case).
bool IsGenericDumpFolderName(std::string_view name);

// The folder a module is filed under (modules.folder), from `folder`, the folder of its file below the run
// root ('/'-separated, "" = the root). So that a dump has one identity however it arrived (a watched
// `<run>/xla_dump/…`, `xladb ingest DIR`, `xladb ingest DIR/xla_dump`, an archive of either), leading
// components are dropped: first one equal to `wrapper` when that is not empty (an archive's own name,
// DumpSource::WrapperFolderName()), then every leading generic dump folder name (above):
//     ModuleFolderBelowDumpRoot("xla_dump")                 == ""
//     ModuleFolderBelowDumpRoot("dumps/xla_dump/host0")     == "host0"
//     ModuleFolderBelowDumpRoot("run-7/xla_dump", "run-7")  == ""
//     ModuleFolderBelowDumpRoot("host0/xla_dump")           == "host0/xla_dump"   (only leading ones)
[[nodiscard]] std::string ModuleFolderBelowDumpRoot(std::string_view folder, std::string_view wrapper = {});

// A run's source path as one spelling of it: absolute, symlinks resolved where the path exists
// (weakly_canonical), no trailing '/'. `run/`, `./run` and a link to it give the same string, so a re-ingest
// of the same folder is recognised as the same source (RunSpec::append). A path that cannot be resolved comes
// back made absolute and lexically normal.
std::string CanonicalSourcePath(const std::string& path);

// OK, or kInvalidArgument naming the problem: blank (empty or only white space), a control character (a byte
// below 0x20, or 0x7f; named as \xNN with its offset), or longer than kMaxRunNameBytes bytes. Bytes that are
// not UTF-8 are allowed (the service shows them with U+FFFD).
Status ValidateRunName(std::string_view name);

// A run label, wherever it comes from (the CLI, an RPC, xladb-run.toml): OK, or kInvalidArgument naming the
// label (its control characters written as escapes) and the rule it breaks. The key is 1 to
// kMaxLabelKeyBytes of ASCII letters, digits and . _ - / (labels are matched, listed and typed as KEY=VALUE,
// so a key holds nothing that needs quoting). The value is at most kMaxLabelValueBytes bytes with no control
// character (a byte below 0x20, or 0x7f: NUL, ESC, BEL, line breaks and tabs included), since it is printed
// to terminals and stored as text (PostgreSQL cannot hold NUL, SQLite counts text up to it); an empty value,
// and bytes that are not UTF-8, are allowed.
Status ValidateRunLabel(std::string_view key, std::string_view value);
// The first of `labels` that ValidateRunLabel() refuses, or OK.
Status ValidateRunLabels(const std::vector<std::pair<std::string, std::string>>& labels);

}  // namespace xladb::ingest

#endif  // XLADB_INGEST_SOURCE_RUN_NAME_H_
