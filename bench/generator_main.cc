// xladb_gen: writes realistic XLA dumps for benchmarks and tests (bench/dump_series.h says what and where).
//
//   xladb_gen buffer-assignment --bytes 1G --out FILE [--backend tpu|gpu] [--seed N] [--name MODULE]
//   xladb_gen folder --out DIR [--modules M] [--layers L] [--run R] [--backend tpu|gpu] [--seed N]
//   xladb_gen runs --runs N --modules M --out DIR [--layers L] [--start 2026-01-01] [--backend …] [--seed N]
//
// Sizes take K, M, G suffixes (binary: 1G = 1 GiB). Output is deterministic in the flags. Exit codes: 0 success,
// 1 failure (a write failed), 2 usage error. CLI11 lives in this one translation unit (it is slow to compile).
#include <CLI/CLI.hpp>

#include <chrono>
#include <cstdint>
#include <cstdio>
#include <ctime>
#include <optional>
#include <string>

#include "bench/deterministic_rng.h"
#include "bench/dump_series.h"

namespace xladb::bench {
namespace {

constexpr int kExitOk = 0;
constexpr int kExitFailure = 1;
constexpr int kExitUsage = 2;

// "1G", "100M", "512K", "12345" -> bytes (binary units).
std::optional<int64_t> ParseSize(const std::string& text) {
  if (text.empty()) return std::nullopt;
  size_t used = 0;
  double number = 0;
  try {
    number = std::stod(text, &used);
  } catch (...) {
    return std::nullopt;
  }
  std::string unit = text.substr(used);
  if (!unit.empty() && (unit.back() == 'B' || unit.back() == 'b')) unit.pop_back();
  if (!unit.empty() && (unit.back() == 'i')) unit.pop_back();
  double scale = 1;
  if (unit == "K" || unit == "k") scale = 1024.0;
  else if (unit == "M" || unit == "m") scale = 1024.0 * 1024;
  else if (unit == "G" || unit == "g") scale = 1024.0 * 1024 * 1024;
  else if (!unit.empty()) return std::nullopt;
  if (number <= 0) return std::nullopt;
  return static_cast<int64_t>(number * scale);
}

std::optional<int64_t> ParseDayUs(const std::string& day) {
  std::tm tm{};
  if (!strptime(day.c_str(), "%Y-%m-%d", &tm)) return std::nullopt;
  return static_cast<int64_t>(timegm(&tm)) * 1000000;
}

std::optional<Backend> ParseBackend(const std::string& name) {
  if (name == "tpu") return Backend::kTpu;
  if (name == "gpu") return Backend::kGpu;
  return std::nullopt;
}

void PrintSummary(const char* what, const WriteSummary& s, double seconds) {
  const double mb = static_cast<double>(s.bytes) / 1e6;
  std::printf("%s: %lld files, %lld runs, %lld module dumps, %.1f MB in %.2f s (%.1f MB/s)", what,
              static_cast<long long>(s.files), static_cast<long long>(s.runs), static_cast<long long>(s.modules), mb,
              seconds, seconds > 0 ? mb / seconds : 0.0);
  if (s.layers > 0) {
    std::printf("; %lld layers, %lld values", static_cast<long long>(s.layers), static_cast<long long>(s.values));
  }
  std::printf("\n");
}

int Report(const char* what, const StatusOr<WriteSummary>& result, std::chrono::steady_clock::time_point start) {
  const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  if (!result.ok()) {
    std::fprintf(stderr, "xladb_gen: %s\n", result.status().message().c_str());
    return kExitFailure;
  }
  PrintSummary(what, result.value(), seconds);
  return kExitOk;
}

}  // namespace
}  // namespace xladb::bench

