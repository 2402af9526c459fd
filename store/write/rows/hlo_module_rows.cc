#include "store/write/rows/hlo_module_rows.h"

#include <algorithm>
#include <optional>
#include <string_view>
#include <utility>

#include "store/facts/interned_texts.h"
#include "store/backend/row_binding.h"
#include "store/facts/shape_text.h"

namespace xladb::store {
namespace {

// Whether every byte of `s` is ASCII and not NUL: text any backend stores as it is.
bool AsciiWithoutNul(std::string_view s) {
  return std::all_of(s.begin(), s.end(), [](char c) { return c > 0; });  // char is signed: >= 0x80 is < 0
}

// A field a file does not print leaves what another file wrote.
const BulkInsert kInstructionInsert{
    "instructions",
    "module_id, name, computation_id, opcode, shape_id, op_type, op_name_id, source_file_id, source_line, "
    "fusion_kind, custom_call_target, is_root, sequence_index, text_id, file_id",
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
    "text_id = COALESCE(excluded.text_id, instructions.text_id)",
    2};

// A computation printed again (another file of the module) takes the later file's figures.
const BulkInsert kComputationInsert{
    "computations", "module_id, name, is_entry, instruction_count, execution_thread, file_id",
    "ON CONFLICT(module_id, name) DO UPDATE SET is_entry = excluded.is_entry, "
    "instruction_count = excluded.instruction_count, execution_thread = excluded.execution_thread",
    2};

}  // namespace

HloModuleRows::HloModuleRows(FileContext* file)
    : file_(file), instructions_(&kInstructionInsert), computations_(&kComputationInsert) {
  computations_.HoldIn(file->held_rows, {"name"});  // the table's key
}

void HloModuleRows::Flush() {
  FileContext& f = *file_;
  f.rows += computations_.Flush(f.sql());
  if (pending_.empty()) return;
  // The batch's op_names are interned together, then its texts cut and interned together (one insert, one
  // lookup each), then its rows written.
  std::vector<std::string> op_names;
  for (const PendingInstruction& p : pending_) {
    if (!p.op_name.empty()) op_names.push_back(p.op_name);
  }
  std::vector<int64_t> op_name_ids(op_names.size());
  f.NameIds(op_names, op_name_ids);
  // A field the text prints, as CutInternedParts takes it (it cuts only where the printed bytes are the field).
  auto part = [](const ingest::InstructionRecord::TextSpan& at, const std::optional<int64_t>& id,
                 const std::string& field) {
    return id ? InternedPart{at.at, at.size, *id, field} : InternedPart{};
  };
  size_t next_op_name = 0;
  for (PendingInstruction& p : pending_) {
    if (!p.op_name.empty()) p.row.op_name_id = op_name_ids[next_op_name++];
    if (p.text.empty()) continue;
    const InternedPart shape = part(p.shape_at, p.row.shape_id, p.shape),
                       op_name = part(p.op_name_at, p.row.op_name_id, p.op_name),
                       source_file = part(p.source_file_at, p.row.source_file_id, p.source_file);
    p.text_index = static_cast<int64_t>(texts_.size());
    texts_.push_back(CutInternedParts(std::move(p.text), shape, op_name, source_file));
  }
  std::vector<int64_t> text_ids(texts_.size());
  f.rows += f.LongTextIds(std::move(texts_), text_ids);
  texts_.clear();  // moved from: empty again for the next batch
  NoteReplacedTexts(text_ids);
  // A module this file created has no rows but the file's, one per instruction name (records.h: the parsers
  // emit a name once): every row is new.
  const BulkBatch::Keys keys = f.module_is_new ? BulkBatch::Keys::kNew : BulkBatch::Keys::kMayExist;
  BulkBatch& b = instructions_;
  for (const PendingInstruction& p : pending_) {
    const InstructionRow& in = p.row;
    b.Int(f.module_id);
    b.Text(p.name);
    b.Opt(in.computation_id);
    b.OptText(in.opcode);
    b.Opt(in.shape_id);
    b.OptText(in.op_type);
    b.Opt(in.op_name_id);
    b.Opt(in.source_file_id);
    b.Opt(in.source_line);
    b.OptText(in.fusion_kind);
    b.OptText(in.custom_call_target);
    b.Opt(in.is_root);
    b.Opt(in.sequence_index);
    if (p.text_index < 0) b.Null(); else b.Int(text_ids[static_cast<size_t>(p.text_index)]);
    b.Int(f.file_id);
    f.rows += b.EndRow(f.sql(), keys);
  }
  f.rows += b.Flush(f.sql());
  pending_.clear();
}

void HloModuleRows::NoteReplacedTexts(const std::vector<int64_t>& text_ids) {
  FileContext& f = *file_;
  // A module this file created has only the rows it writes, one per name (records.h): nothing to replace,
  // and no map of every instruction (a million in a 1 GiB buffer assignment) to hold.
  if (f.module_is_new) return;
  if (!stored_texts_read_) {
    stored_texts_read_ = true;
    auto& stored = f.Statement("SELECT name, text_id FROM instructions WHERE module_id = ? AND text_id IS NOT NULL");
    stored.Bind(1, f.module_id);
    while (stored.Step()) stored_texts_[TextHash(stored.Text(0))] = stored.Int(1);
    stored.Reset();
  }
  for (const PendingInstruction& p : pending_) {
    if (p.text_index < 0) continue;  // a row without a text keeps the one it has (COALESCE)
    const int64_t text_id = text_ids[static_cast<size_t>(p.text_index)];
    auto [it, first] = stored_texts_.try_emplace(TextHash(p.name), text_id);
    if (!first && it->second != text_id) {
      f.LongTextReplaced(it->second);
      it->second = text_id;
    }
  }
}

void HloModuleRows::Add(ingest::InstructionRecord&& r) {
  FileContext& f = *file_;
  if (f.module_id == 0) return;
  f.Guard([&] {
    PendingInstruction& p = pending_.emplace_back();
    InstructionRow& in = p.row;
    p.name = std::move(r.name);
    const bool from_module_text = !r.computation.empty();  // HLO text knows ROOT; other sources do not
    if (from_module_text) in.is_root = r.is_root;
    if (!r.computation.empty()) in.computation_id = f.NameId(r.computation);
    Merge(in.opcode, NonEmpty(std::move(r.opcode)));
    if (!r.shape.empty()) in.shape_id = f.ShapeId(r.shape);
    Merge(in.op_type, NonEmpty(std::move(r.op_type)));
    if (!r.source_file.empty()) in.source_file_id = f.SourceFileId(r.source_file);
    // The fields the text prints, kept with where it prints them until the batch's text is cut (Flush).
    p.shape = std::move(r.shape);
    p.op_name = std::move(r.op_name);
    p.source_file = std::move(r.source_file);
    p.shape_at = r.shape_in_text;
    p.op_name_at = r.op_name_in_text;
    p.source_file_at = r.source_file_in_text;
    Merge(in.source_line, NonNegative(r.source_line));
    Merge(in.fusion_kind, NonEmpty(std::move(r.fusion_kind)));
    Merge(in.custom_call_target, NonEmpty(std::move(r.custom_call_target)));
    Merge(in.sequence_index, NonNegative(r.sequence_index));
    p.text = std::move(r.text);
    if (pending_.size() >= f.sql().bulk_batch_rows()) Flush();
  });
}

void HloModuleRows::Add(ingest::ComputationRecord&& r) {
  FileContext& f = *file_;
  if (f.module_id == 0) return;
  f.Guard([&] {
    BulkBatch& b = computations_;
    b.Int(f.module_id);
    b.Text(r.name);
    b.Int(r.is_entry);
    b.Int(r.instruction_count);
    b.OptText(NonEmpty(std::move(r.execution_thread)));
    b.Int(f.file_id);
    f.rows += b.EndRow(f.sql());
  });
}

void HloModuleRows::Add(ingest::HloModuleRecord&& r) {
  FileContext& f = *file_;
  if (f.module_id == 0) return;
  if (r.program_fingerprint != 0) f.facts.hlo_fingerprint = r.program_fingerprint;
  // The entry signature as the HLO text prints it, without layouts: '(f32[8], s32[]) -> f32[8]': the header's
  // entry_computation_layout, else (old dumps print none) the ENTRY computation's line.
  const std::string& printed =
      !r.entry_computation_layout.empty() ? r.entry_computation_layout : r.entry_signature;
  const std::string signature = printed.empty() ? std::string() : StoredEntrySignature(printed);
  // What the module's row takes from its HLO text:
  //   * hlo_entry_sharding ('' when none), the identity's through DerivedModuleFacts (module_facts.h), and
  //     hlo_entry_signature when the text prints one: written with the group's derived facts (FileFacts::hlo_header).
  //     A header with a byte outside ASCII (or a NUL) is also written at once, inside the file's savepoint:
  //     PostgreSQL refuses text that is not UTF-8, and that must fail this file, not the group whose COMMIT
  //     writes the headers (which then writes the same bytes again, in file order);
  //   * name, now: a module named `module_<ID>` (the placeholder a file name without the module's name gives:
  //     2020-era TensorFlow dumps, docs/formats.md) takes its HloModule line's name, unless a row of its run
  //     already has that key. run_writer.cc finds a placeholder's module by its number, whatever its name; a
  //     file whose key has another name found or created a row of that name, which this leaves alone.
  f.facts.hlo_header = FileFacts::HloHeader{r.entry_sharding, NonEmpty(std::string(signature))};
  if (!AsciiWithoutNul(r.entry_sharding) || !AsciiWithoutNul(signature)) {
    f.Guard([&] {
      SqlStatement& up = f.Statement(
          "UPDATE modules SET hlo_entry_sharding = ?, hlo_entry_signature = COALESCE(?, hlo_entry_signature) "
          "WHERE module_id = ?");
      BindRow(up, r.entry_sharding, NonEmpty(signature), f.module_id);
      up.ExecuteLater();
    });
  }
  if (f.module_named_by_number && !r.name.empty()) {
    f.Guard([&] {
      SqlStatement& up = f.Statement(
          "UPDATE modules SET name = ?1 WHERE module_id = ?2 AND name = 'module_' || xla_module_id "
          "AND NOT EXISTS (SELECT 1 FROM modules o WHERE o.run_id = modules.run_id AND o.name = ?1 "
          "  AND o.stage = modules.stage AND o.xla_module_id = modules.xla_module_id AND o.folder = modules.folder)");
      BindRow(up, r.name, f.module_id);
      up.ExecuteLater();
    });
  }
  f.facts.rows_changed = true;
  f.facts.entry_sharding_changed = true;
}

}  // namespace xladb::store
