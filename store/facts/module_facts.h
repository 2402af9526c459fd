// Module facts derived from a module's stored rows at ingest, all in one place: what the module is across
// runs, its summary, its spill summary, its fingerprint, and padded memory figures XLA does not print.
//
// After the files of modules (UpdateAfterFiles; the writer calls it once a group, at its COMMIT, with each
// module the group wrote and the facts of its files there merged by MergeLaterFile), from what they printed
// (FileFacts) and the modules' rows:
//   * module_summary's printed figures (total_bytes, schedule_length, peak_time, stack_trace_peak_bytes): a
//     file that prints one sets it; one that does not leaves it;
//   * module_summary's aggregates (allocation bytes by kind, counts of allocations, values, live ranges,
//     instructions, peak_bytes and peak_buffer_count), recomputed from the rows, since a module can span
//     several files;
//   * kernel_spill_summary: per kernel, the sums of its VMEM/SMEM spill and fill counters and their rates
//     (numerator over denominator), recomputed when the file's counters changed;
//   * modules.hlo_entry_sharding and hlo_entry_signature: what the HLO text's header printed (FileFacts::hlo_header),
//     first, since the identity below reads them;
//   * modules.fingerprint: the HLO text's program fingerprint when a file printed one (fingerprint_source
//     'hlo_text'), else an order-independent hash of the buffer assignment's values ('buffer_assignment'),
//     which never replaces an HLO one;
//   * then, when rows they depend on changed, the facts below (Update). These read the modules' rows a list of
//     modules at a time (store/backend/in_list_read.h: a read is one statement for up to 256 modules, and a
//     list's reads one round trip on PostgreSQL), then send their writes, a statement a table for the list
//     (store/facts/module_fact_writes.h).
//
//   * modules.entry_signature: the entry computation's parameter and output shapes, read from the buffer
//     assignment's allocation flags (docs/formats.md §2.2: `parameter N, shape |…| at ShapeIndex {…}` and
//     `output shape is |…|`). Parameters in number order; a parameter whose allocations print different
//     shapes (a tuple parameter split over allocations, 2025-08+) is the tuple of them in shape-index order.
//     '(f32[8,128], s32[]) -> f32[8]'. A module without allocations takes the HLO text's signature
//     (modules.hlo_entry_signature, from its entry_computation_layout, §7), else ''. When both exist,
//     modules.entry_signature_confirmed says whether they agree (store/facts/shape_text.h compares them). XLA's
//     `/*index=N*/` comments inside long tuple shapes are not part of it (version 7).
//     Where the buffer assignment prints no shapes ('?', dumps up to 2020) the HLO text's signature wins.
//   * modules.entry_sharding: the ENTRY parameters' and ROOT's shardings (ingest/text/entry_sharding.h) of the
//     before_optimizations text of the same name, module number and folder, which keeps the program's own
//     in/out shardings; without one, the module's own HLO text's (modules.hlo_entry_sharding); '' without
//     either (version 7). A before_optimizations text arriving after its siblings recomputes their identity.
//   * modules.identity_key: hex XXH3-64 of (name, stage, entry_signature, folder), and entry_sharding when it
//     is not '' (version 7).
//   * module_summary.live_peak_padded_bytes/_time: the most padded bytes live at once. A value occupies the
//     slice (allocation, offset, size) of its ` value:` line; a slice counts once while any of its values is
//     live (live_start..live_end inclusive, §4), so values sharing memory are not counted twice.
//   * module_summary.color0_total_bytes and module_memory_spaces: allocation bytes per memory space (color),
//     with each space's padded live peak.
//
// Contract: runs on the caller's read-write connection inside its transaction (the writer's group
// transaction, or the schema migration's); throws SqlError on database errors, like the writer's
// own statements (the callers turn them into Status). Not thread-safe; one connection, one thread. The
// connection must outlive the object, which keeps its statements prepared.
#ifndef XLADB_STORE_FACTS_MODULE_FACTS_H_
#define XLADB_STORE_FACTS_MODULE_FACTS_H_

