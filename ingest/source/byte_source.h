// ByteSource: a forward-only stream of bytes (a file, a decompressor, an archive entry, an upload).
//
// Contract
//   * Read() fills up to `capacity` bytes and returns how many; 0 means end of stream. An error is returned
//     as a non-OK Status (e.g. a truncated gzip stream is kDataLoss, a failed read() kIoError) and the
//     source must not be read again after that.
//   * Sources are single-threaded and owned by whoever created them.
#ifndef XLADB_INGEST_SOURCE_BYTE_SOURCE_H_
#define XLADB_INGEST_SOURCE_BYTE_SOURCE_H_

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <string_view>

#include "base/status.h"

namespace xladb::ingest {

class ByteSource {
 public:
  virtual ~ByteSource() = default;
  virtual StatusOr<size_t> Read(char* buffer, size_t capacity) = 0;
};

// Reads a regular file with read(2). Open errors name the path and errno text.
StatusOr<std::unique_ptr<ByteSource>> OpenFileSource(const std::string& path);

// Reads the open file `fd` from its start with pread(2) (read(2) where it cannot seek), whatever its current
// offset, so several sources may read dup()s of one descriptor. Takes ownership of `fd`; `name` is for errors.
std::unique_ptr<ByteSource> MakeFdSource(int fd, std::string name);

// Serves bytes from memory; `data` must outlive the source.
std::unique_ptr<ByteSource> MakeMemorySource(std::string_view data);

// Wraps `inner` in a gzip (zlib) or zstd decompressor. The wrapper owns `inner`.
std::unique_ptr<ByteSource> MakeGzipSource(std::unique_ptr<ByteSource> inner);
std::unique_ptr<ByteSource> MakeZstdSource(std::unique_ptr<ByteSource> inner);

using Decompressor = std::unique_ptr<ByteSource> (*)(std::unique_ptr<ByteSource> inner);

// Bounds on what one decompressed stream may expand to: a guard against decompression bombs.
struct ExpansionLimits {
  int64_t max_bytes = -1;  // the most bytes the stream may hold; < 0: no cap
  double max_ratio = 0;    // decompressed / compressed bytes, checked past kRatioCheckAfterBytes; <= 0: none
};
inline constexpr int64_t kRatioCheckAfterBytes = int64_t{64} << 20;

// Wraps `compressed` in `decompress` (MakeGzipSource or MakeZstdSource). Read() fails with kResourceExhausted,
// naming `name` and the limit ("expands past the member cap of N bytes"), instead of returning any byte past
// limits.max_bytes, or once the output passes kRatioCheckAfterBytes at more than limits.max_ratio times the
// compressed bytes read so far.
std::unique_ptr<ByteSource> MakeLimitedDecompressor(std::unique_ptr<ByteSource> compressed, Decompressor decompress,
                                                    const ExpansionLimits& limits, std::string name);

// The errors of MakeLimitedDecompressor() and of the archive reader, so both read alike. ExpansionCapError:
// kResourceExhausted "<what> expands past the <cap_name> cap of <cap> bytes: not read further".
Status ExpansionCapError(const std::string& what, const char* cap_name, int64_t cap);
// OK while `expanded` is at most kRatioCheckAfterBytes or within `max_ratio` times `compressed` (or
// max_ratio <= 0); else kResourceExhausted naming both sizes and "the ratio cap of <max_ratio>".
Status CheckExpansionRatio(const std::string& what, int64_t expanded, int64_t compressed, double max_ratio);

}  // namespace xladb::ingest

#endif  // XLADB_INGEST_SOURCE_BYTE_SOURCE_H_
