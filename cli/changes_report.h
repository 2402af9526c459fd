// Renders the change points of a run history (a ListChangesResponse) for people and tools:
//   * table:    plain text for a terminal, one block per change point, its buffers and source lines under it;
//   * json:     the stable schema of docs/changes-json.md;
//   * markdown: a nightly summary to post ("3 changes since `nightly-1102`"): a table of the change points and
//               a <details> block per explained one; it stays under max_bytes and says what it left out.
// (csv is a result set: cli/changes_command.h.) Pure functions; thread-safe.
#ifndef XLADB_CLI_CHANGES_REPORT_H_
#define XLADB_CLI_CHANGES_REPORT_H_

#include <cstddef>
#include <cstdint>
#include <string>

#include "cli/check_report.h"
#include "xladb/v1/xladb.pb.h"

namespace xladb::cli {

enum class ChangesReportFormat { kTable, kJson, kMarkdown };

// What was asked, for the headline: "3 changes since `nightly-1102`", "… in the last 30 runs", "… of `jit_f`".
struct ChangesAsked {
  std::string module;
  std::string since_run;
  int64_t last_n = 0;
};

std::string RenderChangesReport(const v1::ListChangesResponse& changes, const ChangesAsked& asked,
                                ChangesReportFormat format, size_t max_markdown_bytes = kMaxMarkdownBytes);

}  // namespace xladb::cli

#endif  // XLADB_CLI_CHANGES_REPORT_H_
