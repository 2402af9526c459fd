// BufferAssignmentRows: the records of a buffer assignment (docs/formats.md §2) and of its values file (§3)
// as rows of one module.
//
//   AllocationRecord       → allocations: one row per `allocation N:` header, written a batch at a time; the
//                            same index printed twice breaks the table's key, and the file is an error
//   AllocatedValueRecord   → buffer_values: instruction, shape_index, is_phi, color, allocation_index,
//                            offset_bytes, size_bytes, shape_id (a ` value:` line, §2.3)
//   CrossColorReuseRecord  → buffer_values.cross_color (§2.4)
//   ValueDetailRecord      → buffer_values.positions, uses, uses_state, as JSON arrays (a Used-values block,
//                            §2.5); positions stays NULL when the value's only position is its own
//   TotalBytesRecord       → module_summary.total_bytes, through FileFacts
//
// A value's ` value:` line and its Used-values block become one row, written once: the line waits in
// PendingValues until its block arrives (or the file ends). A row merges into one another file wrote
// (ON CONFLICT … COALESCE), so the split format's buffer assignment and values file give one row per value.
// The file's allocated values also give FileFacts.value_fingerprint, an order-independent sum of a hash of
// each value's (size, shape).
//
// The object is also the module's value index: FindValue() names a value id by (instruction, shape index),
// first among this file's values, then among the module's stored ones (loaded on the first miss).
//
// Contract: owned by one file's FileWriter; statement errors go to FileContext::Guard. Not thread-safe.
#ifndef XLADB_STORE_WRITE_ROWS_BUFFER_ASSIGNMENT_ROWS_H_
#define XLADB_STORE_WRITE_ROWS_BUFFER_ASSIGNMENT_ROWS_H_

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "ingest/records/records.h"
#include "store/write/rows/file_context.h"
#include "store/write/rows/first_seen_ids.h"
#include "store/write/rows/pending_values.h"
#include "store/backend/bulk_batch.h"
#include "store/write/rows/value_key_index.h"

namespace xladb::store {

class BufferAssignmentRows {
 public:
  explicit BufferAssignmentRows(FileContext* file);

  void Add(ingest::AllocationRecord&& r);
  void Add(ingest::AllocatedValueRecord&& r);
  void Add(ingest::CrossColorReuseRecord&& r);
  void Add(ingest::TotalBytesRecord&& r);
  void Add(ingest::ValueDetailRecord&& r);

  // The id of the value named (instruction, shape_index): this file's, else (split files) the module's stored.
  std::optional<int64_t> FindValue(std::string_view instruction, std::string_view shape_index);
  // Only among this file's values so far (no database read).
  std::optional<int64_t> FindValueInFile(std::string_view instruction, std::string_view shape_index);

  // At the file's end: WritePending() stores values whose Used-values block never came; Flush() writes the
  // batched rows (before anything reads allocations or buffer_values).
  void WritePending();
  void Flush();

 private:
  // The columns of one buffer_values row a record knows; WriteValue merges it into the stored row. The texts
  // are views of the record being handled (or of PendingValues); the batch copies them.
  struct ValueRow {
    std::string_view instruction;
    std::string_view shape_index;
    bool is_phi = false;
    std::optional<int32_t> color, cross_color;
    std::optional<int64_t> allocation_index, offset, size, shape_id;
    std::optional<std::string_view> positions, uses;  // JSON
    const char* uses_state = nullptr;
  };
  static ValueRow RowOf(const ingest::ValueRef& ref);
  static void FoldPending(const PendingValues::Slot& slot, ValueRow* v);
  void WriteValue(int64_t id, const ValueRow& v);

  FileContext* file_;
  BulkBatch allocations_;
  BulkBatch values_;
  PendingValues pending_;
  ValueKeyIndex value_keys_;  // this file's values (and, once needed, the module's stored ones)
  FirstSeenIds written_ids_;  // the value ids written, when the file created the module
  bool stored_keys_loaded_ = false;
  std::string positions_json_, uses_json_;  // reused buffers
};

}  // namespace xladb::store

#endif  // XLADB_STORE_WRITE_ROWS_BUFFER_ASSIGNMENT_ROWS_H_
