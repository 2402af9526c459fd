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

}  // namespace xladb::bench
