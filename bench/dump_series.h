// DumpSeries: where the generator's dumps go and how big they are — single buffer-assignment files of a
// requested size, `--xla_dump_to` run folders, and series of dated runs whose modules drift.
//
// A run folder holds, per module, the files XLA writes for one compile (§1.3 of
// docs/formats.md), named by FilenameFor (xla/service/dump.cc, §1.1):
//   module_<ID>.<name>.<stage>.txt                       HLO module text after optimizations
//   module_<ID>.<name>.<stage>-buffer-assignment.txt     allocations, values, live ranges, peak list
//   module_<ID>.<name>.<stage>-memory-usage-report.txt   memory-usage report V1
//   llo/<ns>-<name>-82-hlo-static-bundle-profile.txt     TPU only: libtpu utilization counters
// with stage `after_optimizations` (TPU) or `sm_8.0_gpu_after_optimizations` (GPU). Module ids are per-run
// (per-process counters: they differ from run to run, names do not).
//
// A series is N such folders `<prefix>-YYYY-MM-DD` (one day apart, every file's mtime set to its run's day)
// so that `xladb ingest DIR/*` orders them by time with no flags. Across runs each module keeps its structure
// (names, ops) while its activation batch drifts: module 0 grows by one every run (its peak differs in every
// run), module 1 doubles halfway through the series, the others take a seeded random walk; TPU kernels marked
// spills_grow spill more in every run of the even-numbered modules.
//
// Contract: deterministic in the options (seed included). Errors are Status values (kIoError naming the
// path); a failed write leaves the files written so far. Not thread-safe.
#ifndef XLADB_BENCH_DUMP_SERIES_H_
#define XLADB_BENCH_DUMP_SERIES_H_

#include <cstdint>
#include <string>

#include "bench/synthetic_program.h"
#include "base/status.h"

namespace xladb::bench {

struct WriteSummary {
  int64_t files = 0;
  int64_t bytes = 0;
  int64_t runs = 0;
  int64_t modules = 0;   // module compiles written (runs × modules)
  int64_t layers = 0;    // WriteSizedBufferAssignment: the layer count chosen
  int64_t values = 0;    // WriteSizedBufferAssignment: HloValues in the file
};

struct SeriesOptions {
  int64_t runs = 5;
  int64_t modules = 8;
  Backend backend = Backend::kTpu;
  uint64_t seed = 1;
  int64_t max_layers = 4;                       // layers of the largest module
  int64_t start_time_us = 1767225600000000LL;   // 2026-01-01T00:00:00Z
  std::string prefix = "nightly";
};

// Writes run `run` of the series (its drifted module sizes) straight into `dir` (created if missing).
StatusOr<WriteSummary> WriteRunFolder(const SeriesOptions& options, int64_t run, const std::string& dir);

// Writes options.runs run folders `<prefix>-YYYY-MM-DD` under `out_dir` (created if missing).
StatusOr<WriteSummary> WriteRunSeries(const SeriesOptions& options, const std::string& out_dir);

// Writes one buffer-assignment file of about `target_bytes` (within a few percent): the layer count is fitted
// from two dry runs, then the file streams out in bounded memory.
StatusOr<WriteSummary> WriteSizedBufferAssignment(ProgramSpec spec, int64_t target_bytes, const std::string& path);

}  // namespace xladb::bench

#endif  // XLADB_BENCH_DUMP_SERIES_H_
