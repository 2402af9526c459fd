// ModuleFactWrites: the writes of a list of modules' derived facts (store/facts/module_facts.h), one statement a
// table however many modules: their rows' identity columns, their summaries and their memory spaces. The rows
// go as a VALUES list (store/backend/values_list.h) that an UPDATE … FROM joins by module id (SQLite 3.33+,
// PostgreSQL), the memory spaces as a batch of rows (store/backend/bulk_batch.h); they were one statement a
// module and table, on PostgreSQL a third of a real run folder's statements.
//
// Rows to tables:
//   * Header -> modules: hlo_entry_sharding, and hlo_entry_signature when the text printed one (NULL: the
//     stored one stays), as the HLO text's header gives them (FileFacts::hlo_header).
//   * Identity -> modules: entry_signature, identity_key, entry_signature_confirmed, entry_sharding, and the
//     fingerprint with its source when one was printed (a buffer assignment's never replaces the HLO text's).
//   * Summary -> module_summary: the printed figures (NULL: the stored one stays), the aggregates recounted
//     from the module's rows, and the padded peaks with color0_total_bytes when computed (peaks_read).
//   * Space -> module_memory_spaces, after the rows of the modules listed as cleared are deleted.
//   * a module created since the last write -> its empty module_summary row (NewSummaries), before its summary
//     is written: one statement for the group's new modules, not an insert each as they are created.
//
// Contract: each call sends its statements on `sql` without awaiting them (SqlStatement::ExecuteLater; on
// PostgreSQL an error surfaces at the next call that waits, inside the caller's transaction), a list of at
// most kRowsAStatement rows a statement. The statements are prepared on the connection of the first call,
// which must be the same every call. Throws SqlError. Not thread-safe.
#ifndef XLADB_STORE_FACTS_MODULE_FACT_WRITES_H_
#define XLADB_STORE_FACTS_MODULE_FACT_WRITES_H_

#include <cstddef>
#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "store/backend/in_list_read.h"
#include "store/backend/sql_connection.h"
#include "store/backend/values_list.h"

namespace xladb::store {

class ModuleFactWrites {
 public:
  static constexpr size_t kRowsAStatement = 256;

  // Whose fingerprint an identity carries.
  enum class FingerprintOf : int64_t { kNone = 0, kHloText = 1, kAllocatedValues = 2 };

  struct Header {
    int64_t module_id = 0;
    std::string entry_sharding;
    std::optional<std::string> entry_signature;
  };
  struct Identity {
    int64_t module_id = 0;
    std::string signature, key;
    std::optional<bool> confirmed;  // nullopt: nothing to compare
    std::string sharding;
    std::optional<std::string> fingerprint;
    FingerprintOf fingerprint_of = FingerprintOf::kNone;
  };
  struct Summary {
    int64_t module_id = 0;
    std::optional<int64_t> total_bytes, schedule_length, peak_time, stack_trace_peak_bytes;  // as printed
    bool peaks_read = false;  // the padded peaks were computed: written (nullopt: no live ranges)
    std::optional<int64_t> padded_bytes, padded_time;
  };
  struct Space {
    int64_t module_id = 0, color = 0, allocations = 0, bytes = 0;
    std::optional<int64_t> padded_bytes;
  };

  ModuleFactWrites();

  // The empty summary rows of `modules` that exist and have none (a module its group created; one removed
  // since, by a replaced file, is left out).
  void NewSummaries(SqlConnection& sql, std::span<const int64_t> modules);
  void Headers(SqlConnection& sql, const std::vector<Header>& rows);
  void Identities(SqlConnection& sql, const std::vector<Identity>& rows);
  void Summaries(SqlConnection& sql, const std::vector<Summary>& rows);
  // Deletes the memory spaces of the modules `cleared`, then inserts `rows`.
  void Spaces(SqlConnection& sql, std::span<const int64_t> cleared, const std::vector<Space>& rows);

 private:
  ValuesList headers_, identities_, summaries_;
  InListRead new_summaries_, clear_spaces_;
};

}  // namespace xladb::store

#endif  // XLADB_STORE_FACTS_MODULE_FACT_WRITES_H_
