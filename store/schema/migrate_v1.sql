-- xladb schema migration from version 1 to version 2. Database::Open runs it once, on a version-1 file,
-- inside the transaction that applies schema.sql, at the line below that says so.
--
-- Version 2 changed where three facts live, so that a big dump is written in the order of the tables' keys
-- (schema.sql, "Write order decides the layout"):
--   * BufferLiveRange lines moved from buffer_values.live_start/live_end to the table buffer_live_ranges (the
--     view live_ranges keeps its columns).
--   * The InstructionSequence moved from instructions.schedule_time to the table schedule.
--   * instructions and long_texts became rowid tables whose key is a UNIQUE index; long_texts.text_id is a
--     small surrogate key and the text's hash moved to long_texts.hash.
--   * instructions.source_file became source_file_id, interned in source_files.
--   * buffer_values.positions may be NULL for a value whose only position is its own (value_positions still
--     lists it); version-1 rows keep their full lists, which mean the same.

-- Views that name moved columns or tables go first; schema.sql creates their new versions.
DROP VIEW IF EXISTS live_ranges;
DROP VIEW IF EXISTS instruction_sequence;
DROP VIEW IF EXISTS peak_buffer_details;
DROP VIEW IF EXISTS value_positions;
ALTER TABLE instructions RENAME TO instructions_v1;
-- The version-2 instructions table (unchanged up to version 5), which the second part below fills;
-- migrate_v5.sql then turns it into version 6's.
CREATE TABLE instructions (
  instruction_id     INTEGER PRIMARY KEY,
  module_id          INTEGER NOT NULL,
  name               TEXT NOT NULL,
  computation        TEXT,
  opcode             TEXT,
  shape_id           INTEGER,
  op_type            TEXT,
  op_name            TEXT,
  source_file_id     INTEGER,
  source_line        INTEGER,
  fusion_kind        TEXT,
  custom_call_target TEXT,
  is_root            INTEGER,
  sequence_index     INTEGER,
  text_id            INTEGER,
  file_id            INTEGER NOT NULL,
  UNIQUE (module_id, name)
);
ALTER TABLE long_texts RENAME TO long_texts_v1;
-- The version-2 long_texts table (unchanged up to version 8), which the second part below fills;
-- migrate_v8.sql then adds version 9's columns.
CREATE TABLE long_texts (
  text_id INTEGER PRIMARY KEY,
  hash    INTEGER NOT NULL UNIQUE,
  text    TEXT NOT NULL
);

-- @apply schema.sql

INSERT INTO buffer_live_ranges(module_id, value_id, live_start, live_end, file_id)
SELECT module_id, value_id, live_start, live_end, file_id FROM buffer_values WHERE live_start IS NOT NULL;
ALTER TABLE buffer_values DROP COLUMN live_start;
ALTER TABLE buffer_values DROP COLUMN live_end;

INSERT INTO schedule(module_id, time, instruction, file_id)
SELECT module_id, schedule_time, name, file_id FROM instructions_v1 WHERE schedule_time IS NOT NULL;
INSERT INTO long_texts(hash, text) SELECT text_id, text FROM long_texts_v1 ORDER BY rowid;
DROP TABLE long_texts_v1;

INSERT OR IGNORE INTO source_files(path)
SELECT DISTINCT source_file FROM instructions_v1 WHERE source_file IS NOT NULL;
INSERT INTO instructions(module_id, name, computation, opcode, shape_id, op_type, op_name, source_file_id,
                         source_line, fusion_kind, custom_call_target, is_root, sequence_index, text_id, file_id)
SELECT i.module_id, i.name, i.computation, i.opcode, i.shape_id, i.op_type, i.op_name, sf.source_file_id,
       i.source_line, i.fusion_kind, i.custom_call_target, i.is_root, i.sequence_index, t.text_id, i.file_id
FROM instructions_v1 i
LEFT JOIN source_files sf ON sf.path = i.source_file
LEFT JOIN long_texts t ON t.hash = i.text_id;
DROP TABLE instructions_v1;
