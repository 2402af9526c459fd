// xladb_load: a bounded load generator for xladbd (loopback only). N client threads mix the query RPCs
// (ListRuns, PeakMemoryTrend, SpillRates, TopBuffers, DiffRuns, Query) for a fixed time and at most a fixed
// number of requests, optionally while uploads keep the writer busy, and report per-RPC counts, errors,
// p50/p99 latency and throughput. Exit code 1 when any call failed (and names the first errors), so a test
// can assert "zero errors, no 'database is locked' reaching a client".
//
//   xladb_load --addr 127.0.0.1:PORT --clients 16 --seconds 10 [--max-requests 100000]
//              [--upload-dir DIR --upload-every-ms 200] [--run RUN --module M] [--format table|json]
#include <CLI/CLI.hpp>
#include <grpcpp/grpcpp.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <map>
#include <mutex>
#include <random>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "xladb/v1/xladb.grpc.pb.h"

namespace {

namespace v1 = xladb::v1;
using Clock = std::chrono::steady_clock;

struct Stats {
  std::vector<double> latencies_ms;
  int64_t errors = 0;
  std::vector<std::string> first_errors;
};

class Recorder {
 public:
  void Record(const std::string& rpc, double ms, const grpc::Status& st) {
    std::lock_guard<std::mutex> lock(mu_);
    Stats& s = stats_[rpc];
    s.latencies_ms.push_back(ms);
    if (!st.ok()) {
      ++s.errors;
      if (s.first_errors.size() < 3) s.first_errors.push_back(st.error_message());
    }
  }
  std::map<std::string, Stats> Take() {
    std::lock_guard<std::mutex> lock(mu_);
    return stats_;
  }

