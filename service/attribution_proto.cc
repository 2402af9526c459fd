#include "service/attribution_proto.h"

#include "service/proto_fields.h"

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

void ToProto(const store::BufferChange& b, v1::BufferChange* out) {
  using S = store::BufferChange;
  static const ProtoFields<S, v1::BufferChange> kFields = {
      {"instruction_a", &S::baseline_instruction},
      {"instruction_b", &S::instruction},
      {"shape_index", &S::shape_index},
      {"matched_by", &S::matched_by},
      {"size_a", &S::baseline_bytes},
      {"size_b", &S::current_bytes},
      {"shape_a", &S::baseline_shape},
      {"shape_b", &S::current_shape},
      {"op_name", &S::op_name},
      {"source", &S::source},
  };
  kFields.Copy(b, out);
  out->set_change(ToProto(b.kind));
  out->set_delta(b.delta());
}

void ToProto(const store::SourceLineChange& s, v1::SourceLineChange* out) {
  using S = store::SourceLineChange;
  static const ProtoFields<S, v1::SourceLineChange> kFields = {
      {"source", &S::source}, {"delta", &S::delta}, {"buffers", &S::buffers}};
  kFields.Copy(s, out);
}

}  // namespace xladb::service
