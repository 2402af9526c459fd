#include "cli/query_commands.h"

#include <cctype>
#include <cstdio>
#include <ctime>
#include <fstream>
#include <map>
#include <string>
#include <vector>

#include "cli/check_report.h"
#include "cli/gate_config.h"
#include "cli/job_commands.h"
#include "cli/markdown_text.h"
#include "ingest/dump_ingester.h"
#include "ingest/text/visible_text.h"
#include "service/human_bytes.h"
#include "store/facts/module_metrics.h"
#include "xladb/v1/xladb.pb.h"

namespace xladb::cli {

namespace v1 = xladb::v1;

namespace {

Cell Real(double v, const char* fmt = "%.6g") {
  char buf[32];
  std::snprintf(buf, sizeof buf, fmt, v);
  return Cell{buf, false, true};
}

std::string JoinLabels(const google::protobuf::RepeatedPtrField<v1::Label>& labels) {
  std::string s;
  for (const auto& l : labels) {
    if (!s.empty()) s += ",";
    s += l.key() + "=" + l.value();
  }
  return s;
}

Cell Signed(int64_t v) {
  Cell c = Num(v);
  if (v > 0) c.text = "+" + c.text;
  return c;
}

// --metric: the short names peak, total and temp, or a metric's full name; the full name (the trend's column)
// and its TrendMetric.
std::optional<std::pair<std::string, v1::TrendMetric>> TrendMetricOf(const std::string& name) {
  const std::string full(store::MetricOfArgument(name));
  std::string upper = full;
  for (char& ch : upper) ch = static_cast<char>(std::toupper(static_cast<unsigned char>(ch)));
  v1::TrendMetric metric;
  if (store::FindModuleMetric(full) && v1::TrendMetric_Parse(upper, &metric)) return std::make_pair(full, metric);
  return std::nullopt;
}

// TrendMetricOf(value), or a usage line on stderr naming the flag, what else it takes, and every metric.
std::optional<std::pair<std::string, v1::TrendMetric>> MetricFlag(const char* flag, const char* also,
                                                                   const std::string& value) {
  auto metric = TrendMetricOf(value);
  if (!metric) {
    std::fprintf(stderr, "xladb: %s must be %speak, total, temp or one of: %s\n", flag, also,
                 store::ModuleMetricNames().c_str());
  }
  return metric;
}

// The server's notes (how a name was resolved, whether the peaks differ), one a line on stderr.
void PrintNotes(const google::protobuf::RepeatedPtrField<std::string>& notes) {
  for (const std::string& note : notes) std::fprintf(stderr, "%s\n", ingest::EscapeControlCharacters(note).c_str());
}

int64_t TimeOrDie(const std::string& text, bool* ok) {
  if (text.empty()) return 0;
  auto t = ingest::ParseTimeToUs(text);
  if (!t.ok()) {
    std::fprintf(stderr, "xladb: %s\n", t.status().message().c_str());
    *ok = false;
    return 0;
  }
  return *t;
}

}  // namespace

void AddLabels(const LabelList& labels, google::protobuf::RepeatedPtrField<v1::Label>* out) {
  for (const auto& [k, v] : labels) {
    auto* l = out->Add();
    l->set_key(k);
    l->set_value(v);
  }
}

bool AddMetricFlags(const std::vector<std::string>& metrics, google::protobuf::RepeatedPtrField<std::string>* out) {
  for (const auto& m : metrics) {
    if (!store::FindModuleMetric(m)) {
      std::fprintf(stderr, "xladb: --metric %s is not a metric; the metrics are: %s\n", m.c_str(),
                   store::ModuleMetricNames().c_str());
      return false;
    }
    out->Add(std::string(m));
  }
  return true;
}

int CmdRuns(QueryClient& b, OutputFormat format, const RunsArgs& a) {
  bool ok = true;
  v1::ListRunsRequest req;
  AddLabels(a.labels, req.mutable_labels());
  req.set_since_us(TimeOrDie(a.since, &ok));
  req.set_until_us(TimeOrDie(a.until, &ok));
  if (!ok) return kExitUsage;
  req.set_name_pattern(a.name_pattern);
  ResultPrinter p(format, stdout);
  p.SetColumns({"run", "run_time", "modules", "files", "errors", "labels", "source"});
  int64_t shown = 0;
  do {
    req.set_page_size(static_cast<int32_t>(std::min<int64_t>(1000, std::max<int64_t>(1, a.limit - shown))));
    v1::ListRunsResponse resp;
    grpc::Status st = b.Call(&QueryClient::Stub::ListRuns, req, &resp);
    if (!st.ok()) return b.Fail(st);
    for (const auto& r : resp.runs()) {
      if (shown >= a.limit) break;
      p.AddRow({Txt(r.name()), Time(r.run_time_us()), Num(r.module_count()), Num(r.file_count()),
                Num(r.error_file_count()), Txt(JoinLabels(r.labels())), Txt(r.source_path())});
      ++shown;
    }
    req.set_page_token(resp.next_page_token());
  } while (!req.page_token().empty() && shown < a.limit);
  p.Finish();
  return kExitOk;
}

// `--budget METRIC=SIZE` flags, for every module, appended to `out`; false (said on stderr) for a bad one.
bool AddBudgetFlags(const std::vector<std::string>& flags, google::protobuf::RepeatedPtrField<v1::MemoryBudget>* out) {
  for (const std::string& flag : flags) {
    const size_t eq = flag.find('=');
    const std::string metric = flag.substr(0, eq == std::string::npos ? 0 : eq);
    const int64_t size = eq == std::string::npos ? 0 : ParseByteSize(std::string_view(flag).substr(eq + 1)).value_or(0);
    if (!store::FindModuleMetric(metric) || size <= 0) {
      std::fprintf(stderr,
                   "xladb: --budget %s: METRIC=SIZE with a metric (%s) and a size above 0 (bytes, or with a unit: "
                   "15.5GiB, 512MB)\n",
                   flag.c_str(), store::ModuleMetricNames().c_str());
      return false;
    }
    v1::MemoryBudget* budget = out->Add();
    budget->set_metric(metric);
    budget->set_max_bytes(size);
  }
  return true;
}

int CmdModules(QueryClient& b, OutputFormat format, const ModulesArgs& a) {
  v1::ListModulesRequest req;
  req.set_run_name(a.run);
  if (!AddBudgetFlags(a.budgets, req.mutable_budgets())) return kExitUsage;
  if (a.warn_percent) req.set_warn_percent(*a.warn_percent);
  req.set_name_pattern(a.pattern);
  if (a.sort != "name") {
    auto metric = MetricFlag("--sort", "name, ", a.sort);
    if (!metric) return kExitUsage;
    req.set_sort_metric(metric->first);
  }
  req.set_limit(static_cast<int32_t>(a.limit));
  req.set_stage(a.stage);
  req.set_memory_only(!a.all);
  v1::ListModulesResponse resp;
  grpc::Status st = b.Call(&QueryClient::Stub::ListModules, req, &resp);
  if (!st.ok()) return b.Fail(st);
  ResultPrinter p(format, stdout);
  std::vector<std::string> columns = {"module", "xla_id", "stage", "backend", "peak_bytes", "live_peak_padded_bytes",
                                      "total_bytes", "temp_bytes", "allocations", "values", "instructions", "folder",
                                      "entry_signature", "oom_report", "entry_sharding"};
  if (!a.budgets.empty()) columns.push_back("budget");  // the headroom, service/human_bytes.h
  p.SetColumns(columns);
  for (const auto& m : resp.modules()) {
    std::vector<Cell> row = {Txt(m.name()), Opt(m.xla_module_id()), Txt(m.stage()), Txt(m.backend()),
                             Opt(m.peak_bytes()), Opt(m.live_peak_padded_bytes()), Opt(m.total_bytes()),
                             Opt(m.temp_bytes()), Num(m.allocation_count()), Num(m.value_count()),
                             Num(m.instruction_count()), Txt(m.folder()), Txt(m.entry_signature()),
                             Txt(m.has_oom_report() ? "yes" : ""), Txt(m.entry_sharding())};
    if (!a.budgets.empty()) {
      const v1::BudgetUse& u = m.budget();
      row.push_back(Txt(m.has_budget() ? service::BudgetHeadroom(u.metric(), u.current(), u.max_bytes(), u.percent(),
                                                                 u.over(), u.warn())
                                       : std::string()));
    }
    p.AddRow(row);
  }
  p.Finish();
  return kExitOk;
}

int CmdTrend(QueryClient& b, OutputFormat format, const TrendArgs& a) {
  v1::PeakMemoryTrendRequest req;
  req.set_module(a.module);
  auto metric = a.metric.empty() ? std::make_optional(std::make_pair(std::string(), v1::TREND_METRIC_UNSPECIFIED))
                                 : MetricFlag("--metric", "", a.metric);
  if (!metric) return kExitUsage;
  req.set_metric(metric->second);
  req.set_last_n(static_cast<int32_t>(a.last_n));
  AddLabels(a.labels, req.mutable_labels());
  req.set_stage(a.stage);
  if (a.folder) req.set_folder(*a.folder);
  if (a.xla_module_id && a.run.empty()) {
    std::fprintf(stderr, "xladb: trend --xla-id picks one compile of one run: name the run with --run RUN\n");
    return kExitUsage;
  }
  if (a.xla_module_id) req.set_xla_module_id(*a.xla_module_id);
  req.set_run_name(a.run);
  req.set_fingerprint(a.fingerprint);
  bool ok = true;
  req.set_since_us(TimeOrDie(a.since, &ok));
  req.set_until_us(TimeOrDie(a.until, &ok));
  if (!ok) return kExitUsage;
  v1::PeakMemoryTrendResponse resp;
  grpc::Status st = b.Call(&QueryClient::Stub::PeakMemoryTrend, req, &resp);
  if (!st.ok()) return b.Fail(st);
  PrintNotes(resp.notes());
  if (!resp.metric().empty()) metric->first = resp.metric();
  if (metric->first.empty()) metric->first = "peak_bytes";  // a server from before 2026-11
  // Both peaks beside the metric, each under its name: XLA's printed one and the padded live one.
  const bool show_xla_peak = metric->first != "peak_bytes";
  const bool show_padded_peak = metric->first != "live_peak_padded_bytes";
  std::vector<std::string> columns = {"run",    "run_time",    "module", "xla_id",
                                      "stage",  "folder", metric->first, "change"};
  if (show_xla_peak) columns.push_back("peak_bytes");
  if (show_padded_peak) columns.push_back("live_peak_padded_bytes");
  for (const char* c : {"matched_by", "fingerprint", "entry_signature", "entry_sharding"}) columns.push_back(c);
  ResultPrinter p(format, stdout);
  p.SetColumns(columns);
  for (const auto& pt : resp.points()) {
    // The change compares matched instances of one identity only (store/compare/module_trend.h).
    Cell change = pt.has_change() ? Num(pt.change()) : Cell{"", true, false};
    if (pt.has_change() && pt.change() > 0) change.text = "+" + change.text;
    std::vector<Cell> row = {Txt(pt.run_name()), Time(pt.run_time_us()), Txt(pt.module_name()),
                             Opt(pt.xla_module_id()), Txt(pt.stage()), Txt(pt.folder()), Num(pt.value()), change};
    if (show_xla_peak) row.push_back(Opt(pt.peak_bytes()));
    if (show_padded_peak) row.push_back(Opt(pt.live_peak_padded_bytes()));
    for (const std::string* t : {&pt.matched_by(), &pt.fingerprint(), &pt.entry_signature(), &pt.entry_sharding()}) {
      row.push_back(Txt(*t));
    }
    p.AddRow(row);
  }
  p.Finish();
  return kExitOk;
}

int CmdSpills(QueryClient& b, OutputFormat format, const std::string& kernel, const std::string& run, int64_t limit) {
  v1::SpillRatesRequest req;
  req.set_kernel_pattern(kernel);
  req.set_run_name(run);
  req.set_limit(static_cast<int32_t>(limit));
  v1::SpillRatesResponse resp;
  grpc::Status st = b.Call(&QueryClient::Stub::SpillRates, req, &resp);
  if (!st.ok()) return b.Fail(st);
  ResultPrinter p(format, stdout);
  p.SetColumns({"run", "module", "kernel", "vmem_spills", "vmem_fills", "smem_spills", "smem_fills", "bundles",
                "vmem_spill_rate", "vmem_fill_rate"});
  for (const auto& r : resp.rates()) {
    p.AddRow({Txt(r.run_name()), Txt(r.module_name()), Txt(r.kernel()), Num(r.vmem_spills()), Num(r.vmem_fills()),
              Num(r.smem_spills()), Num(r.smem_fills()), Num(r.bundles()), Real(r.vmem_spill_rate()),
              Real(r.vmem_fill_rate())});
  }
  p.Finish();
  return kExitOk;
}

namespace {

// "24608 bytes at time 4", or what is missing.
std::string PeakText(int64_t bytes, int64_t time, const char* missing) {
  if (bytes < 0) return std::string("unknown (") + missing + ")";
  return std::to_string(bytes) + " bytes" + (time >= 0 ? " at time " + std::to_string(time) : "");
}

// Which module answered (a run may hold several of that name) and both of its peaks, on stderr: stdout stays
// the result set. A module without memory figures says so instead of printing placeholders.
void PrintTopHeader(const v1::TopBuffersResponse& r) {
  std::string which = "module " + ingest::EscapeControlCharacters(r.module()) + " (";
  which += r.stage().empty() ? "no stage" : "stage " + ingest::EscapeControlCharacters(r.stage());
  which += r.xla_module_id() >= 0 ? ", xla id " + std::to_string(r.xla_module_id()) : ", no xla id";
  if (!r.folder().empty()) which += ", folder " + ingest::EscapeControlCharacters(r.folder());
  which += ")";
  if (!r.has_memory()) {
    std::fprintf(stderr, "%s: no buffer assignment or memory report is stored for it (only its HLO text), so it "
                 "has no peak and no buffers\n", which.c_str());
    return;
  }
  std::fprintf(stderr, "%s: XLA's printed peak %s; padded live peak %s\n", which.c_str(),
               PeakText(r.peak_bytes(), r.peak_time(), "no peak list").c_str(),
               PeakText(r.live_peak_padded_bytes(), r.live_peak_padded_time(), "no live ranges").c_str());
  const bool padded = r.at() == v1::PEAK_LIST_PADDED;
  if (r.buffers_size() == 0) {
    std::fprintf(stderr, "no buffers listed: %s\n",
                 padded ? "the module has no live ranges" : "the dump has no `Live ranges at … (peak)` list");
  } else {
    std::fprintf(stderr, "buffers: %s at time %lld\n",
                 padded ? "live at the padded live peak (from live ranges, one per allocation slice)"
                        : "XLA's printed peak list",
                 static_cast<long long>(r.list_time()));
  }
}

}  // namespace

int CmdTop(QueryClient& b, OutputFormat format, const TopArgs& a) {
  if (a.at != "xla" && a.at != "padded") {
    std::fprintf(stderr, "xladb: --at is xla (XLA's printed peak list) or padded (live at the padded peak)\n");
    return kExitUsage;
  }
  v1::TopBuffersRequest req;
  req.set_run_name(a.run);
  req.set_module(a.module);
  req.set_n(static_cast<int32_t>(a.n));
  req.set_stage(a.stage);
  if (a.folder) req.set_folder(*a.folder);
  if (a.xla_module_id) req.set_xla_module_id(*a.xla_module_id);
  req.set_at(a.at == "padded" ? v1::PEAK_LIST_PADDED : v1::PEAK_LIST_XLA);
  v1::TopBuffersResponse resp;
  grpc::Status st = b.Call(&QueryClient::Stub::TopBuffers, req, &resp);
  if (!st.ok()) return b.Fail(st);
  if (!resp.has_memory()) {  // no buffer assignment: its OOM report, if it has one
    if (int oom = TopFromOomReport(b, format, a.run, resp); oom >= 0) return oom;
  }
  PrintTopHeader(resp);
  PrintNotes(resp.notes());
  ResultPrinter p(format, stdout);
  p.SetColumns({"buffer", "logical_bytes", "size_bytes", "allocation", "shape", "opcode", "live", "op_name",
                "source"});
  for (const auto& b : resp.buffers()) {
    std::string live = b.live_start() < 0 ? "" : std::to_string(b.live_start()) + "-" + std::to_string(b.live_end());
    std::string source = b.source_file().empty() ? "" : b.source_file() + ":" + std::to_string(b.source_line());
    p.AddRow({Txt(b.instruction() + b.shape_index()), Opt(b.logical_bytes()), Opt(b.size_bytes()),
              Opt(b.allocation_index()), Txt(b.shape()), Txt(b.opcode()), Txt(live), Txt(b.op_name()), Txt(source)});
  }
  p.Finish();
  return kExitOk;
}

int CmdDiff(QueryClient& b, OutputFormat format, const DiffArgs& a) {
  v1::DiffRunsRequest req;
  req.set_run_a(a.run_a);
  req.set_run_b(a.run_b);
  req.set_module(a.module);
  req.set_include_unchanged(a.include_unchanged);
  req.set_buffer_level(a.buffers);
  req.set_max_buffers(static_cast<int32_t>(a.max_buffers));
  v1::DiffRunsResponse resp;
  grpc::Status st = b.Call(&QueryClient::Stub::DiffRuns, req, &resp);
  if (!st.ok()) return b.Fail(st);
  ResultPrinter p(format, stdout);
  p.SetColumns({"change", "module", "xla_ids", "stage", "buffer", "matched_by", "peak_a", "peak_b", "delta",
                "total_a", "total_b", "size_a", "size_b", "source", "signature_a", "signature_b"});
  const Cell none{"", true, false};
  for (const auto& m : resp.modules()) {
    Cell delta = (m.peak_a() >= 0 && m.peak_b() >= 0) ? Signed(m.peak_b() - m.peak_a()) : none;
    std::string ids = (m.xla_module_id_a() >= 0 ? std::to_string(m.xla_module_id_a()) : "-") + "→" +
                      (m.xla_module_id_b() >= 0 ? std::to_string(m.xla_module_id_b()) : "-");
    std::string module = m.folder().empty() ? m.module_name() : m.folder() + "/" + m.module_name();
    p.AddRow({Txt(v1::ModuleChange::Change_Name(m.change())), Txt(module), Txt(ids), Txt(m.stage()), Txt(""),
              Txt(m.matched_by()), Opt(m.peak_a()), Opt(m.peak_b()), delta, Opt(m.total_a()), Opt(m.total_b()), none,
              none, Txt(""), Txt(m.entry_signature_a()), Txt(m.xla_module_id_b() >= 0 ? m.entry_signature() : "")});
    for (const auto& bc : m.buffers()) {
      // A renamed buffer shows both names.
      std::string name = !bc.instruction_b().empty() ? bc.instruction_b() : bc.instruction_a();
      if (!bc.instruction_a().empty() && !bc.instruction_b().empty() && bc.instruction_a() != bc.instruction_b()) {
        name = bc.instruction_a() + " → " + bc.instruction_b();
      }
      p.AddRow({Txt("  " + v1::BufferChange::Change_Name(bc.change())), Txt(module), Txt(""), Txt(m.stage()),
                Txt(name + bc.shape_index()), Txt(bc.matched_by()), none, none, Signed(bc.delta()), none, none,
                Opt(bc.size_a()), Opt(bc.size_b()), Txt(bc.source()), Txt(""), Txt("")});
    }
    if (m.buffer_changes() > m.buffers_size()) {
      std::fprintf(stderr, "%s: %lld buffer changes, %d shown (--buffers N)\n",
                   ingest::EscapeControlCharacters(module).c_str(), static_cast<long long>(m.buffer_changes()),
                   m.buffers_size());
    }
  }
  p.Finish();
  int64_t reshaped = 0;
  for (const auto& m : resp.modules()) reshaped += m.matched_by() == "name";
  std::fprintf(stderr,
               "%lld changed (%lld of them reshaped: matched by name), %lld added, %lld removed, %lld unchanged\n",
               static_cast<long long>(resp.changed()), static_cast<long long>(reshaped),
               static_cast<long long>(resp.added()), static_cast<long long>(resp.removed()),
               static_cast<long long>(resp.unchanged()));
  // The roll-up by jit name, for people: the machine formats have it from the DiffRuns RPC (by_name).
  if (resp.by_name_size() > 0) std::fprintf(stderr, "by jit name:\n");
  for (const auto& n : resp.by_name()) {
    const std::string line = RollupText(n, n.folder().empty() ? n.module() : n.folder() + "/" + n.module());
    std::fprintf(stderr, "  %s (%s)\n", ingest::EscapeControlCharacters(line).c_str(),
                 ingest::EscapeControlCharacters(n.stage()).c_str());
  }
  return kExitOk;
}


int CmdRetraces(QueryClient& b, OutputFormat format, const std::string& run, int64_t min_compiles) {
  v1::ListRetracesRequest req;
  req.set_run_name(run);
  req.set_min_compiles(min_compiles);
  v1::ListRetracesResponse resp;
  grpc::Status st = b.Call(&QueryClient::Stub::ListRetraces, req, &resp);
  if (!st.ok()) return b.Fail(st);
  ResultPrinter p(format, stdout);
  p.SetColumns({"module", "stage", "folder", "compiles", "signatures", "fingerprints", "xla_ids"});
  for (const auto& g : resp.groups()) {
    std::string ids;
    for (int64_t id : g.xla_module_ids()) ids += (ids.empty() ? "" : ",") + std::to_string(id);
    p.AddRow({Txt(g.module()), Txt(g.stage()), Txt(g.folder()), Num(g.compiles()), Num(g.distinct_signatures()),
              Num(g.distinct_fingerprints()), Txt(ids)});
  }
  p.Finish();
  return kExitOk;
}

namespace {

// Writes `text` to a temporary file beside `path`, then renames it over `path`: a reader never sees half a
// page. False (with a message) when it cannot.
bool WriteFileWhole(const std::string& path, const std::string& text) {
  const std::string temp = path + ".tmp-xladb";
  std::ofstream out(temp, std::ios::binary | std::ios::trunc);
  out << text;
  out.close();
  if (!out || std::rename(temp.c_str(), path.c_str()) != 0) {
    std::remove(temp.c_str());
    std::fprintf(stderr, "xladb: cannot write %s\n", path.c_str());
    return false;
  }
  return true;
}

}  // namespace

int CmdReport(QueryClient& b, const ReportArgs& a) {
  if (a.output.empty()) {
    std::fprintf(stderr, "xladb: report needs -o FILE.html\n");
    return kExitUsage;
  }
  if (a.home == !a.run.empty()) {
    std::fprintf(stderr, "xladb: report needs a RUN, or --home for the front page (not both)\n");
    return kExitUsage;
  }
  if (!a.home_label.empty() && !a.home) {
    std::fprintf(stderr, "xladb: --home-label is for the front page (--home)\n");
    return kExitUsage;
  }
  v1::ReportRequest req;
  req.set_run_name(a.run);
  req.set_home(a.home);
  req.set_home_label(a.home_label);
  req.set_module(a.module);
  req.set_stage(a.stage);
  if (a.xla_module_id >= 0) req.set_xla_module_id(a.xla_module_id);
  if (a.has_folder) req.set_folder(a.folder);
  req.set_baseline(a.baseline);
  if (!AddBudgetFlags(a.budgets, req.mutable_budgets())) return kExitUsage;
  if (!a.config.empty()) {
    v1::CheckRunRequest gate;
    if (Status st = LoadGateConfig(a.config, &gate); !st.ok()) {
      std::fprintf(stderr, "xladb: %s\n", st.message().c_str());
      return kExitUsage;
    }
    for (const auto& budget : gate.budgets()) *req.add_budgets() = budget;
    req.set_warn_percent(gate.warn_percent());
  }
  if (a.warn_percent) req.set_warn_percent(*a.warn_percent);
  std::string html;
  std::vector<std::string> notes;
  grpc::Status st = b.Report(req, &html, &notes);
  for (const std::string& note : notes) std::fprintf(stderr, "%s\n", ingest::EscapeControlCharacters(note).c_str());
  if (!st.ok()) return FailedCall(b, st, kExitFailure);
  if (!WriteFileWhole(a.output, html)) return kExitFailure;
  std::printf("%s\n", a.output.c_str());
  std::fprintf(stderr, "xladb report: wrote %zu bytes\n", html.size());
  return kExitOk;
}

int CmdCheck(QueryClient& b, const CheckArgs& a) {
  auto format = ParseCheckReportFormat(a.format);
  if (!format) {
    std::fprintf(stderr, "xladb: --format for check is table, json, markdown or junit\n");
    return kExitUsage;
  }
  if (std::string problem = ReportUrlProblem(a.report_url); !a.report_url.empty() && !problem.empty()) {
    std::fprintf(stderr, "xladb: --report-url %s\n", problem.c_str());
    return kExitUsage;
  }
  v1::CheckRunRequest req;
  if (!a.config.empty()) {
    Status st = LoadGateConfig(a.config, &req);
    if (!st.ok()) {
      std::fprintf(stderr, "xladb: %s\n", st.message().c_str());
      return kExitUsage;
    }
  }
  req.set_run_name(a.run);
  req.set_baseline(a.baseline);
  if (!a.metrics.empty()) {
    req.clear_metrics();
    if (!AddMetricFlags(a.metrics, req.mutable_metrics())) return kExitUsage;
  }
  if (a.max_growth_bytes) req.mutable_limit()->set_max_growth_bytes(*a.max_growth_bytes);
  if (a.max_growth_percent) req.mutable_limit()->set_max_growth_percent(*a.max_growth_percent);
  for (const auto& g : a.ignore) req.add_ignore(g);
  if (a.fail_on_retrace_growth) req.set_fail_on_retrace_growth(true);
  if (!a.on_added.empty()) req.set_on_added(a.on_added);
  if (!a.on_removed.empty()) req.set_on_removed(a.on_removed);
  if (!a.on_reshaped.empty()) req.set_on_reshaped(a.on_reshaped);
  req.set_by_name_all(a.by_name == "all");
  req.set_max_attribution(static_cast<int32_t>(a.max_attribution));
  if (!a.budgets.empty()) {
    // The flags' budgets come first: the first budget that matches a module applies.
    google::protobuf::RepeatedPtrField<v1::MemoryBudget> configured = std::move(*req.mutable_budgets());
    req.clear_budgets();
    if (!AddBudgetFlags(a.budgets, req.mutable_budgets())) return kExitUsage;
    for (auto& budget : configured) *req.add_budgets() = std::move(budget);
  }
  if (a.warn_percent) req.set_warn_percent(*a.warn_percent);
  if (req.baseline().empty() && req.budgets().empty()) {
    std::fprintf(stderr, "xladb: check needs --baseline, or budgets (--budget, or [[budget]] in --config)\n");
    return kExitUsage;
  }
  v1::CheckRunResponse resp;
  grpc::Status st = b.Call(&QueryClient::Stub::CheckRun, req, &resp);
  if (!st.ok()) return FailedCall(b, st, kExitToolFailed, /*not_found_is_usage=*/true);
  for (const std::string& warning : resp.budget_warnings()) {
    std::fprintf(stderr, "xladb check: warning: %s\n", ingest::EscapeControlCharacters(warning).c_str());
  }
  std::string report = RenderCheckReport(resp, *format);
  if (*format == CheckReportFormat::kMarkdown && !a.report_url.empty()) {
    const size_t line_end = report.find('\n');
    report.insert(line_end == std::string::npos ? report.size() : line_end + 1,
                  "\n[The memory report, with charts](" + a.report_url + ")\n");
  }
  if (a.output.empty()) {
    std::fwrite(report.data(), 1, report.size(), stdout);
  } else {
    std::ofstream out(a.output, std::ios::binary | std::ios::trunc);
    out << report;
    out.close();
    if (!out) {
      std::fprintf(stderr, "xladb: cannot write the report to %s\n", a.output.c_str());
      return kExitToolFailed;
    }
  }
  // The verdict on stderr too, unless the table on the terminal already starts with it.
  if (*format != CheckReportFormat::kTable || !a.output.empty()) {
    std::fprintf(stderr, "xladb check: %s: %s\n", v1::CheckRunResponse::Verdict_Name(resp.verdict()).c_str(),
                 ingest::EscapeControlCharacters(resp.reason()).c_str());
  }
  switch (resp.verdict()) {
    case v1::CheckRunResponse::PASS: return kExitOk;
    case v1::CheckRunResponse::FAIL: return kExitFailure;
    case v1::CheckRunResponse::INCONCLUSIVE: return kExitInconclusive;
    default: return kExitToolFailed;
  }
}

}  // namespace xladb::cli
