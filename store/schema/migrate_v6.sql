-- xladb schema migration from version 6 to version 7, on SQLite and PostgreSQL alike (the portable subset,
-- translated like schema.sql). Database::Open runs it on a version-6 store (after the earlier migrations'
-- first parts on older files), inside the transaction that applies schema.sql, at the line below that says
-- so. Its second part lists every module in modules_to_rekey; store/schema/module_rekey.h then re-keys them in C++
-- (the identity key is an XXH3 hash SQL cannot compute) and drops the table: SQLite in the same
-- transaction, PostgreSQL in the next one when the store is opened for writing (a store opened before that
-- finished finishes it then).
--
-- Version 7
--   * modules.folder is the module's folder below the dump root: leading generic dump folder names
--     (xla_dump, dump, …: ingest/source/run_name.h ModuleFolderBelowDumpRoot) are no longer part of it, so a dump
--     has the same identity whether it arrived as <run>/xla_dump/… or as xla_dump's contents. Where the
--     shorter folder would give a row the key of another row of its run (the unique index modules_by_key),
--     the module keeps its old folder;
--   * a module named `module_<ID>` by a file name without its name (dumps up to 2021-06) takes its ENTRY
--     computation's name, and its hlo_entry_signature, where the header printed none, comes from its stored
--     ENTRY instructions (what ingest now reads from the ENTRY line);
--   * new columns modules.hlo_entry_sharding and modules.entry_sharding: the ENTRY parameters' and ROOT's
--     shardings, part of identity where a module has them (store/facts/module_facts.h); the re-key fills them for
--     stored modules from their stored ENTRY instructions;
--   * entry signatures lose XLA's `/*index=N*/` comments, and identity_key is recomputed from the new folder,
--     signature and sharding.

-- module_memory gains entry_sharding: SQLite recreates the view; PostgreSQL's CREATE OR REPLACE VIEW adds the
-- column at the end in place (its dependent views stay). PostgreSQL adds the columns only where they are
-- missing (a store that a test or an interrupted binary left in between).
-- @dialect sqlite
ALTER TABLE modules ADD COLUMN hlo_entry_sharding TEXT;
ALTER TABLE modules ADD COLUMN entry_sharding TEXT NOT NULL DEFAULT '';
DROP VIEW IF EXISTS module_memory;
-- @dialect postgresql
/*
ALTER TABLE modules ADD COLUMN IF NOT EXISTS hlo_entry_sharding TEXT;
ALTER TABLE modules ADD COLUMN IF NOT EXISTS entry_sharding TEXT NOT NULL DEFAULT '';
*/
-- @dialect all

-- @apply schema.sql

CREATE TABLE modules_to_rekey AS SELECT module_id FROM modules;
