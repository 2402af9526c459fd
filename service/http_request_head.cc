#include "service/http_request_head.h"

#include <algorithm>
#include <cctype>

namespace xladb::service {

namespace {

bool EqualsIgnoreCase(std::string_view a, std::string_view b) {
  return a.size() == b.size() && std::equal(a.begin(), a.end(), b.begin(), [](unsigned char x, unsigned char y) {
           return std::tolower(x) == std::tolower(y);
         });
}

}  // namespace

// The header lines of `head` (the request line and header lines, CRLF-separated), without the request line.
std::vector<std::string_view> HeaderLines(std::string_view head) {
  std::vector<std::string_view> lines;
  size_t line = head.find("\r\n");
  while (line != std::string_view::npos && line + 2 < head.size()) {
    const size_t start = line + 2;
    line = head.find("\r\n", start);
    lines.push_back(head.substr(start, (line == std::string_view::npos ? head.size() : line) - start));
  }
  return lines;
}

bool IsHeader(std::string_view field, std::string_view name) {
  const size_t colon = field.find(':');
  return colon != std::string_view::npos && EqualsIgnoreCase(field.substr(0, colon), name);
}

// The value of header `name` in `head`, trimmed; the first when there are several (HeaderProblem refuses
// duplicates of the headers that frame a body).
std::optional<std::string_view> HeaderValue(std::string_view head, std::string_view name) {
  for (std::string_view field : HeaderLines(head)) {
    if (!IsHeader(field, name)) continue;
    std::string_view value = field.substr(field.find(':') + 1);
    while (!value.empty() && (value.front() == ' ' || value.front() == '\t')) value.remove_prefix(1);
    while (!value.empty() && (value.back() == ' ' || value.back() == '\t')) value.remove_suffix(1);
    return value;
  }
  return std::nullopt;
}

// Why the loop and httplib could read `head` differently, so that a body could pass for a pipelined
// request (or the reverse): a bare LF, a folded line, or a second Content-Length or Transfer-Encoding.
// Such a request is refused (400) rather than guessed at. nullopt when there is nothing of that kind.
std::optional<std::string_view> HeaderProblem(std::string_view head) {
  for (size_t i = head.find('\n'); i != std::string_view::npos; i = head.find('\n', i + 1)) {
    if (i == 0 || head[i - 1] != '\r') return "a line ends in a bare LF";
  }
  int lengths = 0, encodings = 0;
  for (std::string_view field : HeaderLines(head)) {
    if (!field.empty() && (field.front() == ' ' || field.front() == '\t')) return "a folded header line";
    lengths += IsHeader(field, "Content-Length");
    encodings += IsHeader(field, "Transfer-Encoding");
  }
  if (lengths > 1 || encodings > 1) return "a second Content-Length or Transfer-Encoding";
  return std::nullopt;
}

}  // namespace xladb::service
