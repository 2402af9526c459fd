// TextWriter: appends text to a file through a 1 MiB buffer, or only counts the bytes (a dry run that sizes
// an output before it is written). The dump printers write through it, so a multi-GB dump streams with
// constant memory.
//
// Contract: write errors are remembered, never thrown; Finish() flushes, closes an owned file and returns
// the first error (kIoError naming the path). Not thread-safe. Not copyable.
#ifndef XLADB_BENCH_TEXT_WRITER_H_
#define XLADB_BENCH_TEXT_WRITER_H_

#include <cstdint>
#include <cstdio>
#include <memory>
#include <string>
#include <string_view>

#include "base/status.h"

namespace xladb::bench {

class TextWriter {
 public:
  // A writer that only counts.
  TextWriter();
  // Creates (truncates) `path` for writing.
  static StatusOr<std::unique_ptr<TextWriter>> Create(const std::string& path);
  ~TextWriter();
  TextWriter(const TextWriter&) = delete;
  TextWriter& operator=(const TextWriter&) = delete;

  void Put(std::string_view text) {
    bytes_ += static_cast<int64_t>(text.size());
    if (!file_) return;
    if (text.size() > kBufferSize - used_) Drain(text);
    else {
      text.copy(buffer_.get() + used_, text.size());
      used_ += text.size();
    }
  }
  void Put(char c) { Put(std::string_view(&c, 1)); }
  void PutInt(int64_t value);

  int64_t bytes() const { return bytes_; }
  Status Finish();

 private:
  static constexpr size_t kBufferSize = 1 << 20;
  // Writes the buffer, then `more` (copied into the emptied buffer when it fits).
  void Drain(std::string_view more);
  void WriteOut(const char* data, size_t size);

  std::FILE* file_ = nullptr;
  std::string path_;
  std::unique_ptr<char[]> buffer_;
  size_t used_ = 0;
  int64_t bytes_ = 0;
  int error_ = 0;  // errno of the first failed write
};

}  // namespace xladb::bench

#endif  // XLADB_BENCH_TEXT_WRITER_H_
