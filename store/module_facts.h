// Module facts derived from a module's stored rows at ingest: what the module is across runs, and padded
// memory figures XLA does not print.
//
//   * modules.entry_signature: the entry computation's parameter and output shapes, read from the buffer
//     assignment's allocation flags (docs/formats.md §2.2: `parameter N, shape |…| at ShapeIndex {…}` and
//     `output shape is |…|`). Parameters in number order; a parameter whose allocations print different
//     shapes (a tuple parameter split over allocations, 2025-08+) is the tuple of them in shape-index order.
//     '(f32[8,128], s32[]) -> f32[8]'. A module without allocations takes the HLO text's signature
//     (modules.hlo_entry_signature, from its entry_computation_layout, §7), else ''. When both exist,
//     modules.entry_signature_confirmed says whether they agree (store/shape_text.h compares them).
//   * modules.identity_key: hex XXH3-64 of (name, stage, entry_signature, folder).
//   * module_summary.live_peak_padded_bytes/_time: the most padded bytes live at once. A value occupies the
//     slice (allocation, offset, size) of its ` value:` line; a slice counts once while any of its values is
//     live (live_start..live_end inclusive, §4), so values sharing memory are not counted twice.
//   * module_summary.color0_total_bytes and module_memory_spaces: allocation bytes per memory space (color),
//     with each space's padded live peak.
//
// Contract: runs on the caller's read-write connection inside its transaction (the writer's file
// transaction, or the schema migration's); throws SQLite::Exception on database errors, like the writer's
// own statements (the callers turn them into Status). Not thread-safe; one connection, one thread. The
// connection must outlive the object, which keeps its statements prepared.
#ifndef XLADB_STORE_MODULE_FACTS_H_
#define XLADB_STORE_MODULE_FACTS_H_

#include <SQLiteCpp/SQLiteCpp.h>

#include <cstdint>
#include <memory>
#include <string>

namespace xladb::store {

class DerivedModuleFacts {
 public:
  explicit DerivedModuleFacts(SQLite::Database& sql);
  ~DerivedModuleFacts();
  DerivedModuleFacts(const DerivedModuleFacts&) = delete;
  DerivedModuleFacts& operator=(const DerivedModuleFacts&) = delete;

  // Recomputes the derived facts of one module from its rows (a module may span several files).
  void Update(int64_t module_id);

  struct Statements;  // the prepared statements (module_facts.cc)

 private:
  SQLite::Database& sql_;
  std::unique_ptr<Statements> st_;  // prepared on first use
};

// Every module of the file (schema migration to version 4).
void UpdateDerivedFactsOfAllModules(SQLite::Database& sql);

// The identity key of a module with these parts (exposed for tests).
std::string ModuleIdentityKey(const std::string& name, const std::string& stage, const std::string& entry_signature,
                              const std::string& folder);

}  // namespace xladb::store

#endif  // XLADB_STORE_MODULE_FACTS_H_
