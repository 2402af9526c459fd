#include "cli/remote_commands.h"

#include <grpcpp/grpcpp.h>

#include <chrono>
#include <cstdio>
#include <ctime>
#include <fstream>
#include <map>
#include <memory>
#include <sstream>
#include <string>

#include "cli/call_watchdog.h"
#include "ingest/dump_ingester.h"
#include "proto/wire_text.h"
#include "xladb/v1/xladb.grpc.pb.h"

namespace xladb::cli {
namespace {

namespace v1 = xladb::v1;

}  // namespace

std::shared_ptr<grpc::Channel> Connect(const ClientOptions& o) {
  grpc::ChannelArguments args;
  args.SetMaxReceiveMessageSize(64 << 20);  // the server sends ~1 MiB messages; one large row may be more
  if (o.tls_ca.empty()) return grpc::CreateCustomChannel(o.addr, grpc::InsecureChannelCredentials(), args);
  std::ifstream in(o.tls_ca);
  std::stringstream ss;
  ss << in.rdbuf();
  grpc::SslCredentialsOptions ssl;
  ssl.pem_root_certs = ss.str();
  return grpc::CreateCustomChannel(o.addr, grpc::SslCredentials(ssl), args);
}

void Prepare(const ClientOptions& o, grpc::ClientContext* ctx, bool deadline) {
  if (!o.token.empty()) ctx->AddMetadata("authorization", "Bearer " + o.token);
  if (deadline) ctx->set_deadline(std::chrono::system_clock::now() + std::chrono::seconds(o.timeout_s));
}

int Fail(const ClientOptions& o, const grpc::Status& st) {
  switch (st.error_code()) {
    case grpc::StatusCode::UNAVAILABLE:
      std::fprintf(stderr, "xladb: cannot reach xladbd at %s: %s\n  is it running? start it with: xladbd --db FILE "
                           "--listen %s (or pass --addr)\n",
                   o.addr.c_str(), st.error_message().c_str(), o.addr.c_str());
      break;
    case grpc::StatusCode::DEADLINE_EXCEEDED:
      std::fprintf(stderr, "xladb: xladbd at %s did not answer in %lld s (--timeout)\n", o.addr.c_str(),
                   static_cast<long long>(o.timeout_s));
      break;
    case grpc::StatusCode::PERMISSION_DENIED:
      std::fprintf(stderr, "xladb: refused: %s\n", st.error_message().c_str());
      if (st.error_message().find("token") != std::string::npos) {
        std::fprintf(stderr, "  (a server started with --token-file needs --token-file here too)\n");
      }
      break;
    default:
      std::fprintf(stderr, "xladb: %s\n", st.error_message().c_str());
  }
  return kExitFailure;
}

namespace {

Cell Num(int64_t v) { return Cell{std::to_string(v), false, true}; }
Cell Opt(int64_t v) { return v < 0 ? Cell{"", true, false} : Num(v); }
Cell Txt(const std::string& s) { return Cell{s, false, false}; }
Cell Real(double v, const char* fmt = "%.6g") {
  char buf[32];
  std::snprintf(buf, sizeof buf, fmt, v);
  return Cell{buf, false, true};
}
Cell Time(int64_t us) {
  std::time_t t = static_cast<std::time_t>(us / 1000000);
  std::tm tm{};
  gmtime_r(&t, &tm);
  char buf[32];
  std::strftime(buf, sizeof buf, "%Y-%m-%dT%H:%M:%SZ", &tm);
  return Txt(buf);
}

void AddLabels(const LabelList& labels, google::protobuf::RepeatedPtrField<v1::Label>* out) {
  for (const auto& [k, v] : labels) {
    auto* l = out->Add();
    l->set_key(k);
    l->set_value(v);
  }
}

std::string JoinLabels(const google::protobuf::RepeatedPtrField<v1::Label>& labels) {
  std::string s;
  for (const auto& l : labels) {
    if (!s.empty()) s += ",";
    s += l.key() + "=" + l.value();
  }
  return s;
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

int CmdRuns(const ClientOptions& o, const RunsArgs& a) {
  bool ok = true;
  v1::ListRunsRequest req;
  AddLabels(a.labels, req.mutable_labels());
  req.set_since_us(TimeOrDie(a.since, &ok));
  req.set_until_us(TimeOrDie(a.until, &ok));
  if (!ok) return kExitUsage;
  req.set_name_pattern(a.name_pattern);
  auto stub = v1::QueryService::NewStub(Connect(o));
  ResultPrinter p(o.format, stdout);
  p.SetColumns({"run", "run_time", "modules", "files", "errors", "labels", "source"});
  int64_t shown = 0;
  do {
    req.set_page_size(static_cast<int32_t>(std::min<int64_t>(1000, std::max<int64_t>(1, a.limit - shown))));
    grpc::ClientContext ctx;
    Prepare(o, &ctx);
    v1::ListRunsResponse resp;
    grpc::Status st = stub->ListRuns(&ctx, req, &resp);
    if (!st.ok()) return Fail(o, st);
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

int CmdModules(const ClientOptions& o, const std::string& run, const std::string& pattern) {
  v1::ListModulesRequest req;
  req.set_run_name(run);
  req.set_name_pattern(pattern);
  grpc::ClientContext ctx;
  Prepare(o, &ctx);
  v1::ListModulesResponse resp;
  grpc::Status st = v1::QueryService::NewStub(Connect(o))->ListModules(&ctx, req, &resp);
  if (!st.ok()) return Fail(o, st);
  ResultPrinter p(o.format, stdout);
  p.SetColumns({"module", "xla_id", "stage", "backend", "peak_bytes", "total_bytes", "temp_bytes", "allocations",
                "values", "instructions", "folder"});
  for (const auto& m : resp.modules()) {
    p.AddRow({Txt(m.name()), Opt(m.xla_module_id()), Txt(m.stage()), Txt(m.backend()), Opt(m.peak_bytes()),
              Opt(m.total_bytes()), Opt(m.temp_bytes()), Num(m.allocation_count()), Num(m.value_count()),
              Num(m.instruction_count()), Txt(m.folder())});
  }
  p.Finish();
  return kExitOk;
}

int CmdTrend(const ClientOptions& o, const TrendArgs& a) {
  v1::PeakMemoryTrendRequest req;
  req.set_module(a.module);
  if (a.metric == "peak") req.set_metric(v1::PEAK_BYTES);
  else if (a.metric == "total") req.set_metric(v1::TOTAL_BYTES);
  else if (a.metric == "temp") req.set_metric(v1::TEMP_BYTES);
  else {
    std::fprintf(stderr, "xladb: --metric must be peak, total or temp\n");
    return kExitUsage;
  }
  req.set_last_n(static_cast<int32_t>(a.last_n));
  AddLabels(a.labels, req.mutable_labels());
  req.set_stage(a.stage);
  grpc::ClientContext ctx;
  Prepare(o, &ctx);
  v1::PeakMemoryTrendResponse resp;
  grpc::Status st = v1::QueryService::NewStub(Connect(o))->PeakMemoryTrend(&ctx, req, &resp);
  if (!st.ok()) return Fail(o, st);
  ResultPrinter p(o.format, stdout);
  p.SetColumns({"run", "run_time", "module", "xla_id", "stage", a.metric + "_bytes", "change", "fingerprint"});
  std::map<std::string, int64_t> previous;  // per module and stage
  for (const auto& pt : resp.points()) {
    std::string key = pt.module_name() + "\x01" + pt.stage();
    auto it = previous.find(key);
    Cell change = it == previous.end() ? Cell{"", true, false} : Num(pt.value() - it->second);
    if (change.is_number && pt.value() - it->second > 0) change.text = "+" + change.text;
    previous[key] = pt.value();
    p.AddRow({Txt(pt.run_name()), Time(pt.run_time_us()), Txt(pt.module_name()), Opt(pt.xla_module_id()),
              Txt(pt.stage()), Num(pt.value()), change, Txt(pt.fingerprint())});
  }
  p.Finish();
  if (resp.points_size() == 0) std::fprintf(stderr, "xladb: no module matches '%s'\n", a.module.c_str());
  return kExitOk;
}

int CmdSpills(const ClientOptions& o, const std::string& kernel, const std::string& run, int64_t limit) {
  v1::SpillRatesRequest req;
  req.set_kernel_pattern(kernel);
  req.set_run_name(run);
  req.set_limit(static_cast<int32_t>(limit));
  grpc::ClientContext ctx;
  Prepare(o, &ctx);
  v1::SpillRatesResponse resp;
  grpc::Status st = v1::QueryService::NewStub(Connect(o))->SpillRates(&ctx, req, &resp);
  if (!st.ok()) return Fail(o, st);
  ResultPrinter p(o.format, stdout);
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

int CmdTop(const ClientOptions& o, const std::string& run, const std::string& module, int64_t n,
           const std::string& stage, const std::optional<std::string>& folder) {
  v1::TopBuffersRequest req;
  req.set_run_name(run);
  req.set_module(module);
  req.set_n(static_cast<int32_t>(n));
  req.set_stage(stage);
  if (folder) req.set_folder(*folder);
  grpc::ClientContext ctx;
  Prepare(o, &ctx);
  v1::TopBuffersResponse resp;
  grpc::Status st = v1::QueryService::NewStub(Connect(o))->TopBuffers(&ctx, req, &resp);
  if (!st.ok()) return Fail(o, st);
  // Which module answered (a run may hold several of that name), on stderr: stdout stays the result set.
  std::fprintf(stderr, "module %s (stage %s, xla id %lld%s): peak %lld bytes at time %lld\n", resp.module().c_str(),
               resp.stage().empty() ? "?" : resp.stage().c_str(), static_cast<long long>(resp.xla_module_id()),
               resp.folder().empty() ? "" : (", folder " + resp.folder()).c_str(),
               static_cast<long long>(resp.peak_bytes()), static_cast<long long>(resp.peak_time()));
  ResultPrinter p(o.format, stdout);
  p.SetColumns({"buffer", "logical_bytes", "size_bytes", "allocation", "shape", "opcode", "live", "op_name",
                "source"});
  for (const auto& b : resp.buffers()) {
    std::string live = b.live_start() < 0 ? "" : std::to_string(b.live_start()) + "-" + std::to_string(b.live_end());
    std::string source = b.source_file().empty() ? "" : b.source_file() + ":" + std::to_string(b.source_line());
    p.AddRow({Txt(b.instruction() + b.shape_index()), Num(b.logical_bytes()), Opt(b.size_bytes()),
              Opt(b.allocation_index()), Txt(b.shape()), Txt(b.opcode()), Txt(live), Txt(b.op_name()), Txt(source)});
  }
  p.Finish();
  return kExitOk;
}

int CmdDiff(const ClientOptions& o, const DiffArgs& a) {
  v1::DiffRunsRequest req;
  req.set_run_a(a.run_a);
  req.set_run_b(a.run_b);
  req.set_module(a.module);
  req.set_include_unchanged(a.include_unchanged);
  req.set_buffer_level(a.buffers);
  req.set_max_buffers(static_cast<int32_t>(a.max_buffers));
  grpc::ClientContext ctx;
  Prepare(o, &ctx);
  v1::DiffRunsResponse resp;
  grpc::Status st = v1::QueryService::NewStub(Connect(o))->DiffRuns(&ctx, req, &resp);
  if (!st.ok()) return Fail(o, st);
  ResultPrinter p(o.format, stdout);
  p.SetColumns({"change", "module", "stage", "buffer", "peak_a", "peak_b", "delta", "size_a", "size_b", "source"});
  for (const auto& m : resp.modules()) {
    Cell delta = (m.peak_a() >= 0 && m.peak_b() >= 0) ? Num(m.peak_b() - m.peak_a()) : Cell{"", true, false};
    p.AddRow({Txt(v1::ModuleChange::Change_Name(m.change())), Txt(m.module_name()), Txt(m.stage()), Txt(""),
              Opt(m.peak_a()), Opt(m.peak_b()), delta, Cell{"", true, false}, Cell{"", true, false}, Txt("")});
    for (const auto& b : m.buffers()) {
      std::string name = !b.instruction_b().empty() ? b.instruction_b() : b.instruction_a();
      int64_t d = (b.size_a() >= 0 ? -b.size_a() : 0) + (b.size_b() >= 0 ? b.size_b() : 0);
      p.AddRow({Txt("  " + v1::BufferChange::Change_Name(b.change())), Txt(m.module_name()), Txt(m.stage()),
                Txt(name + b.shape_index()), Cell{"", true, false}, Cell{"", true, false}, Num(d), Opt(b.size_a()),
                Opt(b.size_b()), Txt(b.source())});
    }
  }
  p.Finish();
  std::fprintf(stderr, "%lld changed, %lld added, %lld removed, %lld unchanged\n",
               static_cast<long long>(resp.changed()), static_cast<long long>(resp.added()),
               static_cast<long long>(resp.removed()), static_cast<long long>(resp.unchanged()));
  return kExitOk;
}

int CmdRemoteSql(const ClientOptions& o, const std::string& sql, int64_t max_rows) {
  v1::QueryRequest req;
  req.set_sql(sql);
  req.set_max_rows(max_rows);
  grpc::ClientContext ctx;
  Prepare(o, &ctx);
  auto reader = v1::QueryService::NewStub(Connect(o))->Query(&ctx, req);
  v1::QueryResponse msg;
  ResultPrinter p(o.format, stdout);
  bool columns_set = false, truncated = false, last_seen = false;
  std::vector<Cell> cells;
  while (reader->Read(&msg)) {
    if (!columns_set) {
      std::vector<std::string> names;
      for (const auto& c : msg.columns()) names.push_back(c.name());
      p.SetColumns(std::move(names));
      columns_set = true;
    }
    for (const auto& row : msg.rows()) {
      cells.resize(static_cast<size_t>(row.values_size()));
      for (int i = 0; i < row.values_size(); ++i) {
        const auto& v = row.values(i);
        Cell& c = cells[static_cast<size_t>(i)];
        c.is_null = v.value_case() == v1::Value::VALUE_NOT_SET;
        c.is_number = v.value_case() == v1::Value::kIntValue || v.value_case() == v1::Value::kRealValue;
        switch (v.value_case()) {
          case v1::Value::kIntValue: c.text = std::to_string(v.int_value()); break;
          case v1::Value::kRealValue: {
            char buf[32];
            std::snprintf(buf, sizeof buf, "%.17g", v.real_value());
            c.text = buf;
            break;
          }
          case v1::Value::kTextValue: c.text = v.text_value(); break;
          case v1::Value::kBytesValue: c.text = wire::EscapeInvalidUtf8(v.bytes_value()); break;
          case v1::Value::kTextBytesValue: c.text = wire::EscapeInvalidUtf8(v.text_bytes_value()); break;
          default: c.text.clear();
        }
      }
      p.AddRow(cells);
    }
    truncated = truncated || msg.truncated();
    last_seen = last_seen || msg.last();
  }
  // A stream that ends without its last message either failed on the server (Finish brings its status at
  // once) or was cut here (a message this client could not read) while the server goes on sending: then
  // Finish would wait for it. Cancel the call if Finish has not returned shortly.
  bool cancelled_here = false;
  grpc::Status st;
  if (last_seen) {
    st = reader->Finish();
  } else {
    InactivityWatchdog watchdog(&ctx, std::chrono::seconds(2));
    st = reader->Finish();
    cancelled_here = watchdog.fired();
  }
  if (cancelled_here) {
    std::fprintf(stderr, "xladb: the answer from xladbd at %s was cut short after %lld rows (a message could "
                         "not be read); nothing more was printed\n",
                 o.addr.c_str(), static_cast<long long>(p.rows()));
    return kExitFailure;
  }
  if (!st.ok()) return Fail(o, st);
  if (!last_seen) {
    std::fprintf(stderr, "xladb: the answer from xladbd at %s ended without its last message after %lld rows\n",
                 o.addr.c_str(), static_cast<long long>(p.rows()));
    return kExitFailure;
  }
  if (!columns_set) p.SetColumns({});
  p.Finish();
  if (truncated) std::fprintf(stderr, "xladb: result truncated at %lld rows (raise --max-rows)\n",
                              static_cast<long long>(p.rows()));
  return kExitOk;
}

}  // namespace xladb::cli
