#include "bench/dump_series.h"

#include <fcntl.h>
#include <sys/stat.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <ctime>
#include <filesystem>
#include <functional>
#include <vector>

#include "bench/deterministic_rng.h"
#include "bench/dump_writer.h"
#include "bench/text_writer.h"

namespace xladb::bench {
namespace {

namespace fs = std::filesystem;

constexpr int64_t kMicrosPerDay = 86400LL * 1000000LL;

// A module of the series: what stays the same from run to run.
struct ModulePlan {
  std::string name;
  uint64_t structure_seed = 0;
  int64_t layers = 1;
  int64_t base_batch = 1;
  int64_t seq = 128;
  int64_t hidden = 512;
};

constexpr const char* kModuleNames[] = {
    "jit_train_step", "jit_eval_step",   "jit_splash_attention_kernel", "jit__scan_window", "pjit__wrapped",
    "jit_apply_updates", "jit_prefill", "jit_decode_step",             "jit_loss_fn",      "jit_generate",
};

std::vector<ModulePlan> PlanModules(const SeriesOptions& options) {
  DeterministicRng rng(HashMix(options.seed, 0x5e71e5));
  const bool tpu = options.backend == Backend::kTpu;
  std::vector<ModulePlan> plans;
  for (int64_t m = 0; m < options.modules; ++m) {
    ModulePlan p;
    constexpr int64_t kNamed = static_cast<int64_t>(sizeof kModuleNames / sizeof kModuleNames[0]);
    p.name = m < kNamed ? kModuleNames[m] : "jit_fn_" + std::to_string(m);
    p.structure_seed = HashMix(options.seed, HashName(p.name));
    const int64_t max_layers = std::max<int64_t>(1, options.max_layers);
    p.layers = m == 0 ? max_layers : rng.Between(1, std::max<int64_t>(1, max_layers / 2));
    p.base_batch = rng.Between(1, 8);
    p.seq = tpu ? (int64_t{256} << rng.Uniform(4)) : (int64_t{128} << rng.Uniform(4));
    p.hidden = tpu ? (int64_t{256} << rng.Uniform(3)) : (int64_t{512} << rng.Uniform(3));
    plans.push_back(p);
  }
  return plans;
}

// The activation batch of module m in run r: module 0 grows every run, module 1 doubles halfway, the rest
// take a seeded random walk.
int64_t BatchAt(const SeriesOptions& options, const ModulePlan& plan, int64_t m, int64_t run) {
  if (m == 0) return plan.base_batch + run;
  if (m == 1) return plan.base_batch * (run >= options.runs / 2 && options.runs > 1 ? 2 : 1);
  DeterministicRng rng(HashMix(plan.structure_seed, 0xba7c4));
  int64_t batch = plan.base_batch;
  for (int64_t r = 1; r <= run; ++r) batch = std::max<int64_t>(1, batch + rng.Between(-1, 2));
  return batch;
}

std::string DayString(int64_t time_us) {
  std::time_t t = static_cast<std::time_t>(time_us / 1000000);
  std::tm tm{};
  gmtime_r(&t, &tm);
  char buf[16];
  std::strftime(buf, sizeof buf, "%Y-%m-%d", &tm);
  return buf;
}

Status SetModificationTime(const std::string& path, int64_t time_us) {
  struct timespec times[2];
  times[0].tv_sec = static_cast<time_t>(time_us / 1000000);
  times[0].tv_nsec = static_cast<long>(time_us % 1000000) * 1000;
  times[1] = times[0];
  if (utimensat(AT_FDCWD, path.c_str(), times, 0) != 0) {
    return Status::IoError("cannot set the modification time of " + path + ": " + std::strerror(errno));
  }
  return Status::Ok();
}

Status MakeDirectories(const std::string& dir) {
  std::error_code ec;
  fs::create_directories(dir, ec);
  if (ec) return Status::IoError("cannot create " + dir + ": " + ec.message());
  return Status::Ok();
}

// Writes one file through `print` and stamps it with `mtime_us`.
Status WriteFile(const std::string& path, int64_t mtime_us, const std::function<void(TextWriter*)>& print,
                 WriteSummary* summary) {
  auto writer = TextWriter::Create(path);
  if (!writer.ok()) return writer.status();
  print(writer.value().get());
  const int64_t bytes = writer.value()->bytes();
  Status st = writer.value()->Finish();
  if (!st.ok()) return st;
  st = SetModificationTime(path, mtime_us);
  if (!st.ok()) return st;
  ++summary->files;
  summary->bytes += bytes;
  return Status::Ok();
}

// The files of one module compile (see the header), named as FilenameFor names them.
Status WriteModuleFiles(const SyntheticProgram& program, const std::string& dir, int64_t module_id,
                        int64_t mtime_us, WriteSummary* summary) {
  const std::string& name = program.spec().module_name;
  const Backend backend = program.backend();
  auto path = [&](std::string_view suffix) { return dir + "/" + ModuleDumpFileName(module_id, name, backend, suffix); };
  Status st = WriteFile(path(".txt"), mtime_us, [&](TextWriter* w) { WriteHloModuleText(program, w); }, summary);
  if (st.ok()) {
    st = WriteFile(path("-buffer-assignment.txt"), mtime_us, [&](TextWriter* w) { WriteBufferAssignment(program, w); },
                   summary);
  }
  if (st.ok()) {
    st = WriteFile(path("-memory-usage-report.txt"), mtime_us,
                   [&](TextWriter* w) { WriteMemoryUsageReport(program, w); }, summary);
  }
  if (st.ok() && backend == Backend::kTpu) {
    st = MakeDirectories(dir + "/llo");
    if (!st.ok()) return st;
    const std::string profile = dir + "/llo/" + BundleProfileFileName(mtime_us * 1000 + module_id, name);
    st = WriteFile(profile, mtime_us, [&](TextWriter* w) { WriteBundleProfile(program, w); }, summary);
  }
  ++summary->modules;
  return st;
}

int64_t CountBufferAssignmentBytes(ProgramSpec spec, int64_t layers) {
  spec.layers = layers;
  SyntheticProgram program(spec);
  TextWriter counter;
  WriteBufferAssignment(program, &counter);
  return counter.bytes();
}

}  // namespace

StatusOr<WriteSummary> WriteRunFolder(const SeriesOptions& options, int64_t run, const std::string& dir) {
  Status st = MakeDirectories(dir);
  if (!st.ok()) return st;
  WriteSummary summary;
  summary.runs = 1;
  const std::vector<ModulePlan> plans = PlanModules(options);
  const int64_t run_time_us = options.start_time_us + run * kMicrosPerDay + 2 * 3600LL * 1000000LL;
  const int64_t M = static_cast<int64_t>(plans.size());
  for (int64_t m = 0; m < M; ++m) {
    const ModulePlan& plan = plans[static_cast<size_t>(m)];
    ProgramSpec spec;
    spec.module_name = plan.name;
    spec.backend = options.backend;
    spec.structure_seed = plan.structure_seed;
    spec.layers = plan.layers;
    spec.batch = BatchAt(options, plan, m, run);
    spec.seq = plan.seq;
    spec.hidden = plan.hidden;
    spec.spill_pressure = m % 2 == 0 ? 1.0 + 0.5 * static_cast<double>(run) : 1.0;
    SyntheticProgram program(spec);
    // Per-process module ids: a different permutation in every run.
    const int64_t module_id = 1 + 2 * ((m + run) % M) + 2 * M * (run % 3);
    st = WriteModuleFiles(program, dir, module_id, run_time_us + m * 1000000LL, &summary);
    if (!st.ok()) return st;
  }
  return summary;
}

StatusOr<WriteSummary> WriteRunSeries(const SeriesOptions& options, const std::string& out_dir) {
  WriteSummary total;
  for (int64_t r = 0; r < options.runs; ++r) {
    const std::string dir =
        out_dir + "/" + options.prefix + "-" + DayString(options.start_time_us + r * kMicrosPerDay);
    auto one = WriteRunFolder(options, r, dir);
    if (!one.ok()) return one.status();
    total.files += one->files;
    total.bytes += one->bytes;
    total.modules += one->modules;
    ++total.runs;
  }
  return total;
}

StatusOr<WriteSummary> WriteSizedBufferAssignment(ProgramSpec spec, int64_t target_bytes, const std::string& path) {
  // Bytes grow linearly in the layer count once every weight set is in use (48 layers); below that, search.
  constexpr int64_t kFitLow = 48, kFitHigh = 96;
  const int64_t at_low = CountBufferAssignmentBytes(spec, kFitLow);
  int64_t layers = 1;
  if (target_bytes <= at_low) {
    int64_t lo = 1, hi = kFitLow;
    while (lo < hi) {
      const int64_t mid = (lo + hi + 1) / 2;
      if (CountBufferAssignmentBytes(spec, mid) <= target_bytes) lo = mid;
      else hi = mid - 1;
    }
    layers = lo;
  } else {
    // Bytes per layer creep up with the layer count (names and ids get more digits), so a first linear
    // estimate is refined by a second fit at 1/16 and 1/8 of it: closer digit counts, 19% extra dry run.
    auto extrapolate = [&](int64_t low, int64_t at_low_bytes, int64_t high) {
      const int64_t at_high = CountBufferAssignmentBytes(spec, high);
      const double per_layer = static_cast<double>(at_high - at_low_bytes) / static_cast<double>(high - low);
      return high + static_cast<int64_t>(static_cast<double>(target_bytes - at_high) / per_layer + 0.5);
    };
    layers = extrapolate(kFitLow, at_low, kFitHigh);
    if (layers / 16 > kFitHigh) {
      layers = extrapolate(layers / 16, CountBufferAssignmentBytes(spec, layers / 16), layers / 8);
    }
  }
  spec.layers = layers;
  SyntheticProgram program(spec);
  WriteSummary summary;
  summary.layers = layers;
  summary.values = program.value_count();
  summary.modules = 1;
  auto writer = TextWriter::Create(path);
  if (!writer.ok()) return writer.status();
  WriteBufferAssignment(program, writer.value().get());
  summary.bytes = writer.value()->bytes();
  Status st = writer.value()->Finish();
  if (!st.ok()) return st;
  summary.files = 1;
  return summary;
}

}  // namespace xladb::bench
