// Sniffer: decides what a file of a dump folder is (FileKind) from the first bytes of its content, with the
// file name (dump_name.h) as a hint.
//
// What it recognises, by the first non-blank line unless said otherwise:
//   * `BufferAssignment:`                  buffer assignment, every era of §2 (0x… headers 2019-2022, glued
//                                          `from instruction` lines 2024, live range appended 2021-2026, the
//                                          2026 "diet" head with allocations only). Printer:
//                                          BufferAssignment::ToString, xla/service/buffer_assignment.cc.
//   * empty line, `Total bytes used:`, …, `Used values:`
//                                          buffer-assignment values (§3, BufferAssignment::ValuesToString).
//   * `Total bytes used:`, …, `Allocations sorted by size:`
//                                          memory-usage report V1 (§5.1); `Memory Space:` V2 (§5.2). Both from
//                                          BufferAssignment::MemoryUsageReport. A values file and a V1 report
//                                          both open with `Total bytes used:`; the next non-blank line decides,
//                                          and when the head ends before it, the name, then the leading empty
//                                          line (values files have one, reports do not).
//   * `HloLiveRange (max ` / `HloLiveRange not available`
//                                          live range (§4, HloLiveRange::ToString, xla/hlo/utils).
//   * `HloModule `                         HLO module text (§7, HloModule::ToString). Ingested for the
//                                          before_optimizations and final after-optimizations stages, and for
//                                          names without a stage; a per-pass dump name or another stage name
//                                          (libtpu's after_optimizations_{before,after}_buffer_assignment,
//                                          after_spmd_partitioner, …) makes it kNotIngested.
//   * `HLO: `                              libtpu static bundle profile (§8, closed source).
//   * `== CAPACTIY:` (sic; also `CAPACITY`) libtpu per-bundle utilization.
//   * `BufferAssignment OOM Debugging.` anywhere in the head (log lines may precede it), or a head that opens
//                                          with a `Buffer <n>:` / `Size:` block of its `Peak buffers:` list
//                                          (§9, BufferAssignment::ToVerboseString): OOM report.
//   * Known non-memory artifacts → kNotIngested with a reason: empty or blank files, compressed or binary data
//     (binary protos), GPU thunk sequences (`kKernel\t…`), LLVM IR, PTX, DOT, HTML, URL files, MLIR, JSON,
//     text protos (autotune results, target config, debug_options), flag files, BufferInfoString CSV; then
//     by name for the same artifacts when the content says nothing.
//   * Anything else → kUnknown with the first line in the reason.
// A name that claims an ingested kind (`-buffer-assignment.txt`, `-memory-usage-report.txt`,
// `<stage>.txt` for module-text stages, libtpu `…-hlo-static-bundle-profile.txt`, …) but whose content is
// another kind or unrecognised gives kUnknown with a reason naming what was expected; an empty file stays
// kNotIngested "empty file" whatever its name.
//
// Contract: pure functions; `head` is only read during the call; no I/O; linear in head.size(); thread-safe.
// Never fails: every input gets a verdict.
#ifndef XLADB_INGEST_SOURCE_SNIFF_H_
#define XLADB_INGEST_SOURCE_SNIFF_H_

#include <cstddef>
#include <string>
#include <string_view>

#include "ingest/text/dump_name.h"
#include "ingest/source/file_kind.h"

namespace xladb::ingest {

inline constexpr size_t kSniffBytes = 64 * 1024;  // the driver passes at most this many leading bytes

struct SniffResult {
  FileKind kind = FileKind::kUnknown;
  std::string reason;        // for kNotIngested and kUnknown: why, in words ("GPU thunk sequence: not memory data",
                             // "per-pass HLO dump (intermediate pass state)", "binary protobuf", "LLVM IR", …)
  std::string backend_hint;  // "tpu" / "gpu" / "cpu" from content markers (T(8,128) tiling, S(1), tpu_custom_call
                             // → tpu; __cublas$gemm, __triton, sm_ → gpu), "" when content says nothing
  bool name_claims_ingested_kind = false;  // the file name says it is a kind we parse (so unknown content is an error)
};

// Decides by CONTENT (the first lines of `head`), using `file_name` (base name, compression suffix already
// removed by the caller) only as a hint and to tell per-pass HLO dumps and before/after stages apart.
SniffResult SniffFile(std::string_view file_name, std::string_view head);

// The ingested kind a parsed name claims (kUnknown when the name claims none): `-buffer-assignment.txt`,
// `-buffer-assignment-values.txt`, `-live-range.txt`, `-memory-usage-report.txt` (also on renamed files),
// `<module-text stage>.txt` (XLA names only), libtpu `hlo-static-bundle-profile.txt` and
// `hlo-static-per-bundle-utilization.txt`.
FileKind KindClaimedByName(const DumpName& name);

// "tpu", "gpu", "cpu" or "" from backend markers in `text` (gpu markers win over tpu ones, tpu over cpu;
// the memory-space marker `S(n)` counts for tpu only when nothing else is found).
std::string_view BackendHintFromContent(std::string_view text);

}  // namespace xladb::ingest

#endif  // XLADB_INGEST_SOURCE_SNIFF_H_
