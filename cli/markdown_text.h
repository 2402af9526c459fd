// Markdown text: values from dumps, run names, labels and server messages put into GitHub-flavoured Markdown
// (a PR comment, $GITHUB_STEP_SUMMARY), where they must read as the characters they are and never become a
// link, an image, emphasis, a mention, raw HTML, a new table cell or a new line. A file named
// `src/![pwn](https://evil.example/p.png) @octocat **bold**.py` comes out as those characters, inert.
//
//   MarkdownText(s)         plain text: every ASCII punctuation character is backslash-escaped (CommonMark
//                           allows that for all of them), so none of \ ` * _ { } [ ] ( ) # + - . ! | < > @ ~ :
//                           & means anything; `:` and `.` escaped also stop GFM's bare-URL autolinks.
//   MarkdownCode(s)         a code span the text cannot close: the fence is one backtick longer than the
//                           longest run of backticks inside, padded with a space where the text starts or
//                           ends with a backtick. Nothing is decoded inside a code span (no entities), so `<`
//                           stays `<`, and GitHub makes no links or mentions there.
//   MarkdownCodeInCell(s)   the same inside a GFM table cell, where `|` must be written `\|` even in a code
//                           span (GFM splits the row into cells before it reads code spans).
//   HtmlCodeInMarkdown(s)   <code>…</code> with HTML escaping, for raw HTML in the Markdown (the
//                           <details><summary> line, which Markdown does not parse).
//
// Every one of them first writes control characters and bidi controls as visible escapes
// (ingest/text/visible_text.h), line breaks included, so no value ends a table row, a list item or an HTML block.
//
//   ReportUrlProblem(url)   "" for an http:// or https:// URL that is safe as a link destination as it is
//                           ([text](url)); else why not: other schemes (javascript:, data:), white space,
//                           controls, < > ( ) \ or text that is not ASCII (all can be percent-encoded).
//
// Pure functions; thread-safe.
#ifndef XLADB_CLI_MARKDOWN_TEXT_H_
#define XLADB_CLI_MARKDOWN_TEXT_H_

#include <string>
#include <string_view>

namespace xladb::cli {

std::string MarkdownText(std::string_view text);
std::string MarkdownCode(std::string_view text);
std::string MarkdownCodeInCell(std::string_view text);
std::string HtmlCodeInMarkdown(std::string_view text);
std::string ReportUrlProblem(std::string_view url);

}  // namespace xladb::cli

#endif  // XLADB_CLI_MARKDOWN_TEXT_H_
