// DumpWriter: prints a SyntheticProgram the way XLA (and libtpu) print a compiled module into an
// `--xla_dump_to` folder. All of the generator's format knowledge is here; section numbers (§) refer to
// docs/formats.md; the printers named are those of the XLA source.
//
// Eras follow the program's backend (synthetic_program.h): kTpu prints like 2025-05-16 … 2025-07-23 (long
// instruction text without operand shapes, V3 peak list with cumulative sums), kGpu like 2025-02-17 …
// 2025-03-11 (operand shapes in instruction text, V1 peak list without shape indices). Both write the
// memory-usage report V1 (2024-10 … 2026-03).
//
//   HumanReadableNumBytes      tsl::strings::HumanReadableNumBytes                              §6.4
//   AppendShape                ShapeUtil::HumanString[WithLayout], Layout::Print                §6.2, §6.3
//   AppendInstructionText      HloInstruction::ToString (long form)                             §7.2, §2.5
//   WriteBufferAssignment      BufferAssignment::ToString (BufferAllocation::ToString,
//                              HloValue::ToString) + HloLiveRange::ToString                     §2, §4
//   WriteMemoryUsageReport     BufferAssignment::MemoryUsageReport (V1)                         §5.1, §5.3
//   WriteHloModuleText         HloModule::ToString (HloComputation::Print)                      §7
//   WriteBundleProfile         libtpu `*-hlo-static-bundle-profile.txt` (no public printer)     §8
//   ModuleDumpFileName         FilenameFor (xla/service/dump.cc), GetDumpName (gpu)            §1.1 … §1.3
//   BundleProfileFileName      libtpu LLO dump names                                           §8, §1
//
// Contract: printers write through a TextWriter and keep memory bounded by one instruction's text plus the
// peak list (WriteBufferAssignment), or by the allocation tables (WriteMemoryUsageReport: use it for
// run-folder sized programs). Output is a pure function of the program. Errors: the writer's (see
// TextWriter::Finish). Thread-compatible.
#ifndef XLADB_BENCH_DUMP_WRITER_H_
#define XLADB_BENCH_DUMP_WRITER_H_

#include <cstdint>
#include <string>
#include <string_view>

#include "bench/synthetic_program.h"
#include "bench/text_writer.h"

namespace xladb::bench {

std::string HumanReadableNumBytes(int64_t bytes);

// Whether the instruction text of `backend`'s era prints operand shapes (XLA until 2025-03-11: kGpu).
inline bool OperandShapesPrinted(Backend backend) { return backend == Backend::kGpu; }

// A shape as XLA prints it: `bf16[8,2048,128]`, with layout `bf16[8,2048,128]{2,1,0:T(8,128)(2,1)}` (TPU
// tiling and S(n) only on kTpu), tuples `(a, b, c, d, e, /*index=5*/f)`.
void AppendShape(const ArrayShape& shape, Backend backend, bool with_layout, std::string* out);
void AppendShape(const Shape& shape, Backend backend, bool with_layout, std::string* out);

// `%name = shape opcode(operands), attributes` (HloInstruction::ToString), operand shapes printed on kGpu.
void AppendInstructionText(const SyntheticProgram& program, const InstructionRef& ref, std::string* out);

// `*-buffer-assignment.txt` of 2021-04 … 2026-04 (BufferAssignment::ToString, then "\n\n", then
// HloLiveRange::ToString): allocation blocks (BufferAllocation::ToString), `Total bytes used`, Used values
// (HloValue::ToString with HloPosition / HloUse), InstructionSequence, BufferLiveRange and the peak list.
void WriteBufferAssignment(const SyntheticProgram& program, TextWriter* out);

// `*-memory-usage-report.txt`, V1 (BufferAssignment::MemoryUsageReport(0.05, 50)): allocations by size with
// XLA's 50-row / 5% truncation, then each allocation's header and, unless it holds exactly one value, its
// per-offset table (BufferAllocation::MemoryUsageReport, TAB prefix, `n×shape` lists).
void WriteMemoryUsageReport(const SyntheticProgram& program, TextWriter* out);

// `<base>.txt`: the scheduled module after optimizations (HloModule::ToString with the era's print options:
// computations in post order, regions and fused computations before ENTRY, `%` names, signatures).
void WriteHloModuleText(const SyntheticProgram& program, TextWriter* out);

// libtpu's static bundle profile: two `<no-hlo-instruction>` blocks, then one block per kernel of the first
// layer and of the epilogue. Counts are deterministic in the program; VMEM spills of kernels marked
// spills_grow scale with ProgramSpec::spill_pressure.
void WriteBundleProfile(const SyntheticProgram& program, TextWriter* out);

// `module_0007.<name>.<stage><suffix>` (FilenameFor): stage `after_optimizations` on TPU,
// `sm_8.0_gpu_after_optimizations` on CUDA; suffix ".txt", "-buffer-assignment.txt", ….
std::string ModuleDumpFileName(int64_t module_id, std::string_view module_name, Backend backend,
                               std::string_view suffix);

// libtpu's `<timestamp ns>-<compilation unit>-82-hlo-static-bundle-profile.txt`.
std::string BundleProfileFileName(int64_t timestamp_ns, std::string_view unit);

}  // namespace xladb::bench

#endif  // XLADB_BENCH_DUMP_WRITER_H_
