// DumpWriter's libtpu bundle profile (dump_writer.h: WriteBundleProfile, BundleProfileFileName, §8): one
// block of utilization counters per kernel, as `*-hlo-static-bundle-profile.txt` holds them.
#include "bench/dump_writer.h"

#include <algorithm>
#include <cinttypes>
#include <cstdint>
#include <cstdio>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "bench/deterministic_rng.h"

namespace xladb::bench {
namespace {

struct CounterSpec {
  const char* name;
  int64_t capacity_num;  // peak = ceil(bundles * num / den)
  int64_t capacity_den;
};

constexpr CounterSpec kCounters[] = {
    {"MXU_0 matpush", 1, 2},          {"MXU_0 matpush_bf16_packed", 1, 4}, {"MXU_0 matpush_s8_packed", 1, 4},
    {"MXU_0 matmul", 1, 4},           {"MXU_0 matmul_packed", 1, 8},       {"MXU_0 matmul_x8_packed", 1, 8},
    {"MXU_1 matpush", 1, 2},          {"MXU_1 matpush_bf16_packed", 1, 4}, {"MXU_1 matpush_s8_packed", 1, 4},
    {"MXU_1 matmul", 1, 4},           {"MXU_1 matmul_packed", 1, 8},       {"MXU_1 matmul_x8_packed", 1, 8},
    {"XLU_0 transpose", 1, 4},        {"XLU_0 transpose_b16", 1, 4},       {"XLU_0 rpu", 1, 4},
    {"XLU_0 all", 1, 4},              {"XLU_1 transpose", 1, 4},           {"XLU_1 transpose_b16", 1, 4},
    {"XLU_1 rpu", 1, 4},              {"XLU_1 all", 1, 4},                 {"VECTOR_ALU", 4, 1},
    {"VECTOR_EUP", 1, 1},             {"VECTOR_LOAD_AND_MISC", 3, 1},      {"VECTOR_STORE_AND_MISC", 2, 1},
    {"VECTOR_LOAD_AND_STORE_AND_MISC", 4, 1}, {"VECTOR_MISC", 1, 1},       {"CMEM_LOAD", 1, 2},
    {"SMEM_SPILL_COUNT", 1, 1},       {"SMEM_FILL_COUNT", 1, 1},           {"VMEM_SPILL_COUNT", 1, 1},
    {"VMEM_FILL_COUNT", 1, 1},        {"SCALAR_ALU", 2, 1},                {"VMEM_TO_HBM_ESTIMATED_STARVATION", 1, 1},
    {"HBM_TO_VMEM_ESTIMATED_STARVATION", 1, 1},
};

// One block: the header, then ` - <COUNTER>: (<num>/<den>) - <num/den as %g>` per counter.
void WriteBundleBlock(std::string_view header, int64_t bundles, uint64_t seed, int64_t vmem_spills, TextWriter* out) {
  DeterministicRng rng(seed);
  const int mxu_use = static_cast<int>(rng.Uniform(100));
  std::string text = "HLO: ";
  text.append(header);
  text.push_back('\n');
  char buf[200];
  for (const CounterSpec& c : kCounters) {
    const int64_t peak = (bundles * c.capacity_num + c.capacity_den - 1) / c.capacity_den;
    const std::string_view name = c.name;
    int64_t achieved = 0;
    if (name == "VMEM_SPILL_COUNT") achieved = std::min(peak, vmem_spills);
    else if (name == "VMEM_FILL_COUNT") achieved = std::min(peak, vmem_spills + vmem_spills / 3);
    else if (name.find("SPILL") != std::string_view::npos || name.find("FILL") != std::string_view::npos ||
             name.find("STARVATION") != std::string_view::npos) achieved = rng.Percent(10) ? rng.Uniform(peak / 40 + 1) : 0;
    else if (name.substr(0, 3) == "MXU") achieved = mxu_use < 50 ? 0 : rng.Uniform(peak / 2 + 1);
    else if (name.substr(0, 3) == "XLU") achieved = rng.Percent(30) ? rng.Uniform(peak / 4 + 1) : 0;
    else achieved = rng.Uniform(peak / 2 + 1);
    const double ratio = peak > 0 ? static_cast<double>(achieved) / static_cast<double>(peak) : 0.0;
    std::snprintf(buf, sizeof buf, " - %s: (%" PRId64 "/%" PRId64 ") - %g\n", c.name, achieved, peak, ratio);
    text.append(buf);
  }
  text.push_back('\n');
  out->Put(text);
}

}  // namespace

void WriteBundleProfile(const SyntheticProgram& program, TextWriter* out) {
  const uint64_t seed = program.spec().structure_seed;
  WriteBundleBlock("<no-hlo-instruction>", 187, HashMix(seed, 1), 0, out);
  WriteBundleBlock("<no-hlo-instruction>", 7, HashMix(seed, 2), 0, out);
  std::vector<InstructionRef> kernels;
  for (size_t j = 0; j < program.layer_template().size(); ++j) {
    if (program.layer_template()[j].is_kernel) kernels.push_back({Segment::kLayer, static_cast<int32_t>(j), 0});
  }
  for (size_t k = 0; k < program.epilogue().size(); ++k) {
    if (program.epilogue()[k].is_kernel) kernels.push_back({Segment::kEpilogue, static_cast<int32_t>(k), 0});
  }
  std::string text;
  for (const InstructionRef& ref : kernels) {
    const OpTemplate& op = program.Op(ref);
    const std::string name = program.Name(ref);
    int64_t output_bytes = 0;
    for (const ArrayShape& a : op.shape.elements) output_bytes += a.LogicalBytes();
    const uint64_t kernel_seed = HashMix(seed, HashName(name));
    const int64_t bundles = std::clamp<int64_t>(output_bytes / 2048, 7, 4000000) + static_cast<int64_t>(kernel_seed % 97);
    int64_t spills = 0;
    if (op.spills_grow) {
      spills = static_cast<int64_t>(static_cast<double>(bundles) / 40.0 * program.spec().spill_pressure);
    }
    text.clear();
    AppendInstructionText(program, ref, &text);
    WriteBundleBlock(text, bundles, kernel_seed, spills, out);
  }
}

std::string BundleProfileFileName(int64_t timestamp_ns, std::string_view unit) {
  return std::to_string(timestamp_ns) + "-" + std::string(unit) + "-82-hlo-static-bundle-profile.txt";
}

}  // namespace xladb::bench
