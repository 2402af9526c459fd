#include "cli/markdown_text.h"

#include <algorithm>

#include "ingest/text/visible_text.h"
#include "service/pages/html_text.h"

namespace xladb::cli {
namespace {

bool IsAsciiPunctuation(char c) {
  return (c >= '!' && c <= '/') || (c >= ':' && c <= '@') || (c >= '[' && c <= '`') || (c >= '{' && c <= '~');
}

std::string CodeSpan(std::string_view text, bool in_table_cell) {
  std::string body = ingest::EscapeControlCharacters(text);
  size_t longest_run = 0;
  for (size_t i = 0; i < body.size();) {
    size_t run = 0;
    while (i + run < body.size() && body[i + run] == '`') ++run;
    longest_run = std::max(longest_run, run);
    i += std::max<size_t>(run, 1);
  }
  if (in_table_cell) {
    std::string cell;
    for (char c : body) {
      if (c == '|') cell += '\\';
      cell += c;
    }
    body = std::move(cell);
  }
  // One space each side is stripped again by the reader: it keeps a leading or trailing backtick from
  // joining the fence, and keeps text that starts and ends with a space as it is.
  const bool pad = !body.empty() && (body.front() == '`' || body.back() == '`' ||
                                     (body.front() == ' ' && body.back() == ' '));
  const std::string fence(longest_run + 1, '`');
  return fence + (pad ? " " : "") + (body.empty() ? std::string(" ") : body) + (pad ? " " : "") + fence;
}

}  // namespace

std::string MarkdownText(std::string_view text) {
  const std::string visible = ingest::EscapeControlCharacters(text);
  std::string out;
  out.reserve(visible.size() + visible.size() / 4);
  for (char c : visible) {
    if (IsAsciiPunctuation(c)) out += '\\';
    out += c;
  }
  return out;
}

std::string MarkdownCode(std::string_view text) { return CodeSpan(text, false); }
std::string MarkdownCodeInCell(std::string_view text) { return CodeSpan(text, true); }

std::string HtmlCodeInMarkdown(std::string_view text) {
  return "<code>" + service::pages::Html(ingest::EscapeControlCharacters(text)) + "</code>";
}

std::string ReportUrlProblem(std::string_view url) {
  std::string scheme;
  for (char c : url.substr(0, std::min(url.find(':'), url.size()))) {
    scheme += static_cast<char>(c >= 'A' && c <= 'Z' ? c - 'A' + 'a' : c);
  }
  if (url.find(':') == std::string_view::npos || (scheme != "http" && scheme != "https") ||
      url.substr(scheme.size(), 3) != "://" || url.size() == scheme.size() + 3) {
    return "must be an http:// or https:// URL";
  }
  for (char c : url) {
    const auto b = static_cast<unsigned char>(c);
    if (b <= 0x20 || b >= 0x7f || c == '<' || c == '>' || c == '\\' || c == '(' || c == ')') {
      return "must not hold white space, control characters, < > ( ) \\ or text that is not ASCII "
             "(percent-encode them)";
    }
  }
  return {};
}

}  // namespace xladb::cli
