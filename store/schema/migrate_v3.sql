-- xladb schema migration from version 3 to version 4. Database::Open runs it on a version-3 file (after the
-- earlier migrations' first parts on older files), inside the transaction that applies schema.sql, at the
-- line below that says so; then, in the same transaction, it computes the new derived columns of every
-- stored module (store/facts/module_facts.h), as ingest would have.
--
-- Version 4 adds, each as the last column of its table (a new file has the same column order):
--   * modules.entry_signature and modules.identity_key: which module is which across runs (module name,
--     stage, entry signature and folder); modules.hlo_entry_signature and entry_signature_confirmed (the HLO
--     text's view of it; NULL for stored modules, whose HLO header was not kept).
--   * module_summary.live_peak_padded_bytes, .live_peak_padded_time and .color0_total_bytes.
--   * the table module_memory_spaces and the views module_matches and retrace_groups (schema.sql).
-- module_memory gains columns; it is dropped here and schema.sql creates it anew.

DROP VIEW IF EXISTS module_memory;
ALTER TABLE modules ADD COLUMN entry_signature TEXT NOT NULL DEFAULT '';
ALTER TABLE modules ADD COLUMN identity_key TEXT NOT NULL DEFAULT '';
ALTER TABLE modules ADD COLUMN hlo_entry_signature TEXT;
ALTER TABLE modules ADD COLUMN entry_signature_confirmed INTEGER;
ALTER TABLE module_summary ADD COLUMN live_peak_padded_bytes INTEGER;
ALTER TABLE module_summary ADD COLUMN live_peak_padded_time INTEGER;
ALTER TABLE module_summary ADD COLUMN color0_total_bytes INTEGER;

-- @apply schema.sql
