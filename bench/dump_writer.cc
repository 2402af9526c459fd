#include "bench/dump_writer.h"

#include <algorithm>
#include <charconv>
#include <cinttypes>
#include <cstdio>
#include <map>
#include <string_view>
#include <utility>
#include <vector>

#include "bench/deterministic_rng.h"

namespace xladb::bench {
namespace {

void AppendInt(int64_t value, std::string* out) {
  char buf[24];
  auto r = std::to_chars(buf, buf + sizeof buf, value);
  out->append(buf, static_cast<size_t>(r.ptr - buf));
}

// ShapeIndex::ToString of a value's index: "{}" for the tuple table (and, in BufferLiveRange and V2/V3 peak
// lines, for a non-tuple value), "{e}" for an element.
void AppendShapeIndex(int index, std::string* out) {
  out->push_back('{');
  if (index >= 0) AppendInt(index, out);
  out->push_back('}');
}

// CEscape of a metadata string (the generator's strings hold no non-ASCII bytes).
void AppendQuoted(std::string_view s, std::string* out) {
  out->push_back('"');
  for (char c : s) {
    if (c == '"' || c == '\\') out->push_back('\\');
    out->push_back(c);
  }
  out->push_back('"');
}

bool OperandShapesPrinted(Backend backend) { return backend == Backend::kGpu; }  // until 2025-03-11
bool PeakListV3(Backend backend) { return backend == Backend::kTpu; }            // 2025-05-16 onward

// ---------------------------------------------------------------------------------------------------
// Instruction text pieces (HloInstruction::ToString, §7.2).

// `metadata={op_type="…" op_name="…" source_file="…" source_line=N}` (OpMetadataToString), or nothing.
void AppendMetadata(const SyntheticProgram& program, const InstructionRef& ref, std::string* out) {
  const OpTemplate& op = program.Op(ref);
  const std::string op_name = program.OpName(ref);
  if (op.op_type.empty() && op_name.empty()) return;
  out->append(", metadata={");
  bool first = true;
  auto field = [&](std::string_view key) {
    if (!first) out->push_back(' ');
    first = false;
    out->append(key);
    out->push_back('=');
  };
  if (!op.op_type.empty()) {
    field("op_type");
    AppendQuoted(op.op_type, out);
  }
  if (!op_name.empty()) {
    field("op_name");
    AppendQuoted(op_name, out);
  }
  if (!op.source_file.empty()) {
    field("source_file");
    AppendQuoted(op.source_file, out);
    field("source_line");
    AppendInt(op.source_line, out);
  }
  out->push_back('}');
}

// One operand: `%name`, or `<shape> %name` when the era prints operand shapes; `/*index=N*/` before every
// fifth (HloInstruction::PrintOperandsWithCanonicalNameMap).
void AppendOperand(const SyntheticProgram& program, size_t k, const InstructionRef& operand, std::string* out) {
  if (k > 0) out->append(", ");
  if (k > 0 && k % 5 == 0) {
    out->append("/*index=");
    AppendInt(static_cast<int64_t>(k), out);
    out->append("*/");
  }
  if (OperandShapesPrinted(program.backend())) {
    AppendShape(program.Op(operand).shape, program.backend(), true, out);
    out->push_back(' ');
  }
  out->push_back('%');
  out->append(program.Name(operand));
}

void AppendOperandList(const SyntheticProgram& program, const InstructionRef& ref, std::string* out) {
  const OpTemplate& op = program.Op(ref);
  if (op.kind == OpKind::kParameter) {
    if (ref.segment == Segment::kRegion) out->append(op.constant_literal);
    else AppendInt(ref.index, out);
    return;
  }
  if (op.kind == OpKind::kConstant) {
    out->append(op.constant_literal);
    return;
  }
  for (size_t k = 0; k < op.operands.size(); ++k) AppendOperand(program, k, program.Resolve(ref, op.operands[k]), out);
}

void AppendAttributes(const SyntheticProgram& program, const InstructionRef& ref, std::string* out) {
  const OpTemplate& op = program.Op(ref);
  if (op.kind == OpKind::kFusion && !op.fusion_kind.empty()) {
    out->append(", kind=");
    out->append(op.fusion_kind);
    out->append(", calls=%");
    out->append(program.FusedComputationName(ref));
  }
  if (op.kind == OpKind::kGetTupleElement) {
    out->append(", index=");
    AppendInt(op.tuple_index, out);
  }
  if (op.kind == OpKind::kCustomCall) {
    out->append(", custom_call_target=");
    AppendQuoted(op.custom_call_target, out);
    if (op.custom_call_target == "tpu_custom_call") {
      out->append(", operand_layout_constraints={");
      for (size_t k = 0; k < op.operands.size(); ++k) {
        if (k > 0) out->append(", ");
        AppendShape(program.Op(program.Resolve(ref, op.operands[k])).shape.array(), Backend::kGpu, true, out);
      }
      out->push_back('}');
    }
  }
  AppendMetadata(program, ref, out);
  if (!op.backend_config.empty()) {
    out->append(", backend_config=");
    out->append(op.backend_config);
  }
}

// ---------------------------------------------------------------------------------------------------
// Buffer assignment (§2): BufferAllocation::ToShortString / ToString and HloValue::ToString.

// `allocation <i>: size <n>{, <flag>}*:` (with `size <human>` in memory-usage reports).
void AppendAllocationHeader(const SyntheticProgram& program, const Allocation& a, bool human, std::string* out) {
  out->append("allocation ");
  AppendInt(a.index, out);
  out->append(": size ");
  if (human) out->append(HumanReadableNumBytes(a.size));
  else AppendInt(a.size, out);
  if (a.color != 0) {
    out->append(", color ");
    AppendInt(a.color, out);
  }
  if (a.kind == AllocationKind::kParameter) {
    out->append(", parameter ");
    AppendInt(a.member, out);
    out->append(", shape |");
    AppendShape(program.Op({Segment::kParameter, a.member, 0}).shape, program.backend(), false, out);
    out->append("| at ShapeIndex {}");
  }
  if (a.kind == AllocationKind::kRootTuple) {
    out->append(", output shape is |");
    AppendShape(program.Op({Segment::kRoot, 0, 0}).shape, program.backend(), false, out);
    out->push_back('|');
  }
  if (a.kind == AllocationKind::kConstant) out->append(", constant");
  if (a.kind == AllocationKind::kThreadLocal) out->append(", thread-local");
  if (a.kind == AllocationKind::kOutput || a.kind == AllocationKind::kRootTuple) out->append(", maybe-live-out");
  if (a.kind == AllocationKind::kTemp) out->append(", preallocated-temp");
  out->append(":\n");
}

// HloValue::ToShortString: `<id name[{index}] @color>`, the index only for tuple-shaped instructions.
void AppendValueShort(const SyntheticProgram& program, const Value& v, std::string* out) {
  out->push_back('<');
  AppendInt(v.id, out);
  out->push_back(' ');
  out->append(program.Name(v.defining));
  if (v.defining_shape->is_tuple) AppendShapeIndex(v.index, out);
  out->append(" @");
  AppendInt(v.color, out);
  out->push_back('>');
}

// ` value: <short> (size=<n>,offset=<n>): <shape with layout>`
void AppendAllocatedValueLine(const SyntheticProgram& program, const Value& v, std::string* out) {
  out->append(" value: ");
  AppendValueShort(program, v, out);
  out->append(" (size=");
  AppendInt(v.size, out);
  out->append(",offset=");
  AppendInt(v.offset, out);
  out->append("): ");
  if (v.array) AppendShape(*v.array, program.backend(), true, out);
  else AppendShape(*v.defining_shape, program.backend(), true, out);
  out->push_back('\n');
}

// Prints Used-values blocks; the instruction text is rendered once per instruction (a tuple's values share it).
class ValueBlockPrinter {
 public:
  explicit ValueBlockPrinter(const SyntheticProgram& program) : program_(program) {}

