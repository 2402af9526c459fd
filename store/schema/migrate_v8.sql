-- xladb schema migration from version 8 to version 9, on SQLite and PostgreSQL alike (the portable subset,
-- translated like schema.sql). Database::Open runs it on a version-8 store, inside the transaction that
-- applies schema.sql, at the line below that says so.
--
-- Version 9
--   * long_texts keeps a text without the parts that shapes, names and source_files hold already (its result
--     shape, op_name and source file path), each cut part's id in a new column (store/facts/long_text.h);
--     the new view long_text_details puts them back, and instruction_details reads its texts through it.
--     Stored texts are not rewritten: their new columns are NULL, which means "stored whole", so both views
--     show them as before. Texts written from now on are cut.

-- Added before schema.sql, whose views name them. PostgreSQL says IF NOT EXISTS, which SQLite lacks (a SQLite
-- file at version 8 never has them).
-- @dialect sqlite
ALTER TABLE long_texts ADD COLUMN shape_id INTEGER;
ALTER TABLE long_texts ADD COLUMN op_name_id INTEGER;
ALTER TABLE long_texts ADD COLUMN source_file_id INTEGER;
-- @dialect postgresql
/*
ALTER TABLE long_texts ADD COLUMN IF NOT EXISTS shape_id INTEGER;
ALTER TABLE long_texts ADD COLUMN IF NOT EXISTS op_name_id INTEGER;
ALTER TABLE long_texts ADD COLUMN IF NOT EXISTS source_file_id INTEGER;
*/
-- @dialect all

-- SQLite keeps a view's text while CREATE VIEW IF NOT EXISTS finds it: drop it first. PostgreSQL's schema says
-- CREATE OR REPLACE VIEW (the same columns), which keeps what depends on the view and its grants.
-- @dialect sqlite
DROP VIEW IF EXISTS instruction_details;
-- @dialect all

-- @apply schema.sql
