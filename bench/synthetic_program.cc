#include "bench/synthetic_program.h"

#include <algorithm>
#include <limits>
#include <utility>

#include "bench/deterministic_rng.h"
#include "bench/layer_templates.h"

namespace xladb::bench {
namespace {

constexpr int64_t kMaxWeightSets = 48;  // layers beyond this reuse weight sets (unrolled repeats)
constexpr int64_t kRingFrames = 3;    // temp allocations hold three layer frames
constexpr int64_t kNoEnd = std::numeric_limits<int64_t>::max();

std::string FunctionName(const std::string& module_name) {
  std::string_view n = module_name;
  if (n.substr(0, 4) == "jit_") n.remove_prefix(4);
  return std::string(n);
}

}  // namespace

// ---------------------------------------------------------------------------------------------------
// Construction.

SyntheticProgram::SyntheticProgram(const ProgramSpec& spec) : spec_(spec) {
  spec_.layers = std::max<int64_t>(1, spec_.layers);
  spec_.batch = std::max<int64_t>(1, spec_.batch);
  spec_.seq = std::max<int64_t>(8, spec_.seq);
  spec_.hidden = std::max<int64_t>(128, spec_.hidden);
  weight_sets_ = std::min(spec_.layers, kMaxWeightSets);
  BuildTemplates();
  BuildLayerValues();
  PackTempFrames();
  BuildAllocations();
}

void SyntheticProgram::BuildTemplates() {
  const std::string source_file =
      "/home/ci/venv/lib/python3.12/site-packages/" + FunctionName(spec_.module_name) + "/model.py";
  LayerTemplates layer = BuildLayerTemplates(spec_, source_file);
  layer_ops_ = std::move(layer.ops);
  layer_params_ = std::move(layer.weights);
  constants_ = std::move(layer.constants);
  region_ops_ = std::move(layer.regions);
  region_count_ = static_cast<int>(region_ops_.size() / 3);

  // Global parameters: the input activations (shaped like a layer output), an embedding table, a norm scale.
  const ArrayShape act = layer_ops_.back().shape.array();
  const bool tpu = spec_.backend == Backend::kTpu;
  const ArrayShape embed = MakeArray(ElementType::kBf16, {tpu ? 32000 : 151936, spec_.hidden});
  const ArrayShape norm = MakeArray(tpu ? ElementType::kF32 : ElementType::kBf16, {spec_.hidden});
  const char* labels[kGlobalParams] = {"x", "params['embed']['embedding']", "params['final_norm']['scale']"};
  const ArrayShape shapes[kGlobalParams] = {act, embed, norm};
  for (int g = 0; g < kGlobalParams; ++g) {
    global_params_.push_back(EntryParameter(shapes[g], labels[g], spec_.backend));
  }

  // Epilogue: the loss and the updated embedding and norm scale, all live-out.
  auto epilogue_op = [&](std::string stem, std::string kind, ArrayShape shape, int global, std::string root,
                         std::string op_name) {
    OpTemplate op = MakeOp(OpKind::kFusion, std::move(stem), "fusion", ArrayOf(shape));
    op.operands = {{OperandSource::kFinalOutput, 0}, {OperandSource::kGlobalParam, global}};
    op.fusion_kind = std::move(kind);
    op.fused_root_opcode = std::move(root);
    op.op_name = std::move(op_name);
    op.is_kernel = true;
    if (tpu) {
      op.source_file = source_file;
      op.source_line = 311 + static_cast<int>(epilogue_ops_.size());
    } else {
      op.op_type = op.op_name;
      op.source_file = "/usr/local/lib/python3.10/site-packages/torch/_ops.py";
      op.source_line = 756;
    }
    epilogue_ops_.push_back(std::move(op));
  };
  const std::string loop_stem = tpu ? "fusion" : "loop_add_fusion";
  epilogue_op(tpu ? "fusion" : "input_reduce_fusion", "kInput", MakeArray(ElementType::kF32, {}), 1, "multiply",
              tpu ? "loss/reduce_sum" : "aten__sum");
  epilogue_op(loop_stem, "kLoop", embed, 1, "subtract", tpu ? "optimizer/sub" : "aten__sub");
  epilogue_op(loop_stem, "kLoop", norm, 2, "subtract", tpu ? "optimizer/sub" : "aten__sub");

  std::vector<ArrayShape> outputs;
  root_.kind = OpKind::kTuple;
  root_.stem = "tuple";
  root_.opcode = "tuple";
  for (size_t k = 0; k < epilogue_ops_.size(); ++k) {
    outputs.push_back(epilogue_ops_[k].shape.array());
    root_.operands.push_back({OperandSource::kEpilogueOp, static_cast<int32_t>(k)});
  }
  root_.shape = TupleOf(outputs);

  // Who reads what, inside one layer.
  consumers_.assign(layer_ops_.size(), {});
  layer_param_readers_.assign(layer_params_.size(), {});
  constant_readers_.assign(constants_.size(), {});
  for (size_t j = 0; j < layer_ops_.size(); ++j) {
    const auto& operands = layer_ops_[j].operands;
    for (size_t k = 0; k < operands.size(); ++k) {
      Consumer c{static_cast<int>(j), static_cast<int>(k)};
      const OperandRef& o = operands[k];
      switch (o.source) {
        case OperandSource::kLocal: consumers_[static_cast<size_t>(o.index)].push_back(c); break;
        case OperandSource::kLayerInput: layer_input_readers_.push_back(c); break;
        case OperandSource::kLayerParam: layer_param_readers_[static_cast<size_t>(o.index)].push_back(c); break;
        case OperandSource::kConstant: constant_readers_[static_cast<size_t>(o.index)].push_back(c); break;
        default: break;
      }
    }
  }
}

void SyntheticProgram::BuildLayerValues() {
  DeterministicRng rng(HashMix(spec_.structure_seed, 77));
  const int last = static_cast<int>(layer_ops_.size()) - 1;
  int64_t next_id = 0;
  auto add = [&](int op, int index, const ArrayShape* array, int64_t size, int end_rel) {
    TemplateValue v;
    v.op = op;
    v.index = index;
    v.id_offset = next_id++;
    v.color = array ? array->memory_space : 0;
    v.size = size;
    v.end_rel = std::max(op, end_rel);
    v.ends_next_layer = op == last && index == kNoIndex;
    layer_values_.push_back(v);
  };
  // Last reader of op j's array value, and of the array a get-tuple-element / copy-done forwards.
  auto last_reader = [&](int j) {
    int end = j;
    for (const Consumer& c : consumers_[static_cast<size_t>(j)]) end = std::max(end, c.op);
    return end;
  };
  for (int j = 0; j <= last; ++j) {
    const OpTemplate& op = layer_ops_[static_cast<size_t>(j)];
    const Backend be = spec_.backend;
    switch (op.kind) {
      case OpKind::kFusion:
      case OpKind::kCustomCall:
        if (!op.shape.is_tuple) {
          add(j, kNoIndex, &op.shape.array(), PhysicalBytes(op.shape.array(), be), last_reader(j));
          break;
        }
        [[fallthrough]];
      case OpKind::kCopyStart: {
        const int64_t n = static_cast<int64_t>(op.shape.elements.size());
        add(j, kTupleTable, nullptr, TupleTableBytes(n, be), last_reader(j));
        for (int e = 0; e < static_cast<int>(n); ++e) {
          if (op.kind == OpKind::kCopyStart && e == 1) continue;  // aliases the copied operand
          int end = j;
          for (const Consumer& c : consumers_[static_cast<size_t>(j)]) {
            const OpTemplate& reader = layer_ops_[static_cast<size_t>(c.op)];
            const bool forwards = (reader.kind == OpKind::kGetTupleElement && reader.tuple_index == e) ||
                                  (reader.kind == OpKind::kCopyDone && e == 0);
            if (forwards) end = std::max(end, last_reader(c.op));
            if (reader.kind == OpKind::kCopyDone) end = std::max(end, c.op);
          }
          add(j, e, &op.shape.elements[static_cast<size_t>(e)],
              PhysicalBytes(op.shape.elements[static_cast<size_t>(e)], be), end);
        }
        break;
      }
      default: break;  // get-tuple-element and copy-done define no value
    }
    if (rng.Percent(25)) ++next_id;  // ids of values that got no allocation (fusion internals)
  }
  layer_id_stride_ = next_id + 1;
}

// First-fit of each colour's layer values over their live intervals: values whose intervals overlap never
// share bytes; the others may (heap-simulated reuse, §2.3: offsets overlap by design in temp allocations).
void SyntheticProgram::PackTempFrames() {
  const int64_t align_for_color[3] = {spec_.backend == Backend::kTpu ? 512 : 128, 512, 4};
  struct Placed {
    int64_t start, end, offset, size;
  };
  std::array<std::vector<Placed>, 3> placed;
  for (TemplateValue& v : layer_values_) {
    const int color = std::clamp(v.color, 0, 2);
    const int64_t align = align_for_color[color];
    const int64_t start = v.op;
    const int64_t end = v.ends_next_layer ? kNoEnd : v.end_rel;
    std::vector<std::pair<int64_t, int64_t>> busy;  // byte ranges of live-overlapping values
    for (const Placed& p : placed[static_cast<size_t>(color)]) {
      if (p.start <= end && start <= p.end) busy.emplace_back(p.offset, p.offset + p.size);
    }
    std::sort(busy.begin(), busy.end());
    int64_t offset = 0;
    for (const auto& [lo, hi] : busy) {
      if (offset + v.size <= lo) break;
      offset = std::max(offset, RoundUp(hi, align));
    }
    v.frame_offset = offset;
    placed[static_cast<size_t>(color)].push_back({start, end, offset, v.size});
    frame_bytes_[static_cast<size_t>(color)] =
        std::max(frame_bytes_[static_cast<size_t>(color)], RoundUp(offset + v.size, align));
  }
  ring_frames_ = std::min(spec_.layers, kRingFrames);
}

void SyntheticProgram::BuildAllocations() {
  const int64_t P = parameter_count();
  const int64_t C = static_cast<int64_t>(constants_.size());
  const int64_t E = static_cast<int64_t>(epilogue_ops_.size());
  const int64_t S = static_cast<int64_t>(layer_ops_.size());
  schedule_length_ = P + C + spec_.layers * S + E + 1;
  first_param_id_ = 3 * region_count_ + 2;
  first_constant_id_ = first_param_id_ + P;
  first_layer_id_ = first_constant_id_ + C + 1;
  first_epilogue_id_ = first_layer_id_ + spec_.layers * layer_id_stride_;

  auto add = [&](AllocationKind kind, int64_t size, int color, int32_t member) {
    Allocation a;
    a.index = static_cast<int64_t>(allocations_.size());
    a.kind = kind;
    a.size = size;
    a.color = color;
    a.member = member;
    allocations_.push_back(a);
  };
  first_param_allocation_ = 0;
  for (int64_t p = 0; p < P; ++p) {
    add(AllocationKind::kParameter, PhysicalBytes(ParameterArray(p), spec_.backend), 0, static_cast<int32_t>(p));
  }
  first_constant_allocation_ = static_cast<int64_t>(allocations_.size());
  for (int64_t c = 0; c < C; ++c) {
    add(AllocationKind::kConstant, PhysicalBytes(constants_[static_cast<size_t>(c)].shape.array(), spec_.backend),
        0, static_cast<int32_t>(c));
  }
  first_output_allocation_ = static_cast<int64_t>(allocations_.size());
  for (int64_t k = 0; k < E; ++k) {
    add(AllocationKind::kOutput, PhysicalBytes(epilogue_ops_[static_cast<size_t>(k)].shape.array(), spec_.backend),
        0, static_cast<int32_t>(k));
  }
  root_allocation_ = static_cast<int64_t>(allocations_.size());
  add(AllocationKind::kRootTuple, TupleTableBytes(E, spec_.backend), 0, 0);
  for (int i = 0; i < 3 * region_count_; ++i) {
    add(AllocationKind::kThreadLocal, PhysicalBytes(region_ops_[static_cast<size_t>(i)].shape.array(), spec_.backend),
        0, i);
  }
  temp_allocation_.fill(-1);
  for (int color = 0; color < 3; ++color) {
    if (frame_bytes_[static_cast<size_t>(color)] == 0) continue;
    temp_allocation_[static_cast<size_t>(color)] = static_cast<int64_t>(allocations_.size());
    add(AllocationKind::kTemp, ring_frames_ * frame_bytes_[static_cast<size_t>(color)], color, 0);
  }
}

// ---------------------------------------------------------------------------------------------------
// Instructions.

int64_t SyntheticProgram::parameter_count() const {
  return kGlobalParams + weight_sets_ * static_cast<int64_t>(layer_params_.size());
}

int64_t SyntheticProgram::value_count() const {
  return 3 * region_count_ + parameter_count() + static_cast<int64_t>(constants_.size()) +
         spec_.layers * static_cast<int64_t>(layer_values_.size()) + static_cast<int64_t>(epilogue_ops_.size()) + 1;
}

int64_t SyntheticProgram::TotalAllocationBytes() const {
  int64_t total = 0;
  for (const Allocation& a : allocations_) total += a.size;
  return total;
}

const ArrayShape& SyntheticProgram::ParameterArray(int64_t param) const {
  if (param < kGlobalParams) return global_params_[static_cast<size_t>(param)].shape.array();
  const int64_t q = (param - kGlobalParams) % static_cast<int64_t>(layer_params_.size());
  return layer_params_[static_cast<size_t>(q)].shape.array();
}

const OpTemplate& SyntheticProgram::Op(const InstructionRef& ref) const {
  switch (ref.segment) {
    case Segment::kRegion: return region_ops_[static_cast<size_t>(ref.index)];
    case Segment::kParameter:
      if (ref.index < kGlobalParams) return global_params_[static_cast<size_t>(ref.index)];
      return layer_params_[static_cast<size_t>((ref.index - kGlobalParams) %
                                               static_cast<int64_t>(layer_params_.size()))];
    case Segment::kConstant: return constants_[static_cast<size_t>(ref.index)];
    case Segment::kLayer: return layer_ops_[static_cast<size_t>(ref.index)];
    case Segment::kEpilogue: return epilogue_ops_[static_cast<size_t>(ref.index)];
    case Segment::kRoot: return root_;
  }
  return root_;
}

int64_t SyntheticProgram::LayerSlotBase(int64_t layer) const {
  return parameter_count() + static_cast<int64_t>(constants_.size()) +
         layer * static_cast<int64_t>(layer_ops_.size());
}

int64_t SyntheticProgram::Slot(const InstructionRef& ref) const {
  switch (ref.segment) {
    case Segment::kRegion: return -1;
    case Segment::kParameter: return ref.index;
    case Segment::kConstant: return parameter_count() + ref.index;
    case Segment::kLayer: return LayerSlotBase(ref.layer) + ref.index;
    case Segment::kEpilogue: return LayerSlotBase(spec_.layers) + ref.index;
    case Segment::kRoot: return LayerSlotBase(spec_.layers) + static_cast<int64_t>(epilogue_ops_.size());
  }
  return -1;
}

InstructionRef SyntheticProgram::AtSlot(int64_t slot) const {
  const int64_t P = parameter_count();
  const int64_t C = static_cast<int64_t>(constants_.size());
  const int64_t S = static_cast<int64_t>(layer_ops_.size());
  if (slot < P) return {Segment::kParameter, static_cast<int32_t>(slot), 0};
  if (slot < P + C) return {Segment::kConstant, static_cast<int32_t>(slot - P), 0};
  const int64_t in_layers = slot - P - C;
  if (in_layers < spec_.layers * S) return {Segment::kLayer, static_cast<int32_t>(in_layers % S), in_layers / S};
  const int64_t k = in_layers - spec_.layers * S;
  if (k < static_cast<int64_t>(epilogue_ops_.size())) return {Segment::kEpilogue, static_cast<int32_t>(k), 0};
  return {Segment::kRoot, 0, 0};
}

std::string SyntheticProgram::Name(const InstructionRef& ref) const {
  if (ref.segment == Segment::kRegion) {
    return region_ops_[static_cast<size_t>(ref.index)].stem + "." + std::to_string(schedule_length_ + 1 + ref.index);
  }
  const int64_t uid = Slot(ref) + 1;
  if (ref.segment == Segment::kParameter) {
    if (spec_.backend == Backend::kGpu) return "p" + std::to_string(ref.index) + "." + std::to_string(uid) + ".0";
    return "Arg_" + std::to_string(ref.index) + "." + std::to_string(uid);
  }
  return Op(ref).stem + "." + std::to_string(uid);
}

std::string SyntheticProgram::FusedComputationName(const InstructionRef& fusion) const {
  return "fused_computation." + std::to_string(Slot(fusion) + 1);
}

std::string SyntheticProgram::RegionName(int region) const {
  return "region_" + std::to_string(region) + "." + std::to_string(schedule_length_ + 1 + 3 * region_count_ + region);
}

std::string SyntheticProgram::EntryName() const {
  return "main." + std::to_string(schedule_length_ + 1 + 4 * region_count_);
}

InstructionRef SyntheticProgram::Resolve(const InstructionRef& user, const OperandRef& operand) const {
  const int32_t last = static_cast<int32_t>(layer_ops_.size()) - 1;
  switch (operand.source) {
    case OperandSource::kLocal: return {Segment::kLayer, operand.index, user.layer};
    case OperandSource::kLayerInput:
      if (user.layer == 0) return {Segment::kParameter, 0, 0};
      return {Segment::kLayer, last, user.layer - 1};
    case OperandSource::kLayerParam: {
      const int64_t q = static_cast<int64_t>(layer_params_.size());
      return {Segment::kParameter, static_cast<int32_t>(kGlobalParams + (user.layer % weight_sets_) * q + operand.index), 0};
    }
    case OperandSource::kConstant: return {Segment::kConstant, operand.index, 0};
    case OperandSource::kGlobalParam: return {Segment::kParameter, operand.index, 0};
    case OperandSource::kFinalOutput: return {Segment::kLayer, last, spec_.layers - 1};
    case OperandSource::kEpilogueOp: return {Segment::kEpilogue, operand.index, 0};
    case OperandSource::kRegionParam: return {Segment::kRegion, user.index / 3 * 3 + operand.index, 0};
  }
  return user;
}

std::string SyntheticProgram::OpName(const InstructionRef& ref) const {
  const OpTemplate& op = Op(ref);
  if (op.op_name.empty() || spec_.backend == Backend::kGpu) return op.op_name;
  const std::string scope = "jit(" + FunctionName(spec_.module_name) + ")/jit(main)";
  switch (ref.segment) {
    case Segment::kParameter:
      if (ref.index < kGlobalParams) return op.op_name;
      return "params['layers_" + std::to_string((ref.index - kGlobalParams) / static_cast<int64_t>(layer_params_.size())) +
             "']['" + op.op_name + "']";
    case Segment::kLayer: return scope + "/transformer/layer_" + std::to_string(ref.layer) + "/" + op.op_name;
    case Segment::kRegion: return scope + "/transformer/" + op.op_name;
    default: return scope + "/" + op.op_name;
  }
}

}  // namespace xladb::bench
