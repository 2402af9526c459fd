#include "service/attribution_proto.h"


namespace xladb::service {
namespace {

v1::BufferChange::Change ToProto(store::BufferChange::Kind c) {
  switch (c) {
    case store::BufferChange::Kind::kGrew: return v1::BufferChange::GREW;
    case store::BufferChange::Kind::kShrank: return v1::BufferChange::SHRANK;
    case store::BufferChange::Kind::kAppeared: return v1::BufferChange::APPEARED;
    case store::BufferChange::Kind::kDisappeared: return v1::BufferChange::DISAPPEARED;
  }
  return v1::BufferChange::CHANGE_UNSPECIFIED;
}

}  // namespace

// The two messages an answer holds thousands of (a gate over 500 reshaped modules: about 8,500 buffer changes
// and 6,000 source lines) are set by their generated setters, not through a ProtoFields table: reflection's
// SetString cost about 600 instructions a field here, a tenth of the whole answer's making (callgrind).
void ToProto(const store::BufferChange& b, v1::BufferChange* out) {
  out->set_change(ToProto(b.kind));
  out->set_instruction_a(b.baseline_instruction);
  out->set_instruction_b(b.instruction);
  out->set_shape_index(b.shape_index);
  out->set_matched_by(b.matched_by);
  out->set_size_a(b.baseline_bytes);
  out->set_size_b(b.current_bytes);
  out->set_shape_a(b.baseline_shape);
  out->set_shape_b(b.current_shape);
  out->set_op_name(b.op_name);
  out->set_source(b.source);
  out->set_delta(b.delta());
}

void ToProto(const store::SourceLineChange& s, v1::SourceLineChange* out) {
  out->set_source(s.source);
  out->set_delta(s.delta);
  out->set_buffers(s.buffers);
}

}  // namespace xladb::service