  void Print(const Value& v, TextWriter* out) {
    line_.clear();
    AppendValueShort(program_, v, &line_);
    line_.append("\n positions:\n");
    positions_.clear();
    program_.AppendPositions(v, &positions_);
    for (const Position& p : positions_) {
      line_.append("  ");
      line_.append(program_.Name(p.instruction));
      if (program_.Op(p.instruction).shape.is_tuple) {
        line_.push_back(' ');
        AppendShapeIndex(p.index, &line_);
      }
      line_.push_back('\n');
    }
    line_.append(" uses:\n");
    uses_.clear();
    program_.AppendUses(v, &uses_);
    for (const Use& u : uses_) {
      line_.append("  ");
      line_.append(program_.Name(u.instruction));
      line_.append(", operand ");
      AppendInt(u.operand, &line_);
      if (u.index != kNoIndex) {
        line_.push_back(' ');
        AppendShapeIndex(u.index, &line_);
      }
      line_.push_back('\n');
    }
    line_.append(" from instruction: ");
    out->Put(line_);
    if (!have_text_ || !SameInstruction(v.defining, text_of_)) {
      text_.clear();
      AppendInstructionText(program_, v.defining, &text_);
      text_of_ = v.defining;
      have_text_ = true;
    }
    out->Put(text_);
    out->Put('\n');
  }