 private:
  std::mutex mu_;
  std::map<std::string, Stats> stats_;
};

double Percentile(std::vector<double>& v, double p) {
  if (v.empty()) return 0;
  std::sort(v.begin(), v.end());
  size_t i = static_cast<size_t>(p * static_cast<double>(v.size() - 1) + 0.5);
  return v[std::min(i, v.size() - 1)];
}

// One upload of every file under `dir` as run `run_name`.
grpc::Status UploadFolder(v1::IngestService::Stub* stub, const std::string& dir, const std::string& run_name) {
  grpc::ClientContext ctx;
  v1::IngestJob job;
  auto writer = stub->Upload(&ctx, &job);
  v1::UploadChunk header;
  header.mutable_header()->set_run_name(run_name);
  header.mutable_header()->set_wait(true);
  bool ok = writer->Write(header);
  int64_t files = 0, bytes = 0;
  for (const auto& e : std::filesystem::recursive_directory_iterator(dir)) {
    if (!ok) break;
    if (!e.is_regular_file()) continue;
    std::ifstream in(e.path(), std::ios::binary);
    std::stringstream ss;
    ss << in.rdbuf();
    v1::UploadChunk chunk;
    chunk.mutable_file()->set_path(std::filesystem::relative(e.path(), dir).generic_string());
    chunk.mutable_file()->set_data(ss.str());
    ++files;
    bytes += static_cast<int64_t>(chunk.file().data().size());
    ok = writer->Write(chunk);
  }
  v1::UploadChunk trailer;  // an upload is stored only when its trailer agrees with what arrived
  trailer.mutable_trailer()->set_files(files);
  trailer.mutable_trailer()->set_bytes(bytes);
  if (ok && writer->Write(trailer)) writer->WritesDone();
  return writer->Finish();
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{"xladb_load: bounded gRPC load against xladbd (loopback)"};
  std::string addr = "127.0.0.1:50051", upload_dir, run, module, format = "table";
  int clients = 8;
  double seconds = 5;
  int64_t max_requests = 1000000;
  int upload_every_ms = 200;
  app.add_option("--addr", addr, "xladbd address (must be loopback)");
  app.add_option("--clients", clients, "Concurrent client threads")->check(CLI::Range(1, 256));
  app.add_option("--seconds", seconds, "How long to run")->check(CLI::Range(0.1, 600.0));
  app.add_option("--max-requests", max_requests, "Stop after this many requests in all");
  app.add_option("--upload-dir", upload_dir, "Keep uploading this folder (as new runs) during the load");
  app.add_option("--upload-every-ms", upload_every_ms, "Pause between uploads");
  app.add_option("--run", run, "Run for TopBuffers (default: the newest run)");
  app.add_option("--module", module, "Module for trends and TopBuffers (default: the first of the run)");
  app.add_option("--format", format, "table or json")->check(CLI::IsMember({"table", "json"}));
  CLI11_PARSE(app, argc, argv);
  if (addr.rfind("127.", 0) != 0 && addr.rfind("localhost:", 0) != 0 && addr.rfind("[::1]:", 0) != 0) {
    std::fprintf(stderr, "xladb_load: only loopback addresses are allowed (got %s)\n", addr.c_str());
    return 2;
  }

  auto channel_args = grpc::ChannelArguments();
  auto channel = grpc::CreateCustomChannel(addr, grpc::InsecureChannelCredentials(), channel_args);
  auto query = v1::QueryService::NewStub(channel);
  // Pick targets from what is stored.
  std::vector<std::string> runs;
  {
    grpc::ClientContext ctx;
    v1::ListRunsResponse resp;
    grpc::Status st = query->ListRuns(&ctx, v1::ListRunsRequest(), &resp);
    if (!st.ok()) {
      std::fprintf(stderr, "xladb_load: cannot reach %s: %s\n", addr.c_str(), st.error_message().c_str());
      return 1;
    }
    for (const auto& r : resp.runs()) runs.push_back(r.name());
  }
  if (runs.empty()) {
    std::fprintf(stderr, "xladb_load: the server holds no runs; ingest some first\n");
    return 1;
  }
  if (run.empty()) run = runs.front();
  if (module.empty()) {
    grpc::ClientContext ctx;
    v1::ListModulesRequest req;
    req.set_run_name(run);
    v1::ListModulesResponse resp;
    if (query->ListModules(&ctx, req, &resp).ok()) {
      for (const auto& m : resp.modules()) {
        if (m.has_buffer_assignment()) {
          module = m.name();
          break;
        }
      }
    }
  }

  Recorder recorder;
  std::atomic<int64_t> issued{0};
  std::atomic<bool> stop{false};
  auto deadline = Clock::now() + std::chrono::milliseconds(static_cast<int64_t>(seconds * 1000));

  std::vector<std::thread> threads;
  for (int c = 0; c < clients; ++c) {
    threads.emplace_back([&, c] {
      auto stub = v1::QueryService::NewStub(channel);
      std::mt19937 rng(static_cast<unsigned>(c + 1));
      while (!stop.load() && Clock::now() < deadline && issued.fetch_add(1) < max_requests) {
        grpc::ClientContext ctx;
        ctx.set_deadline(std::chrono::system_clock::now() + std::chrono::seconds(30));
        auto t0 = Clock::now();
        grpc::Status st;
        std::string rpc;
        switch (rng() % 6) {
          case 0: {
            rpc = "ListRuns";
            v1::ListRunsResponse r;
            st = stub->ListRuns(&ctx, v1::ListRunsRequest(), &r);
            break;
          }
          case 1: {
            rpc = "PeakMemoryTrend";
            v1::PeakMemoryTrendRequest q;
            q.set_module(module);
            v1::PeakMemoryTrendResponse r;
            st = stub->PeakMemoryTrend(&ctx, q, &r);
            break;
          }
          case 2: {
            rpc = "SpillRates";
            v1::SpillRatesRequest q;
            q.set_limit(20);
            v1::SpillRatesResponse r;
            st = stub->SpillRates(&ctx, q, &r);
            break;
          }
          case 3: {
            rpc = "TopBuffers";
            v1::TopBuffersRequest q;
            q.set_run_name(run);
            q.set_module(module);
            v1::TopBuffersResponse r;
            st = stub->TopBuffers(&ctx, q, &r);
            break;
          }
          case 4: {
            rpc = "DiffRuns";
            v1::DiffRunsRequest q;
            q.set_run_a(runs[rng() % runs.size()]);
            q.set_run_b(runs[rng() % runs.size()]);
            v1::DiffRunsResponse r;
            st = stub->DiffRuns(&ctx, q, &r);
            break;
          }
          default: {
            rpc = "Query";
            v1::QueryRequest q;
            q.set_sql("SELECT run_name, module_name, peak_bytes FROM module_memory ORDER BY peak_bytes DESC LIMIT 50");
            auto reader = stub->Query(&ctx, q);
            v1::QueryResponse r;
            while (reader->Read(&r)) {
            }
            st = reader->Finish();
            break;
          }
        }
        recorder.Record(rpc, std::chrono::duration<double, std::milli>(Clock::now() - t0).count(), st);
      }
    });
  }
  int64_t uploads = 0, upload_errors = 0;
  std::thread uploader;
  if (!upload_dir.empty()) {
    uploader = std::thread([&] {
      auto stub = v1::IngestService::NewStub(channel);
      while (!stop.load() && Clock::now() < deadline) {
        auto t0 = Clock::now();
        grpc::Status st = UploadFolder(stub.get(), upload_dir, "load-upload-" + std::to_string(uploads));
        recorder.Record("Upload", std::chrono::duration<double, std::milli>(Clock::now() - t0).count(), st);
        ++uploads;
        if (!st.ok()) ++upload_errors;
        std::this_thread::sleep_for(std::chrono::milliseconds(upload_every_ms));
      }
    });
  }
  auto start = Clock::now();
  for (auto& t : threads) t.join();
  stop = true;
  if (uploader.joinable()) uploader.join();
  double elapsed = std::chrono::duration<double>(Clock::now() - start).count();

  auto stats = recorder.Take();
  int64_t total = 0, errors = 0;
  bool json = format == "json";
  if (json) std::printf("{\"clients\": %d, \"seconds\": %.3f, \"rpcs\": [", clients, elapsed);
  else std::printf("%-16s %8s %7s %9s %9s %10s\n", "rpc", "calls", "errors", "p50_ms", "p99_ms", "calls/s");
  bool first = true;
  for (auto& [rpc, s] : stats) {
    int64_t n = static_cast<int64_t>(s.latencies_ms.size());
    total += n;
    errors += s.errors;
    double p50 = Percentile(s.latencies_ms, 0.50), p99 = Percentile(s.latencies_ms, 0.99);
    if (json) {
      std::printf("%s{\"rpc\": \"%s\", \"calls\": %lld, \"errors\": %lld, \"p50_ms\": %.3f, \"p99_ms\": %.3f, "
                  "\"calls_per_s\": %.1f}",
                  first ? "" : ", ", rpc.c_str(), static_cast<long long>(n), static_cast<long long>(s.errors), p50,
                  p99, static_cast<double>(n) / elapsed);
    } else {
      std::printf("%-16s %8lld %7lld %9.3f %9.3f %10.1f\n", rpc.c_str(), static_cast<long long>(n),
                  static_cast<long long>(s.errors), p50, p99, static_cast<double>(n) / elapsed);
    }
    first = false;
    for (const auto& e : s.first_errors) std::fprintf(stderr, "xladb_load: %s failed: %s\n", rpc.c_str(), e.c_str());
  }
  if (json) {
    std::printf("], \"calls\": %lld, \"errors\": %lld, \"calls_per_s\": %.1f}\n", static_cast<long long>(total),
                static_cast<long long>(errors), static_cast<double>(total) / elapsed);
  } else {
    std::printf("total %lld calls, %lld errors, %.1f calls/s over %.2f s with %d clients%s\n",
                static_cast<long long>(total), static_cast<long long>(errors), static_cast<double>(total) / elapsed,
                elapsed, clients, upload_dir.empty() ? "" : " (uploads running)");
  }
  return errors == 0 ? 0 : 1;
}
