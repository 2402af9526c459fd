#include "ingest/source/byte_source.h"

#include <fcntl.h>
#include <unistd.h>
#include <zlib.h>
#include <zstd.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <vector>

namespace xladb::ingest {
namespace {

// Reads with pread(2) from its own offset, so that dup()s of one descriptor can be read independently;
// with read(2) where the descriptor cannot seek.
class FileSource : public ByteSource {
 public:
  FileSource(int fd, std::string path) : fd_(fd), path_(std::move(path)) {}
  ~FileSource() override { ::close(fd_); }
  StatusOr<size_t> Read(char* buffer, size_t capacity) override {
    for (;;) {
      ssize_t n = seekable_ ? ::pread(fd_, buffer, capacity, offset_) : ::read(fd_, buffer, capacity);
      if (n >= 0) {
        offset_ += n;
        return static_cast<size_t>(n);
      }
      if (errno == EINTR) continue;
      if (errno == ESPIPE && seekable_) {
        seekable_ = false;
        continue;
      }
      return Status::IoError("read " + path_ + ": " + std::strerror(errno));
    }
  }

 private:
  int fd_;
  std::string path_;
  off_t offset_ = 0;
  bool seekable_ = true;
};

class MemorySource : public ByteSource {
 public:
  explicit MemorySource(std::string_view data) : data_(data) {}
  StatusOr<size_t> Read(char* buffer, size_t capacity) override {
    size_t n = std::min(capacity, data_.size());
    std::memcpy(buffer, data_.data(), n);
    data_.remove_prefix(n);
    return n;
  }

 private:
  std::string_view data_;
};

constexpr size_t kCompressedChunk = size_t{1} << 18;

class GzipSource : public ByteSource {
 public:
  explicit GzipSource(std::unique_ptr<ByteSource> inner) : inner_(std::move(inner)), in_(kCompressedChunk) {
    std::memset(&zs_, 0, sizeof(zs_));
    // 15 + 32: zlib or gzip header, detected automatically.
    init_ok_ = inflateInit2(&zs_, 15 + 32) == Z_OK;
  }
  ~GzipSource() override { inflateEnd(&zs_); }

  StatusOr<size_t> Read(char* buffer, size_t capacity) override {
    if (!init_ok_) return Status::Internal("inflateInit2 failed");
    if (done_) return size_t{0};
    zs_.next_out = reinterpret_cast<Bytef*>(buffer);
    zs_.avail_out = static_cast<uInt>(std::min<size_t>(capacity, 1u << 30));
    while (zs_.avail_out > 0) {
      if (zs_.avail_in == 0) {
        auto n = inner_->Read(in_.data(), in_.size());
        if (!n.ok()) return n.status();
        if (*n == 0) {
          if (!stream_ended_) return Status::DataLoss("gzip stream is truncated (no end marker)");
          done_ = true;
          break;
        }
        zs_.next_in = reinterpret_cast<Bytef*>(in_.data());
        zs_.avail_in = static_cast<uInt>(*n);
      }
      if (stream_ended_) {
        // Concatenated gzip members (as `cat a.gz b.gz` makes): start the next one.
        if (inflateReset(&zs_) != Z_OK) return Status::DataLoss("gzip: cannot reset for next member");
        stream_ended_ = false;
      }
      int rc = inflate(&zs_, Z_NO_FLUSH);
      if (rc == Z_STREAM_END) {
        stream_ended_ = true;
        continue;
      }
      if (rc != Z_OK && rc != Z_BUF_ERROR) {
        return Status::DataLoss(std::string("gzip: ") + (zs_.msg ? zs_.msg : "corrupt data"));
      }
      if (rc == Z_BUF_ERROR && zs_.avail_in != 0) {
        return Status::DataLoss("gzip: no progress possible");
      }
    }
    return static_cast<size_t>(reinterpret_cast<char*>(zs_.next_out) - buffer);
  }

 private:
  std::unique_ptr<ByteSource> inner_;
  std::vector<char> in_;
  z_stream zs_;
  bool init_ok_ = false;
  bool stream_ended_ = false;
  bool done_ = false;
};

class ZstdSource : public ByteSource {
 public:
  explicit ZstdSource(std::unique_ptr<ByteSource> inner)
      : inner_(std::move(inner)), in_(ZSTD_DStreamInSize()), ds_(ZSTD_createDStream()) {
    ZSTD_initDStream(ds_);
  }
  ~ZstdSource() override { ZSTD_freeDStream(ds_); }

  StatusOr<size_t> Read(char* buffer, size_t capacity) override {
    ZSTD_outBuffer out{buffer, capacity, 0};
    while (out.pos < out.size) {
      if (input_.pos == input_.size) {
        if (eof_) break;
        auto n = inner_->Read(in_.data(), in_.size());
        if (!n.ok()) return n.status();
        if (*n == 0) {
          eof_ = true;
          if (!frame_done_) return Status::DataLoss("zstd stream is truncated (frame not finished)");
          break;
        }
        input_ = ZSTD_inBuffer{in_.data(), *n, 0};
      }
      size_t rc = ZSTD_decompressStream(ds_, &out, &input_);
      if (ZSTD_isError(rc)) return Status::DataLoss(std::string("zstd: ") + ZSTD_getErrorName(rc));
      frame_done_ = (rc == 0);
    }
    return out.pos;
  }

