// DumpSource: the files of one run, whatever they arrived in: a dump folder (walked recursively), a single
// dump file, a .gz / .zst file, or a .tar, .tar.gz, .tar.zst, .tgz or .zip CI artifact (libarchive).
//
// Contract
//   * ForEach() calls `visit` once per regular file, in a deterministic order (paths sorted, and within one
//     module the buffer assignment before its -values and -live-range siblings so merges find their rows).
//     A subfolder that cannot be opened, and a FIFO, socket or device, are visited too, as entries whose
//     `open_error` says so (never read: a FIFO would block), so nothing is skipped without a word.
//   * Each DumpEntry's content is fully readable (Open() may be called more than once: the driver hashes
//     first and parses second) while ForEach() runs. Archive entries are spooled to memory, or to an
//     unlinked temporary file in SourceLimits::spool_dir when larger than kSpoolInMemoryBytes, so memory
//     stays bounded.
//   * Bounded expansion (SourceLimits): an archive member, or a .gz / .zst file, that expands past
//     max_member_bytes is an entry whose open_error (or whose content's Read()) is a ResourceExhausted naming
//     the member cap; the next members are still visited. An archive that expands past max_archive_bytes, or
//     past max_ratio times the compressed bytes read (checked once past kRatioCheckAfterBytes: the signature
//     of a decompression bomb), is read no further: ForEach returns ResourceExhausted naming the cap, after
//     visiting what it had read (the member in hand as an entry with that error). Caps are checked before
//     spooling, so no spool file grows past the member cap.
//   * Paths are relative to the run root, '/'-separated, never absolute and never containing "..": archive
//     members with absolute or ".." paths are reported as unreadable entries (Status in `open_error`), never
//     written anywhere. Symlinks inside a folder are not followed (no loops, no escapes) and not listed.
//     An archive whose headers are damaged (libarchive had to skip blocks) ends with a DataLoss from ForEach.
//   * Read at the time of use, beneath the root: the source holds its root (folder, file or archive) open
//     from Open() on, walks folders through file descriptors and opens each file with openat2
//     (RESOLVE_BENEATH | RESOLVE_NO_SYMLINKS): a file or folder swapped for a symlink after it was listed is
//     refused (PermissionDenied), never followed outside the root.
//   * Errors reading one entry are reported through that entry; an error that stops enumeration (the path
//     does not exist, a corrupt archive) is returned by ForEach after the entries already visited.
//   * Single-threaded.
#ifndef XLADB_INGEST_SOURCE_DUMP_SOURCE_H_
#define XLADB_INGEST_SOURCE_DUMP_SOURCE_H_

#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <string_view>

#include "ingest/source/byte_source.h"
#include "base/status.h"

namespace xladb::ingest {

inline constexpr int64_t kSpoolInMemoryBytes = int64_t{64} << 20;

struct DumpEntry {
  std::string path;           // relative to the run root
  std::string name;           // base name with a .gz / .zst suffix removed
  int64_t size_bytes = -1;    // stored size (compressed size for .gz/.zst), -1 if unknown
  int64_t mtime_us = -1;
  Status open_error;          // non-OK when the entry cannot be read at all (then Open() fails the same way)
  std::function<StatusOr<std::unique_ptr<ByteSource>>()> Open;  // the (decompressed) content
};

// Bounds on what one source may expand to and where big archive members are spooled.
struct SourceLimits {
  int64_t max_member_bytes = int64_t{4} << 30;    // expanded bytes of one archive member or .gz/.zst file
  int64_t max_archive_bytes = int64_t{64} << 30;  // expanded bytes of all members of one archive
  double max_ratio = 1000;                        // expanded / compressed bytes, checked once past 64 MiB expanded
  std::string spool_dir;                          // where big members are spooled; "" = the system temp folder
};

class DumpSource {
 public:
  // What `path` is, decided from the file system and the file name.
  enum class Type { kFolder, kFile, kArchive };

  // Opens `path` (a symlink as `path` itself is followed; none below it is). A path that cannot be opened
  // is kNotFound naming it and the system's reason; a FIFO, socket or device is kInvalidArgument.
  static StatusOr<std::unique_ptr<DumpSource>> Open(const std::string& path, const SourceLimits& limits = {});
  // Opens `relative` beneath the folder `root` (the server's allowed root, already resolved with realpath)
  // at the time of the call: a symlink anywhere in `relative`, an absolute `relative` or ".." leading out of
  // `root` is kPermissionDenied "<root>/<relative> is outside the allowed root or is a symlink" (no resolved
  // target is named); a missing path is kNotFound. `relative` may be "" (the root itself). Everything is
  // then read through the opened descriptor.
  static StatusOr<std::unique_ptr<DumpSource>> OpenBeneath(const std::string& root, const std::string& relative,
                                                           const SourceLimits& limits = {});
  virtual ~DumpSource() = default;

  virtual Type type() const = 0;
  // The run name a user would expect: DefaultRunNameForPath() (ingest/source/run_name.h) of the opened path.
  virtual std::string DefaultRunName() const = 0;
  // A top-level folder that wraps the whole dump rather than being part of it, dropped from module folders
  // (ModuleFolderBelowDumpRoot, ingest/source/run_name.h): an archive's own name without its suffix, so that
  // `run-7.tar.zst` made from the parent folder (`tar -C PARENT -caf run-7.tar.zst run-7`, members
  // `run-7/xla_dump/…`) files its modules as one made inside it (`tar -C run-7 …`). "" for folders and files.
  virtual std::string WrapperFolderName() const { return {}; }
  virtual Status ForEach(const std::function<void(DumpEntry&)>& visit) = 0;
};

// Sort key that orders sibling files so a module's buffer assignment precedes its split parts.
std::string DumpEntryOrderKey(const std::string& path);

// The archive suffix `name` ends with (".tar.gz", ".tar.zst", ".tgz", ".tar" or ".zip"), or "": a regular
// file is opened as an archive exactly when this is not empty.
std::string_view ArchiveSuffix(std::string_view name);

// `name` without a trailing ".gz" or ".zst", the compressions a dump file may carry (DumpEntry::name).
std::string StripCompression(std::string name);

}  // namespace xladb::ingest

#endif  // XLADB_INGEST_SOURCE_DUMP_SOURCE_H_
