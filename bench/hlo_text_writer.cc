// DumpWriter's HLO module text (dump_writer.h: WriteHloModuleText, HloModule::ToString, §7): the ENTRY
// computation, the fused computations and the reducer regions of a SyntheticProgram.
#include "bench/dump_writer.h"

#include <algorithm>
#include <cinttypes>
#include <cstdint>
#include <cstdio>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace xladb::bench {
namespace {

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

}  // namespace

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

}  // namespace xladb::bench
