// DumpSource: the files of one run, whatever they arrived in: a dump folder (walked recursively), a single
// dump file, a .gz / .zst file, or a .tar, .tar.gz, .tar.zst, .tgz or .zip CI artifact (libarchive).
//
// Contract
//   * ForEach() calls `visit` once per regular file, in a deterministic order (paths sorted, and within one
//     module the buffer assignment before its -values and -live-range siblings so merges find their rows).
//     A subfolder that cannot be opened, and a FIFO, socket or device, are visited too, as entries whose
//     `open_error` says so (never read: a FIFO would block), so nothing is skipped without a word.
//   * Each DumpEntry's content is fully readable (Open() may be called more than once: the driver hashes
//     first and parses second). Archive entries are spooled to memory, or to an unlinked temporary file when
//     larger than kSpoolInMemoryBytes, so memory stays bounded.
//   * Paths are relative to the run root, '/'-separated, never absolute and never containing "..": archive
//     members with absolute or ".." paths are reported as unreadable entries (Status in `open_error`), never
//     written anywhere. Symlinks inside a folder are not followed (no loops, no escapes) and not listed.
//     An archive whose headers are damaged (libarchive had to skip blocks) ends with a DataLoss from ForEach.
//   * Errors reading one entry are reported through that entry; an error that stops enumeration (the path
//     does not exist, a corrupt archive) is returned by ForEach after the entries already visited.
//   * Single-threaded.
#ifndef XLADB_INGEST_DUMP_SOURCE_H_
#define XLADB_INGEST_DUMP_SOURCE_H_

#include <cstdint>
#include <functional>
#include <memory>
#include <string>

#include "ingest/byte_source.h"
#include "ingest/status.h"

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

class DumpSource {
 public:
  // What `path` is, decided from the file system and the file name.
  enum class Type { kFolder, kFile, kArchive };

  static StatusOr<std::unique_ptr<DumpSource>> Open(const std::string& path);
  virtual ~DumpSource() = default;

  virtual Type type() const = 0;
  // The run name a user would expect: the folder name, or the archive / file name without extensions.
  virtual std::string DefaultRunName() const = 0;
  virtual Status ForEach(const std::function<void(DumpEntry&)>& visit) = 0;
};

// Sort key that orders sibling files so a module's buffer assignment precedes its split parts.
std::string DumpEntryOrderKey(const std::string& path);

}  // namespace xladb::ingest

#endif  // XLADB_INGEST_DUMP_SOURCE_H_
