// A SyntheticProgram's values, one at a time: their positions, uses and live ranges, and the peak of their
// live bytes (synthetic_program.h).
#include "bench/synthetic_program.h"

#include <algorithm>
#include <utility>

namespace xladb::bench {

int64_t SyntheticProgram::LayerInputEnd(int64_t layer) const {
  if (layer < spec_.layers) {
    int end = 0;
    for (const Consumer& c : layer_input_readers_) end = std::max(end, c.op);
    return LayerSlotBase(layer) + end;
  }
  int64_t end = LayerSlotBase(spec_.layers);
  for (size_t k = 0; k < epilogue_ops_.size(); ++k) {
    for (const OperandRef& o : epilogue_ops_[k].operands) {
      if (o.source == OperandSource::kFinalOutput) end = std::max(end, LayerSlotBase(spec_.layers) + static_cast<int64_t>(k));
    }
  }
  return end;
}

Value SyntheticProgram::MakeLayerValue(int64_t layer, const TemplateValue& tv) const {
  const OpTemplate& op = layer_ops_[static_cast<size_t>(tv.op)];
  Value v;
  v.id = first_layer_id_ + layer * layer_id_stride_ + tv.id_offset;
  v.defining = {Segment::kLayer, tv.op, layer};
  v.index = tv.index;
  v.defining_shape = &op.shape;
  if (tv.index == kNoIndex) v.array = &op.shape.array();
  if (tv.index >= 0) v.array = &op.shape.elements[static_cast<size_t>(tv.index)];
  v.color = tv.color;
  v.size = tv.size;
  v.allocation = temp_allocation_[static_cast<size_t>(tv.color)];
  v.offset = (layer % ring_frames_) * frame_bytes_[static_cast<size_t>(tv.color)] + tv.frame_offset;
  v.live_start = LayerSlotBase(layer) + tv.op;
  v.live_end = tv.ends_next_layer ? LayerInputEnd(layer + 1) : LayerSlotBase(layer) + tv.end_rel;
  return v;
}

Value SyntheticProgram::MakeSingleValue(Segment segment, int32_t index) const {
  Value v;
  v.defining = {segment, index, 0};
  const OpTemplate& op = Op(v.defining);
  v.defining_shape = &op.shape;
  v.offset = 0;
  const int64_t T = schedule_length_;
  switch (segment) {
    case Segment::kRegion:
      v.id = index;
      v.allocation = root_allocation_ + 1 + index;
      break;
    case Segment::kParameter:
      v.id = first_param_id_ + index;
      v.allocation = first_param_allocation_ + index;
      v.live_start = 0;
      v.live_end = T;
      break;
    case Segment::kConstant: {
      v.id = first_constant_id_ + index;
      v.allocation = first_constant_allocation_ + index;
      v.live_start = Slot(v.defining);
      int last_reader = -1;
      for (const Consumer& c : constant_readers_[static_cast<size_t>(index)]) last_reader = std::max(last_reader, c.op);
      v.live_end = last_reader < 0 ? v.live_start : LayerSlotBase(spec_.layers - 1) + last_reader;
      break;
    }
    case Segment::kEpilogue:
      v.id = first_epilogue_id_ + index;
      v.allocation = first_output_allocation_ + index;
      v.live_start = Slot(v.defining);
      v.live_end = T;
      break;
    case Segment::kRoot:
      v.id = first_epilogue_id_ + static_cast<int64_t>(epilogue_ops_.size());
      v.allocation = root_allocation_;
      v.index = kTupleTable;
      v.size = TupleTableBytes(static_cast<int64_t>(op.shape.elements.size()), spec_.backend);
      v.live_start = Slot(v.defining);
      v.live_end = T;
      return v;
    case Segment::kLayer: break;
  }
  v.array = &op.shape.array();
  v.color = v.array->memory_space;
  v.size = PhysicalBytes(*v.array, spec_.backend);
  return v;
}

void SyntheticProgram::ForEachValue(const std::function<void(const Value&)>& fn) const {
  for (int i = 0; i < 3 * region_count_; ++i) fn(MakeSingleValue(Segment::kRegion, i));
  const int64_t P = parameter_count();
  for (int64_t p = 0; p < P; ++p) fn(MakeSingleValue(Segment::kParameter, static_cast<int32_t>(p)));
  for (size_t c = 0; c < constants_.size(); ++c) fn(MakeSingleValue(Segment::kConstant, static_cast<int32_t>(c)));
  for (int64_t l = 0; l < spec_.layers; ++l) {
    for (const TemplateValue& tv : layer_values_) fn(MakeLayerValue(l, tv));
  }
  for (size_t k = 0; k < epilogue_ops_.size(); ++k) fn(MakeSingleValue(Segment::kEpilogue, static_cast<int32_t>(k)));
  fn(MakeSingleValue(Segment::kRoot, 0));
}

void SyntheticProgram::ForEachValueInAllocation(const Allocation& a,
                                                const std::function<void(const Value&)>& fn) const {
  switch (a.kind) {
    case AllocationKind::kThreadLocal: fn(MakeSingleValue(Segment::kRegion, a.member)); return;
    case AllocationKind::kParameter: fn(MakeSingleValue(Segment::kParameter, a.member)); return;
    case AllocationKind::kConstant: fn(MakeSingleValue(Segment::kConstant, a.member)); return;
    case AllocationKind::kOutput: fn(MakeSingleValue(Segment::kEpilogue, a.member)); return;
    case AllocationKind::kRootTuple: fn(MakeSingleValue(Segment::kRoot, 0)); return;
    case AllocationKind::kTemp:
      for (int64_t l = 0; l < spec_.layers; ++l) {
        for (const TemplateValue& tv : layer_values_) {
          if (tv.color == a.color) fn(MakeLayerValue(l, tv));
        }
      }
      return;
  }
}

void SyntheticProgram::AppendPositions(const Value& value, std::vector<Position>* out) const {
  out->push_back({value.defining, value.index});
  const InstructionRef& d = value.defining;
  if (d.segment == Segment::kEpilogue) {
    out->push_back({{Segment::kRoot, 0, 0}, d.index});
  } else if (d.segment == Segment::kParameter && d.index >= kGlobalParams) {
    const int64_t q_count = static_cast<int64_t>(layer_params_.size());
    const int64_t set = (d.index - kGlobalParams) / q_count;
    const int64_t q = (d.index - kGlobalParams) % q_count;
    for (int64_t l = set; l < spec_.layers; l += weight_sets_) {
      for (const Consumer& c : layer_param_readers_[static_cast<size_t>(q)]) {
        if (layer_ops_[static_cast<size_t>(c.op)].kind == OpKind::kCopyStart) {
          out->push_back({{Segment::kLayer, c.op, l}, 1});
        }
      }
    }
  } else if (d.segment == Segment::kLayer && value.index >= 0) {
    for (const Consumer& c : consumers_[static_cast<size_t>(d.index)]) {
      const OpTemplate& reader = layer_ops_[static_cast<size_t>(c.op)];
      if ((reader.kind == OpKind::kGetTupleElement && reader.tuple_index == value.index) ||
          (reader.kind == OpKind::kCopyDone && value.index == 0)) {
        out->push_back({{Segment::kLayer, c.op, d.layer}, kNoIndex});
      }
    }
  }
}

void SyntheticProgram::AppendArrayUses(int64_t layer, int op, std::vector<Use>* out) const {
  for (const Consumer& c : consumers_[static_cast<size_t>(op)]) {
    out->push_back({{Segment::kLayer, c.op, layer}, c.operand, kNoIndex});
  }
  if (op == static_cast<int>(layer_ops_.size()) - 1) AppendLayerOutputUses(layer + 1, out);
}

void SyntheticProgram::AppendLayerOutputUses(int64_t layer, std::vector<Use>* out) const {
  if (layer < spec_.layers) {
    for (const Consumer& c : layer_input_readers_) out->push_back({{Segment::kLayer, c.op, layer}, c.operand, kNoIndex});
    return;
  }
  for (size_t k = 0; k < epilogue_ops_.size(); ++k) {
    const auto& operands = epilogue_ops_[k].operands;
    for (size_t i = 0; i < operands.size(); ++i) {
      if (operands[i].source == OperandSource::kFinalOutput) {
        out->push_back({{Segment::kEpilogue, static_cast<int32_t>(k), 0}, static_cast<int>(i), kNoIndex});
      }
    }
  }
}

void SyntheticProgram::AppendUses(const Value& value, std::vector<Use>* out) const {
  const size_t first = out->size();
  const InstructionRef& d = value.defining;
  switch (d.segment) {
    case Segment::kRegion:
      if (d.index % 3 != 2) out->push_back({{Segment::kRegion, d.index / 3 * 3 + 2, 0}, d.index % 3, kNoIndex});
      break;
    case Segment::kParameter:
      if (d.index == 0) AppendLayerOutputUses(0, out);
      if (d.index < kGlobalParams) {
        for (size_t k = 0; k < epilogue_ops_.size(); ++k) {
          const auto& operands = epilogue_ops_[k].operands;
          for (size_t i = 0; i < operands.size(); ++i) {
            if (operands[i].source == OperandSource::kGlobalParam && operands[i].index == d.index) {
              out->push_back({{Segment::kEpilogue, static_cast<int32_t>(k), 0}, static_cast<int>(i), kNoIndex});
            }
          }
        }
      } else {
        const int64_t q_count = static_cast<int64_t>(layer_params_.size());
        const int64_t set = (d.index - kGlobalParams) / q_count;
        const int64_t q = (d.index - kGlobalParams) % q_count;
        for (int64_t l = set; l < spec_.layers; l += weight_sets_) {
          for (const Consumer& c : layer_param_readers_[static_cast<size_t>(q)]) {
            out->push_back({{Segment::kLayer, c.op, l}, c.operand, kNoIndex});
            if (layer_ops_[static_cast<size_t>(c.op)].kind != OpKind::kCopyStart) continue;
            for (const Consumer& done : consumers_[static_cast<size_t>(c.op)]) {
              out->push_back({{Segment::kLayer, done.op, l}, done.operand, 1});
            }
          }
        }
      }
      break;
    case Segment::kConstant:
      for (int64_t l = 0; l < spec_.layers; ++l) {
        for (const Consumer& c : constant_readers_[static_cast<size_t>(d.index)]) {
          out->push_back({{Segment::kLayer, c.op, l}, c.operand, kNoIndex});
        }
      }
      break;
    case Segment::kLayer:
      if (value.index == kNoIndex) {
        AppendArrayUses(d.layer, d.index, out);
        break;
      }
      for (const Consumer& c : consumers_[static_cast<size_t>(d.index)]) {
        const OpTemplate& reader = layer_ops_[static_cast<size_t>(c.op)];
        const InstructionRef reader_ref{Segment::kLayer, c.op, d.layer};
        if (value.index == kTupleTable) {
          out->push_back({reader_ref, c.operand, kTupleTable});
        } else if (reader.kind == OpKind::kGetTupleElement && reader.tuple_index == value.index) {
          out->push_back({reader_ref, c.operand, value.index});
          AppendArrayUses(d.layer, c.op, out);
        } else if (reader.kind == OpKind::kCopyDone && (value.index == 0 || value.index == 2)) {
          out->push_back({reader_ref, c.operand, value.index});
          if (value.index == 0) AppendArrayUses(d.layer, c.op, out);
        }
      }
      break;
    case Segment::kEpilogue: out->push_back({{Segment::kRoot, 0, 0}, d.index, kNoIndex}); break;
    case Segment::kRoot: break;
  }
  std::stable_sort(out->begin() + static_cast<std::ptrdiff_t>(first), out->end(), [this](const Use& a, const Use& b) {
    return Slot(a.instruction) < Slot(b.instruction);
  });
}

PeakMoment SyntheticProgram::ComputePeak(bool v1_sizes) const {
  std::vector<int64_t> delta(static_cast<size_t>(schedule_length_) + 2, 0);
  ForEachValue([&](const Value& v) {
    if (v.live_start < 0) return;
    const int64_t bytes = v1_sizes ? v.LogicalBytesV1() : v.LogicalBytesV3();
    delta[static_cast<size_t>(v.live_start)] += bytes;
    delta[static_cast<size_t>(v.live_end) + 1] -= bytes;
  });
  PeakMoment peak;
  int64_t live = 0;
  for (int64_t t = 0; t <= schedule_length_; ++t) {
    live += delta[static_cast<size_t>(t)];
    if (live > peak.bytes) peak = {t, live};
  }
  return peak;
}

}  // namespace xladb::bench
