#include "cli/changes_command.h"

#include <cstdio>
#include <cstdlib>
#include <tuple>
#include <optional>

#include "cli/changes_report.h"
#include "cli/gate_config.h"
#include "cli/output.h"
#include "cli/query_commands.h"
#include "ingest/text/visible_text.h"

namespace xladb::cli {
namespace {

// csv: one row per change point, without the attribution.
void PrintCsv(const v1::ListChangesResponse& r, std::FILE* out) {
  ResultPrinter p(OutputFormat::kCsv, out);
  p.SetColumns({"run", "previous_run", "level", "module", "stage", "folder", "xla_module_id", "previous_xla_module_id",
                "metric", "before", "after", "delta", "compiles", "previous_compiles", "entry_signature",
                "previous_entry_signature"});
  for (const auto& c : r.changes()) {
    p.AddRow({Txt(c.run_name()), Txt(c.previous_run_name()), Txt(c.level() == v1::ChangePoint::NAME ? "name" : "identity"),
              Txt(c.module()), Txt(c.stage()), Txt(c.folder()), Opt(c.xla_module_id()), Opt(c.previous_xla_module_id()),
              Txt(c.metric()), Num(c.before()), Num(c.after()), Num(c.delta()), Num(c.compiles()),
              Num(c.previous_compiles()), Txt(c.entry_signature()), Txt(c.previous_entry_signature())});
  }
  p.Finish();
}

}  // namespace

int CmdChanges(QueryClient& b, const ChangesArgs& a) {
  std::optional<ChangesReportFormat> format;
  if (a.format == "table") format = ChangesReportFormat::kTable;
  if (a.format == "json") format = ChangesReportFormat::kJson;
  if (a.format == "markdown") format = ChangesReportFormat::kMarkdown;
  if (!format && a.format != "csv") {
    std::fprintf(stderr, "xladb: --format for changes is table, csv, json or markdown\n");
    return kExitUsage;
  }
  if (!a.since_run.empty() && a.last_n > 0) {
    std::fprintf(stderr, "xladb: changes takes --since RUN or --last N, not both\n");
    return kExitUsage;
  }
  v1::ListChangesRequest req;
  req.set_module(a.module);
  AddLabels(a.labels, req.mutable_labels());
  req.set_since_run(a.since_run);
  req.set_last_n(static_cast<int32_t>(a.last_n));
  if (!AddMetricFlags(a.metrics, req.mutable_metrics())) return kExitUsage;
  for (const auto& [flag, text, setter] :
       {std::make_tuple("--min-bytes", &a.min_bytes, &v1::ListChangesRequest::set_min_bytes),
        std::make_tuple("--first-above", &a.first_above, &v1::ListChangesRequest::set_first_above_bytes)}) {
    if (text->empty()) continue;
    std::optional<int64_t> bytes = ParseByteSize(*text);
    if (!bytes) {
      std::fprintf(stderr, "xladb: %s %s is not a size (e.g. 512MiB, 12GiB, 1000000)\n", flag,
                   ingest::EscapeControlCharacters(*text).c_str());
      return kExitUsage;
    }
    (req.*setter)(*bytes);
  }
  req.set_min_percent(a.min_percent);
  if (a.attribute == "all") {
    req.set_attribute(-1);
  } else if (a.attribute == "none" || a.attribute == "0") {
    req.set_no_attribution(true);
  } else {
    char* end = nullptr;
    const long n = std::strtol(a.attribute.c_str(), &end, 10);
    if (a.attribute.empty() || *end != '\0' || n < 1 || n > 100000) {
      std::fprintf(stderr, "xladb: --attribute takes a count (1 to 100000), all or none\n");
      return kExitUsage;
    }
    req.set_attribute(static_cast<int32_t>(n));
  }
  req.set_max_attribution(static_cast<int32_t>(a.max_attribution));
  req.set_limit(static_cast<int32_t>(a.limit));

  v1::ListChangesResponse resp;
  grpc::Status st = b.Call(&QueryClient::Stub::ListChanges, req, &resp);
  if (!st.ok()) return FailedCall(b, st, kExitFailure);
  for (const std::string& note : resp.notes()) {
    std::fprintf(stderr, "xladb changes: %s\n", ingest::EscapeControlCharacters(note).c_str());
  }
  std::FILE* out = a.output.empty() ? stdout : std::fopen(a.output.c_str(), "wb");
  if (out == nullptr) {
    std::fprintf(stderr, "xladb: cannot write the changes to %s\n", a.output.c_str());
    return kExitFailure;
  }
  if (format) {
    const std::string report = RenderChangesReport(resp, ChangesAsked{a.module, a.since_run, a.last_n}, *format);
    std::fwrite(report.data(), 1, report.size(), out);
  } else {
    PrintCsv(resp, out);
  }
  if (out != stdout && std::fclose(out) != 0) {
    std::fprintf(stderr, "xladb: cannot write the changes to %s\n", a.output.c_str());
    return kExitFailure;
  }
  return kExitOk;
}

}  // namespace xladb::cli