 private:
  static bool SameInstruction(const InstructionRef& a, const InstructionRef& b) {
    return a.segment == b.segment && a.index == b.index && a.layer == b.layer;
  }

  const SyntheticProgram& program_;
  std::string line_, text_;
  InstructionRef text_of_;
  bool have_text_ = false;
  std::vector<Position> positions_;
  std::vector<Use> uses_;
};

// ---------------------------------------------------------------------------------------------------
// HloLiveRange::ToString (§4).

struct PeakEntry {
  std::string name;
  int index;
  int64_t bytes;
};

void WriteLiveRange(const SyntheticProgram& program, TextWriter* out) {
  const int64_t T = program.schedule_length();
  out->Put("HloLiveRange (max ");
  out->PutInt(T);
  out->Put("):\n  InstructionSequence:\n");
  std::string line;
  for (int64_t slot = 0; slot < T; ++slot) {
    line.assign("    ");
    AppendInt(slot, &line);
    line.push_back(':');
    line.append(program.Name(program.AtSlot(slot)));
    line.push_back('\n');
    out->Put(line);
  }
  out->Put("  BufferLiveRange:\n");
  program.ForEachValue([&](const Value& v) {
    if (v.live_start < 0) return;  // thread-local: no live range
    line.assign("    ");
    line.append(program.Name(v.defining));
    AppendShapeIndex(v.index, &line);
    line.push_back(':');
    AppendInt(v.live_start, &line);
    line.push_back('-');
    AppendInt(v.live_end, &line);
    line.push_back('\n');
    out->Put(line);
  });

  // The peak list: the live ranges spanning the peak time, in BufferLiveRange order (V1) or sorted by bytes,
  // then name, then index, with a running sum (V3).
  const bool v3 = PeakListV3(program.backend());
  const PeakMoment peak = program.ComputePeak(!v3);
  std::vector<PeakEntry> entries;
  program.ForEachValue([&](const Value& v) {
    if (v.live_start < 0 || v.live_start > peak.time || v.live_end < peak.time) return;
    entries.push_back({program.Name(v.defining), v.index, v3 ? v.LogicalBytesV3() : v.LogicalBytesV1()});
  });
  if (v3) {
    std::stable_sort(entries.begin(), entries.end(), [](const PeakEntry& a, const PeakEntry& b) {
      if (a.bytes != b.bytes) return a.bytes > b.bytes;
      if (a.name != b.name) return a.name < b.name;
      return a.index < b.index;
    });
  }
  out->Put("  Live ranges at ");
  out->PutInt(peak.time);
  out->Put(" (peak):\n");
  int64_t cumulative = 0;
  for (const PeakEntry& e : entries) {
    cumulative += e.bytes;
    line.assign("    ");
    line.append(e.name);
    if (v3) AppendShapeIndex(e.index, &line);
    line.append(": ");
    AppendInt(e.bytes, &line);
    line.append(" bytes");
    if (v3) {
      line.append(" (cumulative: ");
      AppendInt(cumulative, &line);
      line.append(" bytes)");
    }
    line.push_back('\n');
    out->Put(line);
  }
}

// ---------------------------------------------------------------------------------------------------
// Memory-usage report V1 (§5.1, §5.3).

struct OffsetRow {
  int64_t offset = 0;
  int64_t size = 0;        // the largest value at this offset
  int64_t first_id = 0;    // tie-break: the smallest value id
  std::map<std::string, int64_t> shapes;  // shape without layout -> values
  int64_t values = 0;
};

constexpr int64_t kMoreThanK = 50;
constexpr float kPercentile = 0.05f;

// BufferAllocation::MemoryUsageReport("\t", 0.05, 50): one row per distinct offset, largest first.
void AppendAllocationTable(const SyntheticProgram& program, const Allocation& a, std::string* out) {
  std::map<int64_t, OffsetRow> by_offset;
  program.ForEachValueInAllocation(a, [&](const Value& v) {
    OffsetRow& row = by_offset[v.offset];
    if (row.values == 0) row.first_id = v.id;
    row.offset = v.offset;
    row.size = std::max(row.size, v.size);
    ++row.values;
    std::string shape;
    if (v.array) AppendShape(*v.array, program.backend(), false, &shape);
    else AppendShape(*v.defining_shape, program.backend(), false, &shape);
    ++row.shapes[shape];
  });
  std::vector<OffsetRow> rows;
  int64_t total = 0;
  for (auto& [offset, row] : by_offset) {
    total += row.size;
    rows.push_back(std::move(row));
  }
  std::stable_sort(rows.begin(), rows.end(), [](const OffsetRow& x, const OffsetRow& y) {
    if (x.size != y.size) return x.size > y.size;
    return x.first_id < y.first_id;
  });
  out->append("\tcumulative_size;       size;       offset; used_by_n_values; shapes_list\n");
  out->append("\t------------------------------------------------------------\n");
  int64_t cumulative = 0;
  int64_t index = 0;
  char buf[160];
  for (const OffsetRow& row : rows) {
    cumulative += row.size;
    std::snprintf(buf, sizeof buf, "\t%9s(%3.0f%%); %10s; %12" PRId64 "; %16" PRId64 "; ",
                  HumanReadableNumBytes(cumulative).c_str(), 100. * static_cast<double>(cumulative) / total,
                  HumanReadableNumBytes(row.size).c_str(), row.offset, row.values);
    out->append(buf);
    std::vector<std::pair<int64_t, std::string>> shapes;
    for (const auto& [shape, count] : row.shapes) shapes.emplace_back(count, shape);
    std::sort(shapes.begin(), shapes.end());
    for (size_t i = 0; i < shapes.size(); ++i) {
      if (i > 0) out->append(", ");
      if (shapes[i].first > 1) {
        AppendInt(shapes[i].first, out);
        out->append("\xC3\x97");  // U+00D7 MULTIPLICATION SIGN
      }
      out->append(shapes[i].second);
    }
    out->push_back('\n');
    if (++index > kMoreThanK && total - cumulative < total * kPercentile) {
      std::snprintf(buf, sizeof buf, "\tThe rest %zu values are less than %d%% of the total size and not shown.\n",
                    rows.size() - static_cast<size_t>(index), static_cast<int>(kPercentile * 100));
      out->append(buf);
      break;
    }
  }
}

// ---------------------------------------------------------------------------------------------------
// HLO module text (§7).

void AppendSignature(const SyntheticProgram& program, const std::string& name, const std::vector<std::string>& params,
                     const std::vector<const Shape*>& shapes, const Shape& result, bool entry, std::string* out) {
  if (entry) out->append("ENTRY ");
  out->push_back('%');
  out->append(name);
  out->append(" (");
  for (size_t i = 0; i < params.size(); ++i) {
    if (i > 0) out->append(", ");
    out->append(params[i]);
    out->append(": ");
    AppendShape(*shapes[i], program.backend(), false, out);
  }
  out->append(") -> ");
  AppendShape(result, program.backend(), false, out);
  out->append(" {\n");
}

// `%<name> = <shape> <opcode>(<operands>)` for instructions inside fused computations and regions.
void AppendBodyInstruction(const SyntheticProgram& program, bool root, const std::string& name, const Shape& shape,
                           std::string_view opcode, const std::vector<std::pair<std::string, const Shape*>>& operands,
                           std::string_view attributes, std::string* out) {
  out->append(root ? "  ROOT %" : "  %");
  out->append(name);
  out->append(" = ");
  AppendShape(shape, program.backend(), true, out);
  out->push_back(' ');
  out->append(opcode);
  out->push_back('(');
  for (size_t k = 0; k < operands.size(); ++k) {
    if (k > 0) out->append(", ");
    if (OperandShapesPrinted(program.backend()) && operands[k].second) {
      AppendShape(*operands[k].second, program.backend(), true, out);
      out->push_back(' ');
    }
    if (operands[k].second) out->push_back('%');
    out->append(operands[k].first);
  }
  out->push_back(')');
  out->append(attributes);
  out->push_back('\n');
}

void WriteRegion(const SyntheticProgram& program, int region, TextWriter* out) {
  std::string text;
  std::vector<std::string> names;
  std::vector<const Shape*> shapes;
  for (int i = 0; i < 2; ++i) {
    InstructionRef p{Segment::kRegion, 3 * region + i, 0};
    names.push_back(program.Name(p));
    shapes.push_back(&program.Op(p).shape);
  }
  const InstructionRef combiner{Segment::kRegion, 3 * region + 2, 0};
  AppendSignature(program, program.RegionName(region), names, shapes, program.Op(combiner).shape, false, &text);
  for (int i = 0; i < 3; ++i) {
    InstructionRef ref{Segment::kRegion, 3 * region + i, 0};
    text.append(i == 2 ? "  ROOT " : "  ");
    AppendInstructionText(program, ref, &text);
    text.push_back('\n');
  }
  text.append("}\n\n");
  out->Put(text);
}

// The computation a fusion calls: its parameters, a chain of the fusion's root opcode over them (a reduce
// applying the region for reduce fusions), ROOT the last (a tuple for multi-output fusions).
void WriteFusedComputation(const SyntheticProgram& program, const InstructionRef& fusion, std::string* text) {
  const OpTemplate& op = program.Op(fusion);
  const std::string uid = std::to_string(program.Slot(fusion) + 1);
  std::vector<std::string> params;
  std::vector<const Shape*> shapes;
  for (size_t k = 0; k < op.operands.size(); ++k) {
    params.push_back("param_" + std::to_string(k) + "." + uid);
    shapes.push_back(&program.Op(program.Resolve(fusion, op.operands[k])).shape);
  }
  AppendSignature(program, program.FusedComputationName(fusion), params, shapes, op.shape, false, text);
  for (size_t k = 0; k < params.size(); ++k) {
    std::vector<std::pair<std::string, const Shape*>> literal{{std::to_string(k), nullptr}};
    AppendBodyInstruction(program, false, params[k], *shapes[k], "parameter", literal, "", text);
  }
  // Every parameter is read: the first is combined with each of the others in turn (multiply before a
  // reduce, the fusion's own opcode otherwise), so the body is a chain ending in the result.
  const bool reduce = op.region >= 0;
  const std::string chain_opcode = reduce ? "multiply" : op.fused_root_opcode;
  std::string attributes;
  if (chain_opcode == "convolution") attributes = ", dim_labels=bf_io->bf";
  if (chain_opcode == "dot") attributes = ", lhs_contracting_dims={1}, rhs_contracting_dims={1}";
  std::vector<std::string> results;
  for (size_t e = 0; e < op.shape.elements.size(); ++e) {
    const Shape element = ArrayOf(op.shape.elements[e]);
    const std::string prefix = chain_opcode + "." + uid + "." + std::to_string(e);
    std::pair<std::string, const Shape*> acc{params[0], shapes[0]};
    const size_t steps = std::max<size_t>(params.size() - 1, reduce ? 0 : 1);
    for (size_t k = 1; k <= steps; ++k) {
      const bool last = k == steps && !reduce;
      const std::string name = steps == 1 ? prefix : prefix + "." + std::to_string(k);
      std::vector<std::pair<std::string, const Shape*>> operands{acc};
      if (k < params.size()) operands.emplace_back(params[k], shapes[k]);
      AppendBodyInstruction(program, last && !op.shape.is_tuple, name, last ? element : *shapes[0], chain_opcode,
                            operands, attributes, text);
      acc = {name, shapes[0]};
    }
    if (reduce) {
      static const Shape kScalar = ArrayOf(MakeArray(ElementType::kF32, {}));
      const std::string init = "constant." + uid + "." + std::to_string(e);
      const std::string name = "reduce." + uid + "." + std::to_string(e);
      AppendBodyInstruction(program, false, init, kScalar, "constant", {{"0", nullptr}}, "", text);
      AppendBodyInstruction(program, !op.shape.is_tuple, name, element, "reduce", {acc, {init, &kScalar}},
                            ", dimensions={" + std::to_string(std::max(0, shapes[0]->array().rank - 1)) +
                                "}, to_apply=%" + program.RegionName(op.region),
                            text);
      acc.first = name;
    }
    results.push_back(acc.first);
  }
  if (op.shape.is_tuple) {
    std::vector<std::pair<std::string, const Shape*>> operands;
    std::vector<Shape> element_shapes;
    element_shapes.reserve(op.shape.elements.size());
    for (size_t e = 0; e < results.size(); ++e) element_shapes.push_back(ArrayOf(op.shape.elements[e]));
    for (size_t e = 0; e < results.size(); ++e) operands.emplace_back(results[e], &element_shapes[e]);
    AppendBodyInstruction(program, true, "tuple." + uid, op.shape, "tuple", operands, "", text);
  }
  text->append("}\n\n");
}

// ---------------------------------------------------------------------------------------------------
// TPU bundle profile (§8).

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

// ---------------------------------------------------------------------------------------------------

std::string HumanReadableNumBytes(int64_t bytes) {
  const char* sign = bytes < 0 ? "-" : "";
  uint64_t n = bytes < 0 ? 0 - static_cast<uint64_t>(bytes) : static_cast<uint64_t>(bytes);
  char buf[32];
  if (n < 1024) {
    std::snprintf(buf, sizeof buf, "%s%" PRIu64 "B", sign, n);
    return buf;
  }
  static constexpr char kUnits[] = "KMGTPE";
  const char* unit = kUnits;
  while (n >= 1024ULL * 1024ULL) {
    n /= 1024;
    ++unit;
  }
  std::snprintf(buf, sizeof buf, *unit == 'K' ? "%s%.1f%ciB" : "%s%.2f%ciB", sign, static_cast<double>(n) / 1024.0,
                *unit);
  return buf;
}

void AppendShape(const ArrayShape& a, Backend backend, bool with_layout, std::string* out) {
  out->append(ElementTypeName(a.type));
  out->push_back('[');
  for (int i = 0; i < a.rank; ++i) {
    if (i > 0) out->push_back(',');
    AppendInt(a.dims[static_cast<size_t>(i)], out);
  }
  out->push_back(']');
  if (!with_layout) return;
  std::string attributes;
  if (backend == Backend::kTpu) {
    attributes.append(TilingFor(a).text);
    if (a.memory_space != 0) attributes.append("S(" + std::to_string(a.memory_space) + ")");
  }
  if (a.rank == 0 && attributes.empty()) return;  // scalars omit an empty layout
  out->push_back('{');
  for (int i = a.rank - 1; i >= 0; --i) {
    AppendInt(i, out);
    if (i > 0) out->push_back(',');
  }
  if (!attributes.empty()) {
    out->push_back(':');
    out->append(attributes);
  }
  out->push_back('}');
}

void AppendShape(const Shape& shape, Backend backend, bool with_layout, std::string* out) {
  if (!shape.is_tuple) {
    AppendShape(shape.array(), backend, with_layout, out);
    return;
  }
  out->push_back('(');
  for (size_t i = 0; i < shape.elements.size(); ++i) {
    if (i > 0) out->append(", ");
    if (i > 0 && i % 5 == 0) {
      out->append("/*index=");
      AppendInt(static_cast<int64_t>(i), out);
      out->append("*/");
    }
    AppendShape(shape.elements[i], backend, with_layout, out);
  }
  out->push_back(')');
}

void AppendInstructionText(const SyntheticProgram& program, const InstructionRef& ref, std::string* out) {
  const OpTemplate& op = program.Op(ref);
  out->push_back('%');
  out->append(program.Name(ref));
  out->append(" = ");
  AppendShape(op.shape, program.backend(), true, out);
  out->push_back(' ');
  out->append(op.opcode);
  out->push_back('(');
  AppendOperandList(program, ref, out);
  out->push_back(')');
  AppendAttributes(program, ref, out);
}

void WriteBufferAssignment(const SyntheticProgram& program, TextWriter* out) {
  std::string line;
  out->Put("BufferAssignment:\n");
  for (const Allocation& a : program.allocations()) {
    line.clear();
    AppendAllocationHeader(program, a, false, &line);
    out->Put(line);
    program.ForEachValueInAllocation(a, [&](const Value& v) {
      line.clear();
      AppendAllocatedValueLine(program, v, &line);
      out->Put(line);
    });
  }
  const int64_t total = program.TotalAllocationBytes();
  out->Put("\nTotal bytes used: ");
  out->PutInt(total);
  out->Put(" (");
  out->Put(HumanReadableNumBytes(total));
  out->Put(")\n\nUsed values:\n");
  ValueBlockPrinter blocks(program);
  program.ForEachValue([&](const Value& v) { blocks.Print(v, out); });
  out->Put("\n\n");
  WriteLiveRange(program, out);
}

void WriteMemoryUsageReport(const SyntheticProgram& program, TextWriter* out) {
  const int64_t total = program.TotalAllocationBytes();
  std::string text = "Total bytes used: " + std::to_string(total) + " (" + HumanReadableNumBytes(total) + ")\n";
  text.append("\nAllocations sorted by size:\n\n");
  text.append("cumulative_size; total_size - cumulative_size; allocation\n");
  text.append(78, '-');
  text.push_back('\n');
  std::vector<const Allocation*> sorted;
  for (const Allocation& a : program.allocations()) sorted.push_back(&a);
  std::stable_sort(sorted.begin(), sorted.end(), [](const Allocation* x, const Allocation* y) {
    if (x->size != y->size) return x->size > y->size;
    return x->index < y->index;
  });
  int64_t cumulative = 0;
  int64_t index = 0;
  char buf[200];
  for (const Allocation* a : sorted) {
    cumulative += a->size;
    std::snprintf(buf, sizeof buf, "%10s(%3.0f%%); %10s; ", HumanReadableNumBytes(cumulative).c_str(),
                  100. * static_cast<double>(cumulative) / static_cast<double>(total),
                  HumanReadableNumBytes(total - cumulative).c_str());
    text.append(buf);
    AppendAllocationHeader(program, *a, true, &text);
    if (++index > kMoreThanK && total - cumulative < total * kPercentile) {
      std::snprintf(buf, sizeof buf, "The rest %zu allocations are less than %d%% of the total size and not shown.\n",
                    sorted.size() - static_cast<size_t>(index), static_cast<int>(kPercentile * 100));
      text.append(buf);
      break;
    }
  }
  text.append("\n\nAllocations sorted by size with their values:\n");
  out->Put(text);
  for (const Allocation* a : sorted) {
    text.clear();
    AppendAllocationHeader(program, *a, true, &text);
    int64_t values = 0;
    program.ForEachValueInAllocation(*a, [&](const Value&) { ++values; });
    if (values != 1) {
      text.push_back('\n');
      AppendAllocationTable(program, *a, &text);
      text.push_back('\n');
    }
    out->Put(text);
  }
}

void WriteHloModuleText(const SyntheticProgram& program, TextWriter* out) {
  const Backend backend = program.backend();
  std::string text = "HloModule " + program.spec().module_name + ", is_scheduled=true, entry_computation_layout={(";
  const int64_t P = program.parameter_count();
  for (int64_t p = 0; p < P; ++p) {
    if (p > 0) text.append(", ");
    AppendShape(program.Op({Segment::kParameter, static_cast<int32_t>(p), 0}).shape, backend, true, &text);
  }
  text.append(")->");
  const InstructionRef root{Segment::kRoot, 0, 0};
  AppendShape(program.Op(root).shape, backend, true, &text);
  text.append("}");
  if (backend == Backend::kTpu) {
    text.append(", allow_spmd_sharding_propagation_to_parameters={");
    for (int64_t p = 0; p < P; ++p) text.append(p > 0 ? ",true" : "true");
    text.append("}, allow_spmd_sharding_propagation_to_output={true}");
  }
  text.append("\n\n");
  out->Put(text);

  for (int r = 0; r < program.region_count(); ++r) WriteRegion(program, r, out);
  const int64_t T = program.schedule_length();
  for (int64_t slot = 0; slot < T; ++slot) {
    const InstructionRef ref = program.AtSlot(slot);
    const OpTemplate& op = program.Op(ref);
    if (op.kind != OpKind::kFusion || op.fusion_kind.empty()) continue;
    text.clear();
    WriteFusedComputation(program, ref, &text);
    out->Put(text);
  }

  std::vector<std::string> names;
  std::vector<const Shape*> shapes;
  for (int64_t p = 0; p < P; ++p) {
    const InstructionRef ref{Segment::kParameter, static_cast<int32_t>(p), 0};
    names.push_back(program.Name(ref));
    shapes.push_back(&program.Op(ref).shape);
  }
  text.clear();
  AppendSignature(program, program.EntryName(), names, shapes, program.Op(root).shape, true, &text);
  out->Put(text);
  for (int64_t slot = 0; slot < T; ++slot) {
    const InstructionRef ref = program.AtSlot(slot);
    text.assign(ref.segment == Segment::kRoot ? "  ROOT " : "  ");
    AppendInstructionText(program, ref, &text);
    text.push_back('\n');
    out->Put(text);
  }
  out->Put("}\n\n");
}

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

std::string ModuleDumpFileName(int64_t module_id, std::string_view module_name, Backend backend,
                               std::string_view suffix) {
  char id[32];
  std::snprintf(id, sizeof id, "module_%04" PRId64 ".", module_id);
  std::string name = id;
  name.append(module_name);
  name.append(backend == Backend::kTpu ? ".after_optimizations" : ".sm_8.0_gpu_after_optimizations");
  name.append(suffix);
  return name;
}

std::string BundleProfileFileName(int64_t timestamp_ns, std::string_view unit) {
  return std::to_string(timestamp_ns) + "-" + std::string(unit) + "-82-hlo-static-bundle-profile.txt";
}

}  // namespace xladb::bench
