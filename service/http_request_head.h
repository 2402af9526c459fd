// Reading a request's head (its request line and header lines, CRLF-separated, as the connection loop holds
// them) before cpp-httplib does: the loop must know where a request ends, and refuse heads that the two
// readers could frame differently (service/http_connection_loop.h).
//
// Contract: pure functions over the text given; the views returned point into `head`. Thread-safe.
#ifndef XLADB_SERVICE_HTTP_REQUEST_HEAD_H_
#define XLADB_SERVICE_HTTP_REQUEST_HEAD_H_

#include <optional>
#include <string_view>
#include <vector>

namespace xladb::service {

// The header lines of `head`, without the request line.
std::vector<std::string_view> HeaderLines(std::string_view head);

// Whether header line `field` is header `name` (case-insensitive).
bool IsHeader(std::string_view field, std::string_view name);

// The value of header `name` in `head`, trimmed; the first when there are several (HeaderProblem refuses
// duplicates of the headers that frame a body).
std::optional<std::string_view> HeaderValue(std::string_view head, std::string_view name);

// Why the loop and httplib could read `head` differently, so that a body could pass for a pipelined
// request (or the reverse): a bare LF, a folded line, or a second Content-Length or Transfer-Encoding.
// nullopt when there is nothing of that kind.
std::optional<std::string_view> HeaderProblem(std::string_view head);

}  // namespace xladb::service

#endif  // XLADB_SERVICE_HTTP_REQUEST_HEAD_H_
