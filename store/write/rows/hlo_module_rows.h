// HloModuleRows: instructions, computations and the module header, from every format that prints them (the HLO
// module text, docs/formats.md §7, and the instruction lines other dumps carry), as rows of one module.
//
//   InstructionRecord  → instructions(name, computation_id, opcode, shape_id, op_type, op_name_id,
//                        source_file_id, source_line, fusion_kind, custom_call_target, is_root, sequence_index,
//                        text_id). Names, shapes and source paths are interned (store/facts/interned_texts.h); the
//                        instruction's full text goes to long_texts, stored once by its hash, without the
//                        shape, op_name and source path it prints where the record says where they are
//                        (InstructionRecord::TextSpan; store/facts/long_text.h puts them back). A field a format
//                        does not print is NULL and leaves what another file wrote (COALESCE); is_root is known
//                        only from module text (a record with a computation). Rows are held and written a
//                        batch at a time (store/backend/bulk_batch.h), their texts interned together first; Flush()
//                        writes the rest, and the file's end calls it before anything reads them. A text
//                        that a later file's text for the same instruction replaces is noted for the run's
//                        sweep (InternedTextCaches::TextReplaced), so no text is left unreferenced.
//   ComputationRecord  → computations(name, is_entry, instruction_count, execution_thread), a batch at a time
//                        with the instructions
//   HloModuleRecord    → FileFacts.hlo_header: modules.hlo_entry_signature (the entry computation layout without
//                        layouts, '(f32[8], s32[]) -> f32[8]') and hlo_entry_sharding, written with the group's
//                        derived facts; modules.name of a module named by number only (at once);
//                        FileFacts.hlo_fingerprint
//
// Contract: owned by one file's FileWriter; statement errors go to FileContext::Guard. Not thread-safe.
#ifndef XLADB_STORE_WRITE_ROWS_HLO_MODULE_ROWS_H_
#define XLADB_STORE_WRITE_ROWS_HLO_MODULE_ROWS_H_

#include <cstdint>
#include <optional>
#include <string>
#include <unordered_map>
#include <vector>

#include "ingest/records/records.h"
#include "store/facts/long_text.h"
#include "store/write/rows/file_context.h"
#include "store/backend/bulk_batch.h"

namespace xladb::store {

class HloModuleRows {
 public:
  explicit HloModuleRows(FileContext* file);

  void Add(ingest::InstructionRecord&& r);
  void Add(ingest::ComputationRecord&& r);
  void Add(ingest::HloModuleRecord&& r);
  // Writes the instructions and computations held (at the file's end, before the module's derived facts read
  // them).
  void Flush();

 private:
  // The columns of one instructions row; unset fields leave what another file wrote.
  struct InstructionRow {
    std::optional<std::string> opcode, op_type, fusion_kind, custom_call_target;
    std::optional<int64_t> computation_id, shape_id, op_name_id, source_file_id, source_line, sequence_index;
    std::optional<bool> is_root;
  };
  // An instruction held for the batch. Its op_name is interned with the batch's others (one lookup, one bulk
  // insert: a big program's op_names are nearly all new), then its text cut (store/facts/long_text.h).
  struct PendingInstruction {
    std::string name;
    InstructionRow row;
    std::string shape, op_name, source_file;  // the interned fields ("" when none)
    std::string text;                         // the printed text, "" when none
    // Where `text` prints the fields, as the parser says (CutInternedParts checks the bytes).
    ingest::InstructionRecord::TextSpan shape_at, op_name_at, source_file_at;
    int64_t text_index = -1;  // its text's index in texts_ at Flush, or -1
  };

  // Records the whole texts the batch about to be written replaces (FileContext::LongTextReplaced).
  void NoteReplacedTexts(const std::vector<int64_t>& text_ids);

  FileContext* file_;
  // Each instruction's text as stored, by TextHash of its name, when the module was stored before this file:
  // its rows from earlier files (read at the first batch), then this file's. Empty for a module this file
  // creates. A hash collision can only name a text still in use, which the sweep keeps.
  std::unordered_map<int64_t, int64_t> stored_texts_;
  bool stored_texts_read_ = false;
  std::vector<PendingInstruction> pending_;
  std::vector<LongText> texts_;
  BulkBatch instructions_;
  BulkBatch computations_;
};

}  // namespace xladb::store

#endif  // XLADB_STORE_WRITE_ROWS_HLO_MODULE_ROWS_H_
