// Shapes and their sizes: logical bytes, TPU tiling and the padded bytes it implies (synthetic_program.h).
#include "bench/synthetic_program.h"

namespace xladb::bench {

int64_t RoundUp(int64_t n, int64_t m) { return (n + m - 1) / m * m; }

int64_t ElementBytes(ElementType type) {
  switch (type) {
    case ElementType::kPred: return 1;
    case ElementType::kS8: return 1;
    case ElementType::kS32: return 4;
    case ElementType::kU32: return 4;
    case ElementType::kBf16: return 2;
    case ElementType::kF32: return 4;
  }
  return 4;
}

std::string_view ElementTypeName(ElementType type) {
  switch (type) {
    case ElementType::kPred: return "pred";
    case ElementType::kS8: return "s8";
    case ElementType::kS32: return "s32";
    case ElementType::kU32: return "u32";
    case ElementType::kBf16: return "bf16";
    case ElementType::kF32: return "f32";
  }
  return "f32";
}

int64_t ArrayShape::ElementCount() const {
  int64_t n = 1;
  for (int i = 0; i < rank; ++i) n *= dims[static_cast<size_t>(i)];
  return n;
}

int64_t ArrayShape::LogicalBytes() const { return ElementCount() * ElementBytes(type); }

ArrayShape MakeArray(ElementType type, std::initializer_list<int64_t> dims, int memory_space) {
  ArrayShape a;
  a.type = type;
  a.memory_space = memory_space;
  for (int64_t d : dims) a.dims[static_cast<size_t>(a.rank++)] = d;
  return a;
}

int64_t Shape::LogicalBytes() const {
  return is_tuple ? 8 * static_cast<int64_t>(elements.size()) : elements.front().LogicalBytes();
}

Shape ArrayOf(ArrayShape a) {
  Shape s;
  s.elements.push_back(a);
  return s;
}

Shape TupleOf(std::vector<ArrayShape> elements) {
  Shape s;
  s.is_tuple = true;
  s.elements = std::move(elements);
  return s;
}

TpuTiling TilingFor(const ArrayShape& a) {
  if (a.memory_space == 2) return {1, 1, ""};  // SMEM scalars and flags are untiled
  if (a.rank < 2) return {1, 128, "T(128)"};
  switch (ElementBytes(a.type)) {
    case 1: return {32, 128, "T(32,128)(4,1)"};
    case 2: return {16, 128, "T(8,128)(2,1)"};
    default: return {8, 128, "T(8,128)"};
  }
}

int64_t PhysicalBytes(const ArrayShape& a, Backend backend) {
  if (backend == Backend::kGpu) return a.LogicalBytes();
  TpuTiling t = TilingFor(a);
  if (t.text.empty()) return a.LogicalBytes();
  if (a.rank == 0) return 128 * ElementBytes(a.type);
  int64_t n = 1;
  for (int i = 0; i < a.rank; ++i) {
    int64_t d = a.dims[static_cast<size_t>(i)];
    if (i == a.rank - 1) d = RoundUp(d, t.minor);
    if (i == a.rank - 2) d = RoundUp(d, t.second_minor);
    n *= d;
  }
  return n * ElementBytes(a.type);
}

int64_t TupleTableBytes(int64_t elements, Backend backend) {
  return backend == Backend::kTpu ? RoundUp(8 * elements, 32) : 8 * elements;
}

int64_t Value::LogicalBytesV3() const { return array ? array->LogicalBytes() : defining_shape->LogicalBytes(); }

int64_t Value::LogicalBytesV1() const { return defining_shape->LogicalBytes(); }

}  // namespace xladb::bench
