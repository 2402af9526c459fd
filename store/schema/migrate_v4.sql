-- xladb schema migration from version 4 to version 5. Database::Open runs it on a version-4 file (after the
-- earlier migrations' first parts on older files), inside the transaction that applies schema.sql.
--
-- Version 5 adds runs.detail_pruned_at_us, as the last column of runs (a new file has the same column order):
-- when `xladb prune` dropped a run's detail rows (store/admin/run_lifecycle.h). NULL for every stored run.

ALTER TABLE runs ADD COLUMN detail_pruned_at_us INTEGER;

-- @apply schema.sql
