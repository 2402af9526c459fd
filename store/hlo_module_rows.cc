#include "store/hlo_module_rows.h"

#include <optional>
#include <utility>

#include "store/interned_texts.h"
#include "store/row_binding.h"
#include "store/shape_text.h"

namespace xladb::store {
namespace {

// The columns of one instructions row; unset fields leave what another file wrote.
struct InstructionRow {
  std::optional<std::string> opcode, op_type, fusion_kind, custom_call_target;
  std::optional<int64_t> computation_id, shape_id, op_name_id, source_file_id, source_line, sequence_index, text_id;
  std::optional<bool> is_root;
};

}  // namespace

int64_t HloModuleRows::TextId(const std::string& text) {
  bool inserted = false;
  const int64_t id = file_->LongTextId(text, &inserted);
  if (inserted) ++file_->rows;
  return id;
}

void HloModuleRows::Add(ingest::InstructionRecord&& r) {
  FileRows& f = *file_;
  if (f.module_id == 0) return;
  f.Guard([&] {
    InstructionRow in;
    const bool from_module_text = !r.computation.empty();  // HLO text knows ROOT; other sources do not
    if (from_module_text) in.is_root = r.is_root;
    if (!r.computation.empty()) in.computation_id = f.NameId(r.computation);
    Merge(in.opcode, NonEmpty(std::move(r.opcode)));
    if (!r.shape.empty()) in.shape_id = f.ShapeId(r.shape);
    Merge(in.op_type, NonEmpty(std::move(r.op_type)));
    if (!r.op_name.empty()) in.op_name_id = f.NameId(r.op_name);
    if (!r.source_file.empty()) in.source_file_id = f.SourceFileId(r.source_file);
    Merge(in.source_line, NonNegative(r.source_line));
    Merge(in.fusion_kind, NonEmpty(std::move(r.fusion_kind)));
    Merge(in.custom_call_target, NonEmpty(std::move(r.custom_call_target)));
    Merge(in.sequence_index, NonNegative(r.sequence_index));
    if (!r.text.empty()) in.text_id = TextId(r.text);
    auto& st = f.Statement("INSERT INTO instructions(module_id, name, computation_id, opcode, shape_id, op_type, "
                           "op_name_id, source_file_id, source_line, fusion_kind, custom_call_target, is_root, "
                           "sequence_index, text_id, file_id) VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?,?,?) "
                           "ON CONFLICT(module_id, name) DO UPDATE SET "
                           "computation_id = COALESCE(excluded.computation_id, instructions.computation_id), "
                           "opcode = COALESCE(excluded.opcode, instructions.opcode), "
                           "shape_id = COALESCE(excluded.shape_id, instructions.shape_id), "
                           "op_type = COALESCE(excluded.op_type, instructions.op_type), "
                           "op_name_id = COALESCE(excluded.op_name_id, instructions.op_name_id), "
                           "source_file_id = COALESCE(excluded.source_file_id, instructions.source_file_id), "
                           "source_line = COALESCE(excluded.source_line, instructions.source_line), "
                           "fusion_kind = COALESCE(excluded.fusion_kind, instructions.fusion_kind), "
                           "custom_call_target = COALESCE(excluded.custom_call_target, instructions.custom_call_target), "
                           "is_root = COALESCE(excluded.is_root, instructions.is_root), "
                           "sequence_index = COALESCE(excluded.sequence_index, instructions.sequence_index), "
                           "text_id = COALESCE(excluded.text_id, instructions.text_id)");
    st.Bind(1, f.module_id);
    BindText(st, 2, r.name);
    BindOpt(st, 3, in.computation_id);
    BindOpt(st, 4, in.opcode);
    BindOpt(st, 5, in.shape_id);
    BindOpt(st, 6, in.op_type);
    BindOpt(st, 7, in.op_name_id);
    BindOpt(st, 8, in.source_file_id);
    BindOpt(st, 9, in.source_line);
    BindOpt(st, 10, in.fusion_kind);
    BindOpt(st, 11, in.custom_call_target);
    BindOpt(st, 12, in.is_root);
    BindOpt(st, 13, in.sequence_index);
    BindOpt(st, 14, in.text_id);
    st.Bind(15, f.file_id);
    st.Execute();
    st.Reset();
    ++f.rows;
  });
}

void HloModuleRows::Add(ingest::ComputationRecord&& r) {
  FileRows& f = *file_;
  if (f.module_id == 0) return;
  f.Guard([&] {
    auto& st = f.Statement("INSERT INTO computations(module_id, name, is_entry, instruction_count, "
                           "execution_thread, file_id) VALUES (?,?,?,?,?,?) ON CONFLICT(module_id, name) DO UPDATE "
                           "SET is_entry = excluded.is_entry, instruction_count = excluded.instruction_count, "
                           "execution_thread = excluded.execution_thread");
    st.Bind(1, f.module_id);
    st.Bind(2, r.name);
    st.Bind(3, r.is_entry ? 1 : 0);
    st.Bind(4, r.instruction_count);
    BindOpt(st, 5, NonEmpty(std::move(r.execution_thread)));
    st.Bind(6, f.file_id);
    st.Execute();
    st.Reset();
    ++f.rows;
  });
}

void HloModuleRows::Add(ingest::HloModuleRecord&& r) {
  FileRows& f = *file_;
  if (f.module_id == 0) return;
  if (r.program_fingerprint != 0) f.facts.hlo_fingerprint = r.program_fingerprint;
  if (r.entry_computation_layout.empty()) return;
  // The entry signature as the HLO text prints it, without layouts: '(f32[8], s32[]) -> f32[8]'.
  std::string signature = ShapeWithoutLayout(r.entry_computation_layout);
  if (size_t arrow = signature.find("->"); arrow != std::string::npos) signature.replace(arrow, 2, " -> ");
  f.Guard([&] {
    SqlStatement& up = f.Statement("UPDATE modules SET hlo_entry_signature = ? WHERE module_id = ?");
    up.Bind(1, signature);
    up.Bind(2, f.module_id);
    up.Execute();
  });
  f.facts.rows_changed = true;
}

}  // namespace xladb::store