int main(int argc, char** argv) {
  using namespace xladb::bench;
  CLI::App app{"xladb_gen: realistic XLA dump folders, series of runs and big buffer assignments"};
  app.require_subcommand(1);

  std::string out, backend_name = "tpu", size_text, start_day = "2026-01-01", module_name = "jit_train_step";
  uint64_t seed = 1;
  int64_t runs = 5, modules = 8, layers = 4, run = 0, pallas_body = 400;

  auto* ba = app.add_subcommand("buffer-assignment", "One *-buffer-assignment.txt of about --bytes, streamed");
  ba->add_option("--bytes", size_text, "Target size: 100M, 1G, … (binary units)")->required();
  ba->add_option("--out", out, "Output file")->required();
  ba->add_option("--name", module_name, "Module name (metadata scope)");
  ba->add_option("--pallas-body", pallas_body, "TPU: bytes of each Pallas kernel's base64 body")
      ->check(CLI::Range(int64_t{1}, int64_t{100000000}));

  auto* folder = app.add_subcommand("folder", "One --xla_dump_to run folder");
  folder->add_option("--out", out, "Output folder (created)")->required();
  folder->add_option("--modules", modules, "Modules compiled in the run")->check(CLI::Range(1, 100000));
  folder->add_option("--layers", layers, "Layers of the largest module")->check(CLI::Range(1, 1000000));
  folder->add_option("--run", run, "Which run of a series (sizes drift with it)")->check(CLI::Range(0, 100000));

  auto* series = app.add_subcommand("runs", "A series of dated run folders whose module peaks drift");
  series->add_option("--runs", runs, "Number of runs")->check(CLI::Range(1, 100000));
  series->add_option("--modules", modules, "Modules per run")->check(CLI::Range(1, 100000));
  series->add_option("--out", out, "Output folder (created); runs are <out>/nightly-YYYY-MM-DD")->required();
  series->add_option("--layers", layers, "Layers of the largest module")->check(CLI::Range(1, 1000000));
  series->add_option("--start", start_day, "Date of the first run (YYYY-MM-DD, UTC)");

  for (auto* sub : {ba, folder, series}) {
    sub->add_option("--backend", backend_name, "tpu (libtpu 2025-05 era) or gpu (CUDA 2025-02 era)")
        ->check(CLI::IsMember({"tpu", "gpu"}));
    sub->add_option("--seed", seed, "Seed: same flags and seed, same bytes");
  }

  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    const int rc = app.exit(e);
    return rc == 0 ? kExitOk : kExitUsage;
  }
  const Backend backend = *ParseBackend(backend_name);
  const auto start = std::chrono::steady_clock::now();

  if (ba->parsed()) {
    auto bytes = ParseSize(size_text);
    if (!bytes) {
      std::fprintf(stderr, "xladb_gen: --bytes '%s' is not a size like 100M or 1G\n", size_text.c_str());
      return kExitUsage;
    }
    ProgramSpec spec;
    spec.module_name = module_name;
    spec.backend = backend;
    spec.structure_seed = HashMix(seed, HashName(module_name));
    if (backend == Backend::kGpu) spec.seq = 128;
    // The benchmark file has the public corpus's average proportions (about 80 bytes per line, two thirds of
    // them in `from instruction:` lines): on TPU that takes a Pallas kernel per layer with a 400-byte body.
    spec.pallas_percent = 100;
    spec.pallas_body_bytes = pallas_body;
    return Report("buffer-assignment", WriteSizedBufferAssignment(spec, *bytes, out), start);
  }

  SeriesOptions options;
  options.runs = runs;
  options.modules = modules;
  options.backend = backend;
  options.seed = seed;
  options.max_layers = layers;
  auto day = ParseDayUs(start_day);
  if (!day) {
    std::fprintf(stderr, "xladb_gen: --start '%s' is not YYYY-MM-DD\n", start_day.c_str());
    return kExitUsage;
  }
  options.start_time_us = *day;
  if (folder->parsed()) return Report("folder", WriteRunFolder(options, run, out), start);
  return Report("runs", WriteRunSeries(options, out), start);
}
