#include "ingest/source/line_reader.h"

#include <cstring>

namespace xladb::ingest {

namespace {
constexpr size_t kInitialBuffer = size_t{256} << 10;  // 256 KiB; doubles for longer lines
}  // namespace

LineReader::LineReader(ByteSource* source, size_t max_line_bytes)
    : source_(source),
      max_line_bytes_(max_line_bytes),
      buffer_(std::make_unique_for_overwrite<char[]>(kInitialBuffer)),
      capacity_(kInitialBuffer) {}

bool LineReader::Fill() {
  if (eof_ || !status_.ok()) return false;
  // Move the partial line to the front, growing the buffer if the partial line fills it.
  if (begin_ > 0) {
    std::memmove(buffer_.get(), buffer_.get() + begin_, end_ - begin_);
    end_ -= begin_;
    begin_ = 0;
  }
  if (end_ == capacity_) {
    if (capacity_ > max_line_bytes_) {
      status_ = Status::ResourceExhausted("line " + std::to_string(line_number_ + 1) + " is longer than " +
                                          std::to_string(max_line_bytes_) + " bytes");
      return false;
    }
    auto bigger = std::make_unique_for_overwrite<char[]>(capacity_ * 2);
    std::memcpy(bigger.get(), buffer_.get(), end_);
    buffer_ = std::move(bigger);
    capacity_ *= 2;
  }
  auto n = source_->Read(buffer_.get() + end_, capacity_ - end_);
  if (!n.ok()) {
    status_ = n.status();
    return false;
  }
  if (*n == 0) {
    eof_ = true;
    return false;
  }
  if (!saw_nul_ && std::memchr(buffer_.get() + end_, '\0', *n) != nullptr) saw_nul_ = true;
  end_ += *n;
  return true;
}

bool LineReader::Next(std::string_view* line) {
  size_t scanned = begin_;
  for (;;) {
    const char* start = buffer_.get() + scanned;
    const void* nl = std::memchr(start, '\n', end_ - scanned);
    if (nl != nullptr) {
      size_t pos = static_cast<size_t>(static_cast<const char*>(nl) - buffer_.get());
      size_t len = pos - begin_;
      if (len > max_line_bytes_) {
        status_ = Status::ResourceExhausted("line " + std::to_string(line_number_ + 1) + " is longer than " +
                                            std::to_string(max_line_bytes_) + " bytes");
        return false;
      }
      const char* line_start = buffer_.get() + begin_;
      bytes_consumed_ += static_cast<int64_t>(len + 1);
      begin_ = pos + 1;
      if (len > 0 && line_start[len - 1] == '\r') {
        --len;
        ++crlf_lines_;
      }
      *line = std::string_view(line_start, len);
      ++line_number_;
      return true;
    }
    size_t scanned_len = end_ - begin_;
    if (!Fill()) {
      if (!status_.ok()) return false;
      if (end_ > begin_) {  // final line without '\n'
        last_line_unterminated_ = true;
        size_t len = end_ - begin_;
        const char* line_start = buffer_.get() + begin_;
        bytes_consumed_ += static_cast<int64_t>(len);
        begin_ = end_;
        if (len > 0 && line_start[len - 1] == '\r') {
          --len;
          ++crlf_lines_;
        }
        *line = std::string_view(line_start, len);
        ++line_number_;
        return true;
      }
      return false;
    }
    scanned = begin_ + scanned_len;  // Fill() moved data to the front; resume after what was scanned
  }
}

}  // namespace xladb::ingest
