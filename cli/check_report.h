// Renders the gate's answer (a CheckRunResponse) for people and tools:
// Every format shows the reshaped pairs with both entry signatures and the roll-up by jit name (by_name).
//   * table:    plain text for a terminal;
//   * json:     the stable schema of docs/check-json.md, for other tools;
//   * markdown: a PR comment or $GITHUB_STEP_SUMMARY: the verdict in one line, a table of the modules that
//               changed by size of change, and a <details> block per regressed module naming the buffers and
//               source lines; it stays under max_bytes and says what it left out;
//   * junit:    one testcase per module, a failure per regression, for CI test tabs.
// Pure functions; thread-safe.
#ifndef XLADB_CLI_CHECK_REPORT_H_
#define XLADB_CLI_CHECK_REPORT_H_

#include <cstddef>
#include <optional>
#include <string>
#include <string_view>

#include "xladb/v1/xladb.pb.h"

namespace xladb::cli {

enum class CheckReportFormat { kTable, kJson, kMarkdown, kJunit };

// "table", "json", "markdown" or "junit"; nullopt otherwise.
std::optional<CheckReportFormat> ParseCheckReportFormat(std::string_view name);

// Markdown stays under this (GitHub's step summary limit is 1 MiB).
inline constexpr size_t kMaxMarkdownBytes = (size_t{1} << 20) - 4096;

// One jit name's roll-up in a line (service::RollupLine over its headline metric), under `shown_name`.
std::string RollupText(const v1::NameRollup& n, const std::string& shown_name);

std::string RenderCheckReport(const v1::CheckRunResponse& report, CheckReportFormat format,
                              size_t max_markdown_bytes = kMaxMarkdownBytes);

}  // namespace xladb::cli

#endif  // XLADB_CLI_CHECK_REPORT_H_