#include "store/backend/sql_connection.h"

#include <cstdint>
#include <memory>
#include <optional>
#include <span>
#include <string>

namespace xladb::store {

// What one file printed about its module, or changed in it, that the module's derived rows come from.
struct FileFacts {
  std::optional<int64_t> total_bytes, schedule_length, peak_time, stack_peak;  // as printed
  std::optional<uint64_t> hlo_fingerprint;  // the HLO module text's program fingerprint
  bool saw_allocated_values = false;        // the file has a buffer assignment's values…
  uint64_t value_fingerprint = 0;           // …and this sum of a hash of each value's (size, shape)
  bool counters_changed = false;            // utilization counters were added or removed
  bool rows_changed = false;                // allocations, values, live ranges or the module header changed
  bool entry_sharding_changed = false;      // the HLO text set hlo_entry_sharding (its siblings' identity)
  // The HLO text's module header, for the module's row: hlo_entry_sharding ('' when none) and
  // hlo_entry_signature (nullopt: the text prints none, the stored one stays). Written by UpdateAfterFiles
  // before anything reads them, one statement a list of modules (it was a statement a file).
  struct HloHeader {
    std::string entry_sharding;
    std::optional<std::string> entry_signature;
  };
  std::optional<HloHeader> hlo_header;
};

// Folds the facts of a later file of the same module into `into`, so that one UpdateAfterFiles with the result
// leaves what one call per file, in their order, would: a printed figure or fingerprint the later file has
// replaces the earlier one, and what changed in either file changed.
void MergeLaterFile(FileFacts& into, const FileFacts& later);

// A module the files of a group wrote: its run, whether one of them created it (it has no module_summary row
// yet: UpdateAfterFiles inserts it), and their facts (one file's, or several merged in order by
// MergeLaterFile).
struct ModuleFiles {
  int64_t run_id = 0;
  int64_t module_id = 0;
  bool module_is_new = false;
  FileFacts facts;
};

class DerivedModuleFacts {
 public:
  explicit DerivedModuleFacts(SqlConnection& sql);
  ~DerivedModuleFacts();
  DerivedModuleFacts(const DerivedModuleFacts&) = delete;
  DerivedModuleFacts& operator=(const DerivedModuleFacts&) = delete;

  // Everything above, after the files of `modules` were written (each module once; a module_id of 0 is
  // skipped).
  void UpdateAfterFiles(std::span<const ModuleFiles> modules);
  // Recomputes the identity, aggregate and padded-memory facts of one module from its rows (a module may span
  // several files; the printed figures stay as stored). Returns the module's stage ("" when there is no such
  // module). Its reads run together (SqlConnection::RunTogether: one round trip on PostgreSQL), then its
  // writes are sent.
  std::string Update(int64_t module_id);
  // The identity facts alone (entry_signature, entry_signature_confirmed, entry_sharding, identity_key), from
  // the module's name, stage, folder and rows: what a re-key (store/schema/module_rekey.h) changes. Returns the
  // module's stage ("" when there is no such module).
  std::string UpdateIdentity(int64_t module_id);

  struct Statements;  // the prepared statements (module_facts.cc)

 private:
  Statements& statements();  // prepared on first use

  SqlConnection& sql_;
  std::unique_ptr<Statements> st_;
};

// Every module of the file (schema migration to version 4).
void UpdateDerivedFactsOfAllModules(SqlConnection& sql);

// The identity key of a module with these parts (exposed for tests). `entry_sharding` joins the hash only
// when it is not empty.
std::string ModuleIdentityKey(const std::string& name, const std::string& stage, const std::string& entry_signature,
                              const std::string& folder, const std::string& entry_sharding = "");

}  // namespace xladb::store

#endif  // XLADB_STORE_FACTS_MODULE_FACTS_H_
