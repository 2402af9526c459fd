#include "bench/text_writer.h"

#include <cerrno>
#include <charconv>
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
  WriteOut(buffer_.get(), used_);
  used_ = 0;
  if (more.size() >= kBufferSize) {
    WriteOut(more.data(), more.size());
    return;
  }
  more.copy(buffer_.get(), more.size());
  used_ = more.size();
}

void TextWriter::WriteOut(const char* data, size_t size) {
  if (error_ != 0 || size == 0) return;
  if (std::fwrite(data, 1, size, file_) != size) error_ = errno != 0 ? errno : EIO;
}

void TextWriter::PutInt(int64_t value) {
  char buf[24];
  auto r = std::to_chars(buf, buf + sizeof buf, value);
  Put(std::string_view(buf, static_cast<size_t>(r.ptr - buf)));
}

Status TextWriter::Finish() {
  if (!file_) return Status::Ok();
  Drain({});
  if (std::fclose(file_) != 0 && error_ == 0) error_ = errno != 0 ? errno : EIO;
  file_ = nullptr;
  if (error_ != 0) return Status::IoError("write to " + path_ + " failed: " + std::strerror(error_));
  return Status::Ok();
}

}  // namespace xladb::bench
