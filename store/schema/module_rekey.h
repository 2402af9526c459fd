// The schema migration to version 7's re-key of stored modules (store/schema/migrate_v6.sql lists them in the table
// modules_to_rekey), so that a store written before keys its modules as ingest now does:
//   * folder: ingest::ModuleFolderBelowDumpRoot(folder) (leading generic dump folders dropped). Where the
//     new folder would give the row the (run, name, stage, xla_module_id, folder) of another row of its run
//     (the unique index modules_by_key: the same dump ingested twice into one run under two arrivals), the
//     row keeps its old folder: merging two rows' files is not a migration's call;
//   * name: a module named by the `module_<ID>` placeholder (a 2020-era file name without the module's name,
//     docs/formats.md) takes its ENTRY computation's name, which XLA gives the module too, when the HLO text
//     was stored and no other row of the run has that key;
//   * hlo_entry_signature, where the HLO text's header printed no entry_computation_layout (dumps up to 2020),
//     from the stored ENTRY computation's parameter and ROOT instructions: the shapes its ENTRY line prints,
//     which ingest now reads;
//   * hlo_entry_sharding (new in version 7), for every module with stored ENTRY instructions, the same way;
//   * entry_signature (without `/*index=N*/` comments), entry_sharding and identity_key, recomputed
//     (DerivedModuleFacts) once every listed module's shardings are in.
// Then the table is dropped.
//
// Contract: runs on the caller's read-write connection inside its write transaction; throws SqlError on
// database errors (the callers turn them into Status). Idempotent: a re-key of a re-keyed module changes
// nothing. Not thread-safe; one connection, one thread.
#ifndef XLADB_STORE_SCHEMA_MODULE_REKEY_H_
#define XLADB_STORE_SCHEMA_MODULE_REKEY_H_

#include "store/backend/sql_connection.h"

namespace xladb::store {

// The table the migration fills; present only while a re-key is pending.
inline constexpr const char* kModulesToRekeyTable = "modules_to_rekey";

// Re-keys the modules listed in modules_to_rekey, then drops that table. The caller knows it exists.
void RekeyListedModules(SqlConnection& sql);

}  // namespace xladb::store

#endif  // XLADB_STORE_SCHEMA_MODULE_REKEY_H_
