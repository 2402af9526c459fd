-- xladb schema migration from version 2 to version 3. Database::Open runs it on a version-2 file (and after
-- migrate_v1.sql's first part on a version-1 file), inside the transaction that applies schema.sql, at the
-- line below that says so.
--
-- Version 3 adds, each as the last column of its table (a new file has the same column order):
--   * modules.folder: the module's folder inside the run, part of the module's key, so multi-host dumps
--     (host0/module_0001…, host1/module_0001…) are distinct modules instead of one that fails on the second
--     host's `allocation 0`. Existing modules were all keyed without it: ''.
--   * runs.content_digest: what an upload held, so a second upload of other content into the same run name
--     needs --append instead of silently merging.
--   * ingest_jobs.append, .content_digest, .source_description and .files_received: a resumed job keeps them.
-- module_memory gains the column folder; it is dropped here and schema.sql creates it anew.

DROP VIEW IF EXISTS module_memory;
ALTER TABLE runs ADD COLUMN content_digest TEXT;
ALTER TABLE modules ADD COLUMN folder TEXT NOT NULL DEFAULT '';
ALTER TABLE ingest_jobs ADD COLUMN append INTEGER NOT NULL DEFAULT 0;
ALTER TABLE ingest_jobs ADD COLUMN content_digest TEXT;
ALTER TABLE ingest_jobs ADD COLUMN source_description TEXT;
ALTER TABLE ingest_jobs ADD COLUMN files_received INTEGER;

-- @apply schema.sql
