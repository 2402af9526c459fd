// ByteSource: a forward-only stream of bytes (a file, a decompressor, an archive entry, an upload).
//
// Contract
//   * Read() fills up to `capacity` bytes and returns how many; 0 means end of stream. An error is returned
//     as a non-OK Status (e.g. a truncated gzip stream is kDataLoss, a failed read() kIoError) and the
//     source must not be read again after that.
//   * Sources are single-threaded and owned by whoever created them.
#ifndef XLADB_INGEST_BYTE_SOURCE_H_
#define XLADB_INGEST_BYTE_SOURCE_H_

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <string_view>

#include "ingest/status.h"

namespace xladb::ingest {

class ByteSource {
 public:
  virtual ~ByteSource() = default;
  virtual StatusOr<size_t> Read(char* buffer, size_t capacity) = 0;
};

// Reads a regular file with read(2). Open errors name the path and errno text.
StatusOr<std::unique_ptr<ByteSource>> OpenFileSource(const std::string& path);

// Serves bytes from memory; `data` must outlive the source.
std::unique_ptr<ByteSource> MakeMemorySource(std::string_view data);

// Wraps `inner` in a gzip (zlib) or zstd decompressor. The wrapper owns `inner`.
std::unique_ptr<ByteSource> MakeGzipSource(std::unique_ptr<ByteSource> inner);
std::unique_ptr<ByteSource> MakeZstdSource(std::unique_ptr<ByteSource> inner);

}  // namespace xladb::ingest

#endif  // XLADB_INGEST_BYTE_SOURCE_H_
