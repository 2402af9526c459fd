// DumpName: what a file name in an `--xla_dump_to` folder says (§1).
//
// Reads the names written by `FilenameFor` in xla/service/dump.cc:
//
//   [<timestamp_us>.]module_<ID>[.<module_name>][.cl_<CL>].<suffix>
//
// where <suffix> is a stage (`before_optimizations`, `sm_8.0_gpu_after_optimizations`, a per-pass step such as
// `0001.spmd-partitioner.after_x.before_y`, …) followed by an artifact (`.txt`, `-buffer-assignment.txt`, …),
// or an artifact alone (`thunk_sequence.txt`, `ir-no-opt.ll`, `debug_options`, `flagfile`). All eras:
// names without a module name (before 2021-06-22, or dropped because the name would pass 255 bytes), the
// 2021-04-22 backend stage names, `.cl_<CL>` (internal builds, 2025-01-17+), timestamp prefixes.
// Also reads libtpu's LLO dump names, `<timestamp_ns>-<unit>-<NN>-<what>` (e.g.
// `1766453540309905585-TLP-82-hlo-static-bundle-profile.txt`), whose public anchor is
// xla/tests/two_plus_two_simple_test.cc.
//
// Method (§1.4): the name is never split on dots, because module names and `sm_8.0` contain them. The timestamp
// and `module_<ID>.` are taken from the left; a known artifact suffix, then a known stage, then `.cl_<CL>` are
// matched from the right; what remains is the module name. A name that does not start that way (a renamed
// file) gets only its artifact, with xla_naming = false.
//
// Contract: pure functions of their argument; no allocation beyond the returned strings; thread-safe. Never
// fails: anything unrecognised is left empty / -1.
#ifndef XLADB_INGEST_TEXT_DUMP_NAME_H_
#define XLADB_INGEST_TEXT_DUMP_NAME_H_

#include <cstdint>
#include <string>
#include <string_view>

namespace xladb::ingest {

struct DumpName {
  int64_t timestamp_us = -1;   // leading `<digits>.` prefix (--xla_dump_include_timestamp), -1 if absent;
                               // for libtpu names, their nanosecond prefix divided by 1000
  int64_t xla_module_id = -1;  // module_<ID>, -1 if the name has none
  std::string module_name;     // may contain dots; empty if dropped for length or unknown; libtpu: the unit
  std::string stage;           // "sm_8.0_gpu_after_optimizations", "before_optimizations", "after_optimizations",
                               // "cpu_after_optimizations", "gfx90a_gpu_after_optimizations",
                               // "0001.spmd-partitioner.after_x.before_y" (pass dump), "" if none
  std::string backend;         // "cuda", "rocm", "cpu", "gpu" (`_gpu_after_optimizations`), "" = unknown
  std::string changelist;      // digits of `.cl_<CL>`, empty if absent
  std::string artifact;        // the trailing kind suffix as found: "-buffer-assignment.txt", ".txt",
                               // "-memory-usage-report.txt", "-buffer-assignment-values.txt", "-live-range.txt",
                               // ".thunk_sequence.txt", ".ir-no-opt.ll", ".ptx", ".hlo.pb",
                               // "-hlo-static-bundle-profile.txt", …; otherwise the last `.<ext>`; "" if none
  bool is_pass_dump = false;   // NNNN.<pipeline>.after_<pass>.before_<pass> or NNNN.<pass>.<step>
  bool xla_naming = false;     // true when the name follows XLA's module_<ID> (or libtpu's bundle-profile) scheme
  // Added after the first API draft:
  std::string compression;     // ".gz", ".zst", ".bz2" or ".xz" found at the very end and removed before
                               // matching (XLA itself writes `.hlo.pb.gz`); empty if none
  int64_t libtpu_step = -1;    // libtpu names: the <NN> between unit and what (82 in `…-TLP-82-hlo-…`); else -1
};

// Parses a base name (no directories). Never splits on dots; matches from the right (§1.4). Pure, thread-safe.
DumpName ParseDumpName(std::string_view file_name);

// True when `name` is a stage whose `<base>.txt` is the module text xladb ingests: `before_optimizations` and the
// final after-optimizations stage of every backend (`after_optimizations`, `cpu_after_optimizations`,
// `sm_8.0_gpu_after_optimizations`, `gfx90a_…`, `_gpu_…`). False for pass dumps, libtpu's
// `after_optimizations_{before,after}_buffer_assignment` snapshots, other stages, and names without a stage.
bool IsModuleTextStage(const DumpName& name);

}  // namespace xladb::ingest

#endif  // XLADB_INGEST_TEXT_DUMP_NAME_H_
