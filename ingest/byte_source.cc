#include "ingest/byte_source.h"

#include <fcntl.h>
#include <unistd.h>
#include <zlib.h>
#include <zstd.h>

#include <cerrno>
#include <cstring>
#include <vector>

namespace xladb::ingest {
namespace {

class FileSource : public ByteSource {
 public:
  FileSource(int fd, std::string path) : fd_(fd), path_(std::move(path)) {}
  ~FileSource() override { ::close(fd_); }
  StatusOr<size_t> Read(char* buffer, size_t capacity) override {
    for (;;) {
      ssize_t n = ::read(fd_, buffer, capacity);
      if (n >= 0) return static_cast<size_t>(n);
      if (errno == EINTR) continue;
      return Status::IoError("read " + path_ + ": " + std::strerror(errno));
    }
  }

 private:
  int fd_;
  std::string path_;
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

}  // namespace

StatusOr<std::unique_ptr<ByteSource>> OpenFileSource(const std::string& path) {
  int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return Status::IoError("open " + path + ": " + std::strerror(errno));
  return std::unique_ptr<ByteSource>(new FileSource(fd, path));
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

}  // namespace xladb::ingest
