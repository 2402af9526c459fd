#include "cli/job_commands.h"

#include <chrono>
#include <cstdio>
#include <thread>

#include "cli/remote_commands.h"
#include "ingest/text/visible_text.h"

namespace xladb::cli {
namespace {

std::string Visible(const std::string& s) { return ingest::EscapeControlCharacters(s); }

std::string SourceOf(const v1::OomBuffer& b) {
  return b.source_file().empty() ? "" : b.source_file() + ":" + std::to_string(b.source_line());
}

// The rows of one report: one per buffer, the report's figures on each.
void AddReportRows(ResultPrinter& p, const v1::OomReport& r) {
  const Cell none{"", true, false};
  const std::vector<Cell> head = {Txt(r.path()), Txt(r.module()), Opt(r.xla_module_id()),
                                  Opt(r.failed_allocation_bytes()), Opt(r.limit_bytes()),
                                  Opt(r.total_allocation_bytes())};
  if (r.buffers().empty()) {
    std::vector<Cell> row = head;
    row.insert(row.end(), {none, none, none, none, none, none, none});
    p.AddRow(row);
  }
  for (const v1::OomBuffer& b : r.buffers()) {
    std::vector<Cell> row = head;
    row.insert(row.end(), {Num(b.buffer_number()), Num(b.size_bytes()), Txt(b.size_text()), Txt(b.shape()),
                           Txt(b.is_entry_parameter() ? "parameter" : b.xla_label()), Txt(b.op_name()),
                           Txt(SourceOf(b))});
    p.AddRow(row);
  }
}

const std::vector<std::string> kOomColumns = {"report", "module", "xla_id", "failed_allocation_bytes", "limit_bytes",
                                              "total_allocation_bytes", "buffer", "size_bytes", "size", "shape",
                                              "op", "op_name", "source"};

}  // namespace

int CmdJobs(QueryClient& b, OutputFormat format, const std::string& run, const std::string& state, int64_t limit) {
  v1::ListJobsRequest req;
  req.set_run_name(run);
  req.set_state(state);
  req.set_limit(static_cast<int32_t>(limit));
  v1::ListJobsResponse resp;
  grpc::Status st = b.Call(&QueryClient::Stub::ListJobs, req, &resp);
  if (!st.ok()) return FailedCall(b, st, kExitFailure);
  ResultPrinter p(format, stdout);
  p.SetColumns({"job", "state", "run", "source", "path", "created", "finished", "message"});
  const Cell none{"", true, false};
  for (const v1::JobRecord& j : resp.jobs()) {
    p.AddRow({Txt(j.job_id()), Txt(j.state()), Txt(j.run_name()), Txt(j.source()), Txt(j.path()),
              Time(j.created_at_us()), j.finished_at_us() > 0 ? Time(j.finished_at_us()) : none, Txt(j.message())});
  }
  p.Finish();
  return kExitOk;
}

std::optional<int64_t> ParseWaitTimeout(const std::string& text) {
  if (text.empty() || text.size() > 12) return std::nullopt;
  size_t digits = 0;
  while (digits < text.size() && text[digits] >= '0' && text[digits] <= '9') ++digits;
  if (digits == 0) return std::nullopt;
  const std::string unit = text.substr(digits);
  const int64_t n = std::stoll(text.substr(0, digits));
  if (unit.empty() || unit == "s") return n * 1000;
  if (unit == "m") return n * 60 * 1000;
  if (unit == "h") return n * 3600 * 1000;
  return std::nullopt;
}

int CmdWait(QueryClient& b, const WaitArgs& a) {
  const std::optional<int64_t> timeout_ms = ParseWaitTimeout(a.timeout);
  if (!timeout_ms) {
    std::fprintf(stderr, "xladb: --timeout must be N, Ns, Nm or Nh (got '%s')\n", Visible(a.timeout).c_str());
    return kExitUsage;
  }
  if (a.run.empty()) {
    std::fprintf(stderr, "xladb: wait needs a run name\n");
    return kExitUsage;
  }
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::milliseconds(*timeout_ms);
  for (;;) {
    v1::ListJobsRequest req;
    req.set_run_name(a.run);
    v1::ListJobsResponse resp;
    grpc::Status st = b.Call(&QueryClient::Stub::ListJobs, req, &resp);
    if (!st.ok()) {
      b.Fail(st);
      return kExitWaitCannotAsk;
    }
    bool pending = resp.jobs().empty();
    for (const v1::JobRecord& j : resp.jobs()) pending = pending || j.state() == "QUEUED" || j.state() == "RUNNING";
    if (!pending) {
      const v1::JobRecord& newest = resp.jobs(0);  // newest first
      if (newest.state() == "SUCCEEDED") {
        std::fprintf(stderr, "run %s: job %s succeeded\n", Visible(a.run).c_str(), Visible(newest.job_id()).c_str());
        return kExitOk;
      }
      std::fprintf(stderr, "run %s: job %s %s: %s\n", Visible(a.run).c_str(), Visible(newest.job_id()).c_str(),
                   Visible(newest.state()).c_str(), Visible(newest.message()).c_str());
      return kExitFailure;
    }
    const auto now = std::chrono::steady_clock::now();
    if (now >= deadline) {
      std::fprintf(stderr, "xladb: run %s: %s after %s\n", Visible(a.run).c_str(),
                   resp.jobs().empty() ? "no job queued" : "jobs still queued or running", Visible(a.timeout).c_str());
      return kExitWaitTimedOut;
    }
    std::this_thread::sleep_for(std::min<std::chrono::steady_clock::duration>(
        std::chrono::milliseconds(a.poll_ms), deadline - now));
  }
}

int CmdOom(QueryClient& b, OutputFormat format, const std::string& run, const std::string& module) {
  v1::OomReportsRequest req;
  req.set_run_name(run);
  req.set_module(module);
  v1::OomReportsResponse resp;
  grpc::Status st = b.Call(&QueryClient::Stub::OomReports, req, &resp);
  if (!st.ok()) return b.Fail(st);
  ResultPrinter p(format, stdout);
  p.SetColumns(kOomColumns);
  for (const v1::OomReport& r : resp.reports()) AddReportRows(p, r);
  p.Finish();
  if (resp.reports().empty()) std::fprintf(stderr, "run %s has no OOM report\n", Visible(run).c_str());
  return kExitOk;
}

int TopFromOomReport(QueryClient& b, OutputFormat format, const std::string& run, const v1::TopBuffersResponse& top) {
  v1::OomReportsRequest req;
  req.set_run_name(run);
  req.set_module(top.module());
  v1::OomReportsResponse resp;
  grpc::Status st = b.Call(&QueryClient::Stub::OomReports, req, &resp);
  if (!st.ok()) return b.Fail(st);
  for (const v1::OomReport& r : resp.reports()) {
    if (r.stage() != top.stage() || r.xla_module_id() != top.xla_module_id() || r.folder() != top.folder()) continue;
    std::string what = "module " + Visible(r.module()) + ": no buffer assignment; the buffers of its OOM report " +
                       Visible(r.path());
    if (r.failed_allocation_bytes() >= 0) {
      what += " (failed to allocate " + std::to_string(r.failed_allocation_bytes()) + " bytes)";
    }
    std::fprintf(stderr, "%s, largest first\n", what.c_str());
    ResultPrinter p(format, stdout);
    p.SetColumns(kOomColumns);
    AddReportRows(p, r);
    p.Finish();
    return kExitOk;
  }
  return -1;
}

}  // namespace xladb::cli
