// Blanks (spaces and tabs) around printed fields: XLA's printers pad columns with spaces and prefix tables
// with tabs, and text pasted from logs mixes the two. Shared by the parsers and the sniffer.
//
// Pure, allocation-free, thread-safe; returned views point into the caller's text.
#ifndef XLADB_INGEST_TEXT_BLANK_TEXT_H_
#define XLADB_INGEST_TEXT_BLANK_TEXT_H_

#include <string_view>

namespace xladb::ingest {

inline bool IsBlank(char c) { return c == ' ' || c == '\t'; }

// `s` without leading spaces and tabs.
inline std::string_view StripLeadingBlanks(std::string_view s) {
  const size_t begin = s.find_first_not_of(" \t");
  return begin == std::string_view::npos ? std::string_view() : s.substr(begin);
}

// `s` without leading and trailing spaces and tabs; empty when it holds nothing else.
inline std::string_view StripBlanks(std::string_view s) {
  s = StripLeadingBlanks(s);
  const size_t end = s.find_last_not_of(" \t");
  return end == std::string_view::npos ? std::string_view() : s.substr(0, end + 1);
}

}  // namespace xladb::ingest

#endif  // XLADB_INGEST_TEXT_BLANK_TEXT_H_
