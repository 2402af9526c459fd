-- xladb schema migration from version 5 to version 6. Database::Open runs it on a version-5 file (after the
-- earlier migrations' first parts on older files), inside the transaction that applies schema.sql, at the
-- line below that says so; then, in the same transaction, it hashes the names and counts every run's summary
-- (store/facts/interned_texts.h, store/facts/run_summary.h), as the writer would have.
--
-- Version 6
--   * adds the run summary runs.file_count, ingested_file_count, error_file_count and module_count, as the
--     last columns of runs;
--   * replaces the index kernel_spill_summary_by_run with kernel_spill_summary_by_run_rate;
--   * interns instruction names: instructions.computation and op_name become computation_id and op_name_id
--     (the last columns of instructions) into the new table names. instruction_details and
--     peak_buffer_details spell them out as before; they are dropped here and schema.sql creates them anew;
--   * retrace_groups groups by run_name too (the same rows; PostgreSQL wants every selected column grouped).
-- A new file has the same column order.

DROP INDEX IF EXISTS kernel_spill_summary_by_run;  -- schema.sql creates kernel_spill_summary_by_run_rate
DROP VIEW IF EXISTS peak_buffer_details;
DROP VIEW IF EXISTS instruction_details;
DROP VIEW IF EXISTS retrace_groups;
ALTER TABLE runs ADD COLUMN file_count INTEGER NOT NULL DEFAULT 0;
ALTER TABLE runs ADD COLUMN ingested_file_count INTEGER NOT NULL DEFAULT 0;
ALTER TABLE runs ADD COLUMN error_file_count INTEGER NOT NULL DEFAULT 0;
ALTER TABLE runs ADD COLUMN module_count INTEGER NOT NULL DEFAULT 0;
-- Added before schema.sql, whose views name them (an ALTER TABLE in a later second part checks every view).
ALTER TABLE instructions ADD COLUMN computation_id INTEGER;
ALTER TABLE instructions ADD COLUMN op_name_id INTEGER;

-- @apply schema.sql

-- Each distinct name once; its hash is filled in C++ (store/facts/interned_texts.h HashAllNames) after this part.
-- A temporary table keyed by the text finds each name's id.
INSERT INTO names(hash, text)
SELECT 0, computation FROM instructions WHERE computation IS NOT NULL
UNION SELECT 0, op_name FROM instructions WHERE op_name IS NOT NULL;
CREATE TEMP TABLE v6_name_ids (text TEXT PRIMARY KEY, name_id INTEGER NOT NULL);
INSERT INTO temp.v6_name_ids SELECT text, name_id FROM names;
UPDATE instructions
SET computation_id = (SELECT name_id FROM temp.v6_name_ids WHERE text = instructions.computation),
    op_name_id = (SELECT name_id FROM temp.v6_name_ids WHERE text = instructions.op_name)
WHERE computation IS NOT NULL OR op_name IS NOT NULL;
DROP TABLE temp.v6_name_ids;
ALTER TABLE instructions DROP COLUMN computation;
ALTER TABLE instructions DROP COLUMN op_name;
