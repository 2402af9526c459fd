// Internal to DumpSource (dump_source.cc, folder_source.cc, archive_source.cc): the kinds of source that
// DumpSource::Open() and OpenBeneath() return, and what they share. Use ingest/source/dump_source.h instead.
//
// Each kind holds the descriptor of its root (folder, file or archive), opened once by DumpSource, and reads
// everything through it; `display_path` names the root in messages and gives the default run name.
#ifndef XLADB_INGEST_SOURCE_DUMP_SOURCE_KINDS_H_
#define XLADB_INGEST_SOURCE_DUMP_SOURCE_KINDS_H_

#include <sys/stat.h>

#include <memory>
#include <string>

#include "ingest/source/byte_source.h"
#include "ingest/source/dump_source.h"
#include "ingest/source/path_beneath.h"
#include "base/status.h"

namespace xladb::ingest::source_kinds {

// Shared by a source and the Open() functions of the entries it hands out.
using SharedFd = std::shared_ptr<const UniqueFd>;

// `raw` decompressed as the name `path` says (.gz, .zst, or as is), within limits.max_member_bytes and
// limits.max_ratio; errors name `display`.
std::unique_ptr<ByteSource> Decompressing(std::unique_ptr<ByteSource> raw, const std::string& path,
                                          const SourceLimits& limits, const std::string& display);

// The content of the file open as `fd` (taken over), refused unless it is a regular file, decompressed as
// `path` says.
StatusOr<std::unique_ptr<ByteSource>> OpenContent(UniqueFd fd, const std::string& path, const SourceLimits& limits,
                                                  const std::string& display);

int64_t MtimeUs(const struct stat& st);

// `display` + "/" + `relative`, for messages.
std::string JoinDisplay(const std::string& display, const std::string& relative);

std::unique_ptr<DumpSource> MakeFolderSource(SharedFd folder, std::string display_path, SourceLimits limits);
std::unique_ptr<DumpSource> MakeArchiveSource(SharedFd file, std::string display_path, SourceLimits limits);

}  // namespace xladb::ingest::source_kinds

#endif  // XLADB_INGEST_SOURCE_DUMP_SOURCE_KINDS_H_
