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
  FileRows& f = *file_;
  const int64_t hash = TextHash(text);
  auto& ins = f.Statement("INSERT INTO long_texts(hash, text) VALUES (?, ?) ON CONFLICT DO NOTHING");
  ins.bind(1, hash);
  BindText(ins, 2, text);
  const int inserted = ins.exec();
  ins.reset();
  if (inserted > 0) {
    ++f.rows;
    return f.sql().getLastInsertRowid();
  }
  auto& find = f.Statement("SELECT text_id FROM long_texts WHERE hash = ?");  // stored by another file
  find.bind(1, hash);
  find.executeStep();
  const int64_t id = find.getColumn(0).getInt64();
  find.reset();
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
                           "computation_id = COALESCE(excluded.computation_id, computation_id), "
                           "opcode = COALESCE(excluded.opcode, opcode), "
                           "shape_id = COALESCE(excluded.shape_id, shape_id), "
                           "op_type = COALESCE(excluded.op_type, op_type), "
                           "op_name_id = COALESCE(excluded.op_name_id, op_name_id), "
                           "source_file_id = COALESCE(excluded.source_file_id, source_file_id), "
                           "source_line = COALESCE(excluded.source_line, source_line), "
                           "fusion_kind = COALESCE(excluded.fusion_kind, fusion_kind), "
                           "custom_call_target = COALESCE(excluded.custom_call_target, custom_call_target), "
                           "is_root = COALESCE(excluded.is_root, is_root), "
                           "sequence_index = COALESCE(excluded.sequence_index, sequence_index), "
                           "text_id = COALESCE(excluded.text_id, text_id)");
    st.bind(1, f.module_id);
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
    st.bind(15, f.file_id);
    st.exec();
    st.reset();
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
    st.bind(1, f.module_id);
    st.bind(2, r.name);
    st.bind(3, r.is_entry ? 1 : 0);
    st.bind(4, r.instruction_count);
    BindOpt(st, 5, NonEmpty(std::move(r.execution_thread)));
    st.bind(6, f.file_id);
    st.exec();
    st.reset();
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
    SQLite::Statement& up = f.Statement("UPDATE modules SET hlo_entry_signature = ? WHERE module_id = ?");
    up.bind(1, signature);
    up.bind(2, f.module_id);
    up.exec();
  });
  f.facts.rows_changed = true;
}

}  // namespace xladb::store
