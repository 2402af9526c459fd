-- xladb schema migration from version 7 to version 8, on SQLite and PostgreSQL alike (the portable subset,
-- translated like schema.sql). Database::Open runs it on a version-7 store, inside the transaction that
-- applies schema.sql, at the line below that says so.
--
-- Version 8
--   * the view module_matches counts a module's key-mates and its rank among the modules of its program with
--     correlated subqueries instead of window functions, so that SQLite indexes the view's join of the
--     modules with themselves (two 500-module runs: 48 ms to 6 ms; the join compared every pair before). Its
--     rows are the same. Only the stored text changes: xladb's own queries already run the text compiled in.

-- SQLite keeps a view's text while CREATE VIEW IF NOT EXISTS finds it: drop it first. PostgreSQL's schema says
-- CREATE OR REPLACE VIEW (the same columns), which keeps what depends on the view and its grants.
-- @dialect sqlite
DROP VIEW IF EXISTS module_matches;
-- @dialect all

-- @apply schema.sql
