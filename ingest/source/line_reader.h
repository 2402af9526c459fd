// LineReader: splits a ByteSource into lines with memchr over a fixed buffer that grows only for a line
// longer than it (§11.1). Memory is bounded by the longest line, which is itself capped (max_line_bytes).
//
// Contract
//   * Next() returns the next line without its '\n' (and without a trailing '\r', counted in crlf_lines()).
//     The view is valid until the next call. A final line without '\n' is returned too.
//   * Next() returns false at end of input or on error; status() tells which. A line longer than
//     max_line_bytes is an error (kResourceExhausted) naming the line number.
//   * Single-threaded.
#ifndef XLADB_INGEST_SOURCE_LINE_READER_H_
#define XLADB_INGEST_SOURCE_LINE_READER_H_

#include <cstdint>
#include <string>
#include <string_view>
#include <memory>

#include "ingest/source/byte_source.h"
#include "base/status.h"

namespace xladb::ingest {

class LineReader {
 public:
  static constexpr size_t kDefaultMaxLineBytes = size_t{1} << 30;  // 1 GiB

  explicit LineReader(ByteSource* source, size_t max_line_bytes = kDefaultMaxLineBytes);

  bool Next(std::string_view* line);
  const Status& status() const { return status_; }
  int64_t line_number() const { return line_number_; }  // of the line last returned (1-based)
  int64_t bytes_consumed() const { return bytes_consumed_; }
  int64_t crlf_lines() const { return crlf_lines_; }
  bool saw_nul() const { return saw_nul_; }
  // True when the last line returned had no '\n' after it: XLA ends every dump with one, so this is the sign
  // of a file cut short (a truncated copy, a writer that died), whose last line may be incomplete.
  bool last_line_unterminated() const { return last_line_unterminated_; }

 private:
  bool Fill();  // reads more bytes; false at EOF or error

  ByteSource* source_;
  size_t max_line_bytes_;
  std::unique_ptr<char[]> buffer_;  // not zero-filled: most files are small, and zeroing costs
  size_t capacity_ = 0;
  size_t begin_ = 0;  // start of unconsumed data
  size_t end_ = 0;    // end of valid data
  bool eof_ = false;
  Status status_;
  int64_t line_number_ = 0;
  int64_t bytes_consumed_ = 0;
  int64_t crlf_lines_ = 0;
  bool saw_nul_ = false;
  bool last_line_unterminated_ = false;
};

}  // namespace xladb::ingest

#endif  // XLADB_INGEST_SOURCE_LINE_READER_H_
