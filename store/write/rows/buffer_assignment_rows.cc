#include "store/write/rows/buffer_assignment_rows.h"

#include <xxhash.h>


#include <charconv>
#include <climits>
#include <cstdio>
#include <tuple>
#include <utility>

#include "store/backend/row_binding.h"

namespace xladb::store {
namespace {

// A value seen again (its line and its Used-values block) merges: a field the new row lacks keeps the stored
// one, and is_phi (0 or 1) is set when either says so. Upsert SET names the stored row by its table (portable).
const BulkInsert kValueInsert{
    "buffer_values",
    "module_id, value_id, instruction, shape_index, is_phi, color, allocation_index, offset_bytes, size_bytes, "
    "shape_id, positions, uses, uses_state, cross_color, file_id",
    "ON CONFLICT(module_id, value_id) DO UPDATE SET "
    "is_phi = buffer_values.is_phi | excluded.is_phi, color = COALESCE(excluded.color, buffer_values.color), "
    "allocation_index = COALESCE(excluded.allocation_index, buffer_values.allocation_index), "
    "offset_bytes = COALESCE(excluded.offset_bytes, buffer_values.offset_bytes), "
    "size_bytes = COALESCE(excluded.size_bytes, buffer_values.size_bytes), "
    "shape_id = COALESCE(excluded.shape_id, buffer_values.shape_id), "
    "positions = COALESCE(excluded.positions, buffer_values.positions), "
    "uses = COALESCE(excluded.uses, buffer_values.uses), uses_state = COALESCE(excluded.uses_state, buffer_values.uses_state), "
    "cross_color = COALESCE(excluded.cross_color, buffer_values.cross_color)",
    2};

// An allocation printed twice breaks the primary key: the file is an error, its rows roll back
// (tests/store/run_isolation_test.cc), when its batch is written (at the latest the file's end).
const BulkInsert kAllocationInsert{
    "allocations",
    "module_id, allocation_index, size_bytes, color, is_parameter, parameter_number, parameter_shape, "
    "parameter_shape_index, is_output, output_shape, is_constant, is_thread_local, is_maybe_live_out, "
    "is_preallocated_temp, address, file_id",
    "", 0};

// Appends `s` as a JSON string literal: runs of plain bytes are copied whole.
void AppendJsonString(std::string* out, std::string_view s) {
  out->push_back('"');
  size_t run = 0;
  for (size_t i = 0; i < s.size(); ++i) {
    const auto c = static_cast<unsigned char>(s[i]);
    if (c >= 0x20 && c != '"' && c != '\\') continue;
    out->append(s.data() + run, i - run);
    run = i + 1;
    if (c == '"') {
      out->append("\\\"");
    } else if (c == '\\') {
      out->append("\\\\");
    } else {
      char buf[8];
      std::snprintf(buf, sizeof buf, "\\u%04x", c);
      out->append(buf);
    }
  }
  out->append(s.data() + run, s.size() - run);
  out->push_back('"');
}

}  // namespace

BufferAssignmentRows::BufferAssignmentRows(FileContext* file)
    : file_(file), allocations_(&kAllocationInsert), values_(&kValueInsert) {}

void BufferAssignmentRows::Add(ingest::AllocationRecord&& r) {
  FileContext& f = *file_;
  if (f.module_id == 0) return;
  f.facts.rows_changed = true;
  f.Guard([&] {
    BulkBatch& b = allocations_;
    b.Int(f.module_id);
    b.Int(r.index);
    b.Int(r.size_bytes);
    b.Int(r.color);
    b.Int(r.parameter_number >= 0);
    b.Opt(NonNegative(r.parameter_number));
    b.OptText(NonEmpty(std::move(r.parameter_shape)));
    b.OptText(NonEmpty(std::move(r.parameter_shape_index)));
    b.Int(r.is_output);
    b.OptText(NonEmpty(std::move(r.output_shape)));
    b.Int(r.is_constant);
    b.Int(r.is_thread_local);
    b.Int(r.is_maybe_live_out);
    b.Int(r.is_preallocated_temp);
    b.OptText(NonEmpty(std::move(r.address)));
    b.Int(f.file_id);
    f.rows += b.EndRow(f.sql());
  });
}

BufferAssignmentRows::ValueRow BufferAssignmentRows::RowOf(const ingest::ValueRef& ref) {
  ValueRow v;
  v.instruction = ref.instruction;
  v.shape_index = ref.shape_index;
  v.is_phi = ref.is_phi;
  if (ref.color >= 0) v.color = ref.color;
  return v;
}

void BufferAssignmentRows::Add(ingest::AllocatedValueRecord&& r) {
  FileContext& f = *file_;
  if (f.module_id == 0) return;
  f.Guard([&] {
    f.facts.saw_allocated_values = true;
    const int64_t shape_id = f.ShapeId(r.shape);
    value_keys_.Add(r.value.id, ValueKeyIndex::Key(r.value.instruction, r.value.shape_index));
    PendingValues::Slot* slot = PendingValues::Fits(r.allocation_index, shape_id, r.value.color)
                                    ? pending_.Get(r.value.id, /*create=*/true)
                                    : nullptr;
    if (slot == nullptr || slot->present) {  // sparse ids, odd values, or printed twice: write it now
      ValueRow v = RowOf(r.value);
      v.allocation_index = r.allocation_index;
      v.offset = r.offset_bytes;
      v.size = r.size_bytes;
      v.shape_id = shape_id;
      WriteValue(r.value.id, v);
    } else {
      slot->allocation_index = static_cast<int32_t>(r.allocation_index);
      slot->offset = r.offset_bytes;
      slot->size = r.size_bytes;
      slot->shape_id = static_cast<int32_t>(shape_id);
      slot->color = static_cast<int8_t>(r.value.color);
      slot->is_phi = r.value.is_phi;
      pending_.Fill(r.value.id, slot, r.value);
    }
    // Order-independent program fingerprint over (size, shape) of every value.
    f.facts.value_fingerprint +=
        XXH3_64bits_withSeed(r.shape.data(), r.shape.size(), static_cast<uint64_t>(r.size_bytes));
  });
}

void BufferAssignmentRows::Add(ingest::CrossColorReuseRecord&& r) {
  FileContext& f = *file_;
  if (f.module_id == 0) return;
  f.Guard([&] {
    PendingValues::Slot* slot = pending_.Get(r.value.id, /*create=*/false);
    if (slot != nullptr && slot->present && r.color >= 0 && r.color <= INT8_MAX) {
      slot->cross_color = static_cast<int8_t>(r.color);
      return;
    }
    value_keys_.Add(r.value.id, ValueKeyIndex::Key(r.value.instruction, r.value.shape_index));
    ValueRow v = RowOf(r.value);
    v.cross_color = r.color;
    WriteValue(r.value.id, v);
  });
}

void BufferAssignmentRows::Add(ingest::TotalBytesRecord&& r) { file_->facts.total_bytes = r.total_bytes; }

void BufferAssignmentRows::Add(ingest::ValueDetailRecord&& r) {
  FileContext& f = *file_;
  if (f.module_id == 0) return;
  // Most values have one position, their own: it is left NULL (value_positions spells it out).
  const bool only_own_position = r.positions.size() == 1 && r.positions[0].instruction == r.value.instruction &&
                                 r.positions[0].shape_index == r.value.shape_index;
  std::string& positions = positions_json_;
  if (!only_own_position) {
    positions.assign("[");
    for (size_t i = 0; i < r.positions.size(); ++i) {
      if (i) positions.push_back(',');
      positions.push_back('[');
      AppendJsonString(&positions, r.positions[i].instruction);
      positions.push_back(',');
      AppendJsonString(&positions, r.positions[i].shape_index);
      positions.push_back(']');
    }
    positions.push_back(']');
  }
  std::string& uses = uses_json_;
  uses.assign("[");
  for (size_t i = 0; i < r.uses.size(); ++i) {
    if (i) uses.push_back(',');
    uses.push_back('[');
    AppendJsonString(&uses, r.uses[i].instruction);
    uses.push_back(',');
    char digits[24];
    auto [end, ec] = std::to_chars(digits, digits + sizeof digits, r.uses[i].operand);
    uses.append(digits, static_cast<size_t>(end - digits));
    uses.push_back(',');
    AppendJsonString(&uses, r.uses[i].shape_index);
    uses.push_back(']');
  }
  uses.push_back(']');
  ValueRow v = RowOf(r.value);
  if (!only_own_position) v.positions = positions;
  v.uses = uses;
  switch (r.uses_state) {
    case ingest::ValueDetailRecord::UsesState::kListed: v.uses_state = "listed"; break;
    case ingest::ValueDetailRecord::UsesState::kNone: v.uses_state = "none"; break;
    case ingest::ValueDetailRecord::UsesState::kNotInitialized: v.uses_state = "not_initialized"; break;
  }
  // One complete row: the ` value:` line and this block.
  PendingValues::Slot* slot = pending_.Get(r.value.id, /*create=*/false);
  const bool was_pending = slot != nullptr && slot->present;
  if (was_pending) {
    FoldPending(*slot, &v);
  } else {
    value_keys_.Add(r.value.id, ValueKeyIndex::Key(r.value.instruction, r.value.shape_index));
  }
  f.Guard([&] { WriteValue(r.value.id, v); });
  if (was_pending) pending_.Take(r.value.id, slot);
}

std::optional<int64_t> BufferAssignmentRows::FindValueInFile(std::string_view instruction,
                                                             std::string_view shape_index) {
  return value_keys_.Find(ValueKeyIndex::Key(instruction, shape_index));
}

std::optional<int64_t> BufferAssignmentRows::FindValue(std::string_view instruction, std::string_view shape_index) {
  const uint64_t key = ValueKeyIndex::Key(instruction, shape_index);
  if (auto id = value_keys_.Find(key)) return id;
  FileContext& f = *file_;
  if (!stored_keys_loaded_ && !f.module_is_new && f.module_id != 0) {
    stored_keys_loaded_ = true;
    auto q = f.sql().Prepare("SELECT value_id, instruction, shape_index FROM buffer_values WHERE module_id = ?");
    q->Bind(1, f.module_id);
    while (q->Step()) value_keys_.Add(q->Int(0), ValueKeyIndex::Key(q->Text(1), q->Text(2)));
    return value_keys_.Find(key);
  }
  return std::nullopt;
}

void BufferAssignmentRows::FoldPending(const PendingValues::Slot& slot, ValueRow* v) {
  v->allocation_index = slot.allocation_index;
  v->offset = slot.offset;
  v->size = slot.size;
  v->shape_id = slot.shape_id;
  if (slot.cross_color >= 0) v->cross_color = slot.cross_color;
  if (!v->color && slot.color >= 0) v->color = slot.color;
  v->is_phi = v->is_phi || slot.is_phi;
}

void BufferAssignmentRows::WriteValue(int64_t id, const ValueRow& v) {
  FileContext& f = *file_;
  BulkBatch& b = values_;
  b.Int(f.module_id);
  b.Int(id);
  b.Text(v.instruction);
  b.Text(v.shape_index);
  b.Int(v.is_phi ? 1 : 0);
  b.Opt(v.color);
  b.Opt(v.allocation_index);
  b.Opt(v.offset);
  b.Opt(v.size);
  b.Opt(v.shape_id);
  if (v.positions) b.Text(*v.positions); else b.Null();
  if (v.uses) b.Text(*v.uses); else b.Null();
  if (v.uses_state) b.Text(v.uses_state); else b.Null();
  b.Opt(v.cross_color);
  b.Int(f.file_id);
  // A value written twice (stored at once, then merged with its block) is new only the first time.
  f.EndModuleRow(b, written_ids_, id);
}

void BufferAssignmentRows::WritePending() {
  pending_.ForEachWaiting([&](int64_t id, const PendingValues::Slot& slot) {
    ValueRow v;
    std::tie(v.instruction, v.shape_index) = pending_.Name(slot);
    FoldPending(slot, &v);
    WriteValue(id, v);
  });
  pending_.Clear();
}

void BufferAssignmentRows::Flush() {
  file_->rows += allocations_.Flush(file_->sql());
  file_->rows += values_.Flush(file_->sql());
}

}  // namespace xladb::store
