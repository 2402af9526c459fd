#include "bench/text_writer.h"

#include <algorithm>
#include <cerrno>
#include <charconv>
#include <cstdarg>
#include <cstring>

namespace xladb::bench {

TextWriter::TextWriter() = default;

StatusOr<std::unique_ptr<TextWriter>> TextWriter::Create(const std::string& path) {
  std::FILE* f = std::fopen(path.c_str(), "wb");
  if (!f) return Status::IoError("cannot create " + path + ": " + std::strerror(errno));
  auto w = std::make_unique<TextWriter>();
  w->file_ = f;
  w->path_ = path;
  w->buffer_ = std::make_unique<char[]>(kBufferSize);
  return w;
}

TextWriter::~TextWriter() {
  if (file_) std::fclose(file_);
}

void TextWriter::Drain(std::string_view more) {
  if (!failed_ && used_ > 0 && std::fwrite(buffer_.get(), 1, used_, file_) != used_) failed_ = true;
  used_ = 0;
  if (more.size() >= kBufferSize) {
    if (!failed_ && std::fwrite(more.data(), 1, more.size(), file_) != more.size()) failed_ = true;
    return;
  }
  more.copy(buffer_.get(), more.size());
  used_ = more.size();
}

void TextWriter::PutInt(int64_t value) {
  char buf[24];
  auto r = std::to_chars(buf, buf + sizeof buf, value);
  Put(std::string_view(buf, static_cast<size_t>(r.ptr - buf)));
}

void TextWriter::PutRightAligned(std::string_view text, size_t width) {
  for (size_t i = text.size(); i < width; ++i) Put(' ');
  Put(text);
}

void TextWriter::PutFormat(const char* format, ...) {
  char buf[256];
  va_list args;
  va_start(args, format);
  int n = std::vsnprintf(buf, sizeof buf, format, args);
  va_end(args);
  if (n < 0) return;
  Put(std::string_view(buf, std::min(static_cast<size_t>(n), sizeof buf - 1)));
}

Status TextWriter::Finish() {
  if (!file_) return Status::Ok();
  Drain({});
  if (std::fclose(file_) != 0) failed_ = true;
  file_ = nullptr;
  if (failed_) return Status::IoError("write to " + path_ + " failed: " + std::strerror(errno));
  return Status::Ok();
}

}  // namespace xladb::bench