 private:
  std::unique_ptr<ByteSource> inner_;
  std::vector<char> in_;
  ZSTD_DStream* ds_;
  ZSTD_inBuffer input_{nullptr, 0, 0};
  bool eof_ = false;
  bool frame_done_ = true;
};

// Counts the compressed bytes a decompressor pulls through it, for the ratio check.
class CountingSource : public ByteSource {
 public:
  CountingSource(std::unique_ptr<ByteSource> inner, int64_t* count) : inner_(std::move(inner)), count_(count) {}
  StatusOr<size_t> Read(char* buffer, size_t capacity) override {
    auto n = inner_->Read(buffer, capacity);
    if (n.ok()) *count_ += static_cast<int64_t>(*n);
    return n;
  }

 private:
  std::unique_ptr<ByteSource> inner_;
  int64_t* count_;
};

class LimitedDecompressor : public ByteSource {
 public:
  LimitedDecompressor(std::unique_ptr<ByteSource> compressed, Decompressor decompress, const ExpansionLimits& limits,
                      std::string name)
      : inner_(decompress(std::make_unique<CountingSource>(std::move(compressed), &compressed_bytes_))),
        limits_(limits),
        name_(std::move(name)) {}

  StatusOr<size_t> Read(char* buffer, size_t capacity) override {
    if (limits_.max_bytes >= 0) {
      // Ask for one byte more than the cap allows, so that passing it shows without returning it.
      // (Without overflow: the cap may be INT64_MAX, "no limit" in practice.)
      const int64_t remaining = limits_.max_bytes - expanded_bytes_;  // >= 0: past the cap returned an error
      if (remaining < static_cast<int64_t>(capacity)) capacity = static_cast<size_t>(remaining) + 1;
    }
    auto n = inner_->Read(buffer, capacity);
    if (!n.ok() || *n == 0) return n;
    expanded_bytes_ += static_cast<int64_t>(*n);
    if (limits_.max_bytes >= 0 && expanded_bytes_ > limits_.max_bytes) {
      return ExpansionCapError(name_, "member", limits_.max_bytes);
    }
    if (Status st = CheckExpansionRatio(name_, expanded_bytes_, compressed_bytes_, limits_.max_ratio); !st.ok()) {
      return st;
    }
    return n;
  }

 private:
  int64_t compressed_bytes_ = 0;  // declared before inner_, which holds a pointer to it
  std::unique_ptr<ByteSource> inner_;
  ExpansionLimits limits_;
  std::string name_;
  int64_t expanded_bytes_ = 0;
};

}  // namespace

Status ExpansionCapError(const std::string& what, const char* cap_name, int64_t cap) {
  return Status::ResourceExhausted(what + " expands past the " + cap_name + " cap of " + std::to_string(cap) +
                                   " bytes: not read further");
}

Status CheckExpansionRatio(const std::string& what, int64_t expanded, int64_t compressed, double max_ratio) {
  if (max_ratio <= 0 || expanded <= kRatioCheckAfterBytes ||
      static_cast<double>(expanded) <= max_ratio * static_cast<double>(compressed)) {
    return Status::Ok();
  }
  char ratio[32];
  std::snprintf(ratio, sizeof ratio, "%g", max_ratio);
  return Status::ResourceExhausted(what + " expands to " + std::to_string(expanded) + " bytes from " +
                                   std::to_string(compressed) + " compressed, past the ratio cap of " + ratio +
                                   ": refused as a likely decompression bomb");
}

StatusOr<std::unique_ptr<ByteSource>> OpenFileSource(const std::string& path) {
  int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return Status::IoError("open " + path + ": " + std::strerror(errno));
  return std::unique_ptr<ByteSource>(new FileSource(fd, path));
}

std::unique_ptr<ByteSource> MakeFdSource(int fd, std::string name) {
  return std::make_unique<FileSource>(fd, std::move(name));
}

std::unique_ptr<ByteSource> MakeMemorySource(std::string_view data) {
  return std::make_unique<MemorySource>(data);
}

std::unique_ptr<ByteSource> MakeGzipSource(std::unique_ptr<ByteSource> inner) {
  return std::make_unique<GzipSource>(std::move(inner));
}

std::unique_ptr<ByteSource> MakeZstdSource(std::unique_ptr<ByteSource> inner) {
  return std::make_unique<ZstdSource>(std::move(inner));
}

std::unique_ptr<ByteSource> MakeLimitedDecompressor(std::unique_ptr<ByteSource> compressed, Decompressor decompress,
                                                    const ExpansionLimits& limits, std::string name) {
  return std::make_unique<LimitedDecompressor>(std::move(compressed), decompress, limits, std::move(name));
}

}  // namespace xladb::ingest
