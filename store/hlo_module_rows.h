// HloModuleRows: instructions, computations and the module header, from every format that prints them (the HLO
// module text, docs/formats.md §7, and the instruction lines other dumps carry), as rows of one module.
//
//   InstructionRecord  → instructions(name, computation_id, opcode, shape_id, op_type, op_name_id,
//                        source_file_id, source_line, fusion_kind, custom_call_target, is_root, sequence_index,
//                        text_id). Names, shapes and source paths are interned (store/interned_texts.h); the
//                        instruction's full text goes to long_texts, stored once by its hash. A field a format
//                        does not print is NULL and leaves what another file wrote (COALESCE); is_root is known
//                        only from module text (a record with a computation).
//   ComputationRecord  → computations(name, is_entry, instruction_count, execution_thread)
//   HloModuleRecord    → modules.hlo_entry_signature (the entry computation layout without layouts,
//                        '(f32[8], s32[]) -> f32[8]'), and FileFacts.hlo_fingerprint
//
// Contract: owned by one file's FileWriter; statement errors go to FileRows::Guard. Not thread-safe.
#ifndef XLADB_STORE_HLO_MODULE_ROWS_H_
#define XLADB_STORE_HLO_MODULE_ROWS_H_

#include <cstdint>
#include <string>

#include "ingest/records.h"
#include "store/file_rows.h"

namespace xladb::store {

class HloModuleRows {
 public:
  explicit HloModuleRows(FileRows* file) : file_(file) {}

  void Add(ingest::InstructionRecord&& r);
  void Add(ingest::ComputationRecord&& r);
  void Add(ingest::HloModuleRecord&& r);

 private:
  int64_t TextId(const std::string& text);

  FileRows* file_;
};

}  // namespace xladb::store

#endif  // XLADB_STORE_HLO_MODULE_ROWS_H_
