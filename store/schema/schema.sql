-- xladb schema, version 10 (PRAGMA user_version = 10; store/schema/schema_migrations.h kSchemaVersion).
--
-- One file holds every run. The tables follow the data as XLA printed it; the views at the end are the
-- stable interface for analysts (docs/schema.md). Conventions:
--   * *_bytes columns are exact bytes; *_bytes_approx were parsed from XLA's lossy human strings (§6.4).
--   * *_us columns are Unix times in microseconds (UTC).
--   * Booleans are INTEGER 0/1. Shape indices are ShapeIndex text: '{}', '{0}', '{1,2}'.
--   * Every row produced from a dump file carries that file's file_id, so a changed file can be replaced.
--   * The SQL is kept portable (no SQLite-only functions in tables); WITHOUT ROWID is the one SQLite-specific
--     storage clause, used on tables keyed by (module_id, …) to store each row once, in key order.
--   * This file is the schema of both backends. store/schema/schema_dialect.h turns it into PostgreSQL's: INTEGER is
--     BIGINT there, REAL is DOUBLE PRECISION, an INTEGER PRIMARY KEY is an identity column, WITHOUT ROWID is
--     dropped, `a IS NOT b` is `a IS DISTINCT FROM b`, char(N) is chr(N), and a view is CREATE OR REPLACE.
--     Text that differs between the dialects sits between `-- @dialect sqlite` and `-- @dialect postgresql` (whose text is one
--     /* … */ comment, so SQLite skips it) and ends at `-- @dialect all`.
--   * Write order decides the layout. Tables a dump fills in key order (buffer_values, buffer_live_ranges,
--     schedule) are keyed by it; tables it fills in an order unrelated to their lookup key (instructions,
--     long_texts) append rows under a rowid and keep the key in a narrow index. A wide row inserted at a
--     random key would dirty pages all over the table, and a big file would rewrite the table many times.

-- A run: one dump folder, archive or upload, e.g. one CI job's --xla_dump_to folder.
CREATE TABLE IF NOT EXISTS runs (
  run_id          INTEGER PRIMARY KEY,  -- surrogate key
  name            TEXT NOT NULL UNIQUE, -- folder name unless --run was given
  source_path     TEXT,                 -- the folder, archive or file it was first ingested from
  run_time_us     INTEGER NOT NULL,     -- when the run happened: --time, a time label, else newest file mtime
  run_time_source TEXT NOT NULL,        -- 'flag', 'label:<key>' or 'newest_file_mtime'
  created_at_us   INTEGER NOT NULL,     -- first ingest
  updated_at_us   INTEGER NOT NULL,     -- last ingest that changed rows
  content_digest  TEXT,                 -- uploads: hex XXH3-128 over the uploaded paths and contents, so a
                                        -- second upload of other content under the same name is noticed
                                        -- (it needs --append); NULL for folders read in place (version 3)
  detail_pruned_at_us INTEGER,          -- when `xladb prune` dropped the run's value-, live-range- and
                                        -- instruction-level rows (its summaries, peak lists and gate metrics
                                        -- stay); NULL while the run is whole (version 5)
  -- The run's summary, recounted by the writer at every commit of the run's files (store/facts/run_summary.h), so
  -- listing runs reads one row per run (version 6):
  file_count          INTEGER NOT NULL DEFAULT 0,  -- dump_files rows of the run
  ingested_file_count INTEGER NOT NULL DEFAULT 0,  -- of them with verdict 'ingested'
  error_file_count    INTEGER NOT NULL DEFAULT 0,  -- of them with verdict 'error'
  module_count        INTEGER NOT NULL DEFAULT 0   -- modules with a buffer assignment (module_memory rows)
);

-- Free-form key=value labels of a run (--label commit=abc123).
CREATE TABLE IF NOT EXISTS run_labels (
  run_id INTEGER NOT NULL REFERENCES runs(run_id),  -- the run
  key    TEXT NOT NULL,                             -- label name
  value  TEXT NOT NULL,                             -- label value
  PRIMARY KEY (run_id, key)
) WITHOUT ROWID;

-- Every file seen in a run, ingested or not, with the verdict and why.
CREATE TABLE IF NOT EXISTS dump_files (
  file_id         INTEGER PRIMARY KEY,  -- surrogate key
  run_id          INTEGER NOT NULL REFERENCES runs(run_id),  -- owning run
  path            TEXT NOT NULL,        -- path relative to the run root (folder or archive), '/'-separated
  kind            TEXT NOT NULL,        -- format decided from content: buffer_assignment, hlo_module, … (FileKindName)
  verdict         TEXT NOT NULL,        -- 'ingested', 'not_ingested' (known non-memory artifact) or 'error'
  reason          TEXT,                 -- why not ingested, or the error with its line
  size_bytes      INTEGER NOT NULL,     -- bytes of content (after decompression)
  content_hash    TEXT NOT NULL,        -- XXH3-128 of the content, hex; the identity for idempotent re-ingest
  mtime_us        INTEGER,              -- file modification time when known
  module_id       INTEGER,              -- module the file's rows belong to (NULL if none)
  line_count      INTEGER,              -- lines read
  unknown_lines   INTEGER,              -- lines inside a known format that no rule matched
  issue_count     INTEGER,              -- rows in ingest_issues for this file
  rows_written    INTEGER,              -- data rows this file inserted or updated (a value merged from
                                        -- several sections counts once per section)
  ingested_at_us  INTEGER NOT NULL,     -- when this verdict was recorded
  UNIQUE (run_id, path)
);

-- Problems found while reading a file: unknown lines, invariant violations, warnings, errors.
CREATE TABLE IF NOT EXISTS ingest_issues (
  issue_id  INTEGER PRIMARY KEY,        -- surrogate key
  file_id   INTEGER NOT NULL REFERENCES dump_files(file_id),  -- the file
  line      INTEGER NOT NULL,           -- 1-based line, 0 when not tied to one line
  severity  TEXT NOT NULL,              -- 'unknown_line', 'invariant', 'warning' or 'error'
  reason    TEXT NOT NULL               -- what is wrong, with the values involved
);
CREATE INDEX IF NOT EXISTS ingest_issues_by_file ON ingest_issues(file_id);
-- A run's file counts by verdict (ListRuns, GetRun) come from this index alone, without reading the rows.
CREATE INDEX IF NOT EXISTS dump_files_by_run_verdict ON dump_files(run_id, verdict);

-- A compiled HLO module of a run, at one stage. The same module across runs is the one with the same
-- identity_key (name, stage, entry signature, folder), never the same xla_module_id (a per-process counter,
-- §1.1); among several of one key, the view module_matches pairs them (fingerprint first, then order).
CREATE TABLE IF NOT EXISTS modules (
  module_id     INTEGER PRIMARY KEY,    -- surrogate key
  run_id        INTEGER NOT NULL REFERENCES runs(run_id),  -- owning run
  xla_module_id INTEGER,                -- module_<ID> from the file name; NULL when the name has none
  name          TEXT NOT NULL,          -- HloModule name (jit_train_step); the file stem for renamed files
  stage         TEXT NOT NULL,          -- dump stage (sm_8.0_gpu_after_optimizations, before_optimizations, …); '' if unknown
  backend       TEXT NOT NULL,          -- 'cuda', 'rocm', 'gpu', 'cpu', 'tpu' or '' (unknown)
  fingerprint   TEXT,                   -- program fingerprint (hex XXH3-64); equal fingerprints of the same
                                        -- source = the same program, whatever XLA numbered it
  fingerprint_source TEXT,              -- 'hlo_text' (HLO module text, preferred) or 'buffer_assignment'
                                        -- (allocated value sizes and shapes); compare only like with like
  folder        TEXT NOT NULL DEFAULT '', -- the folder of the module's files inside the run, '/'-separated
                                        -- ('' = the run root). Part of the module's key: multi-host TPU jobs
                                        -- write host0/module_0001…, host1/module_0001… (version 3)
  entry_signature TEXT NOT NULL DEFAULT '',  -- the entry computation's parameter and output shapes from the
                                        -- buffer assignment (§2.2): '(f32[8,128], s32[]) -> f32[8]'; a tuple
                                        -- parameter split over allocations is '(…)' (version 4). Without a
                                        -- buffer assignment, or where it prints no shapes ('?', dumps up to
                                        -- 2020), hlo_entry_signature; '' without either (version 7)
  identity_key  TEXT NOT NULL DEFAULT '', -- hex XXH3-64 of (name, stage, entry_signature, folder), and of
                                        -- entry_sharding when not '' (version 7): the module's identity across
                                        -- runs; retraces with other shapes or shardings have other keys (version 4)
  hlo_entry_signature TEXT,             -- the HLO text's entry_computation_layout without layouts (§7), when
                                        -- printed (version 4); where the header prints none (dumps up to
                                        -- 2020), the ENTRY computation line's shapes (version 7)
  entry_signature_confirmed INTEGER,    -- 1: the HLO text's signature equals the buffer assignment's, 0: it
                                        -- differs, NULL: one of them is missing (version 4)
  hlo_entry_sharding TEXT,              -- the HLO text's ENTRY parameter and ROOT shardings as printed:
                                        -- '(none, {devices=[2]0,1}) -> {replicated}'; '' when none has one,
                                        -- NULL without HLO text (version 7)
  entry_sharding TEXT NOT NULL DEFAULT '' -- the shardings in the identity: the before_optimizations text's
                                        -- hlo_entry_sharding of the same module number, else the module's own;
                                        -- '' for unsharded modules (version 7)
);
CREATE INDEX IF NOT EXISTS modules_by_run ON modules(run_id, name);
-- One row per module of a run, also when two writers (daemons sharing a PostgreSQL store) create it at once:
-- the second insert finds the first's row (store/write/file_rows.cc, FindOrCreateModule).
CREATE UNIQUE INDEX IF NOT EXISTS modules_by_key ON modules(run_id, name, stage, COALESCE(xla_module_id, -1), folder);
CREATE INDEX IF NOT EXISTS modules_by_name ON modules(name);
CREATE INDEX IF NOT EXISTS modules_by_identity ON modules(identity_key, run_id);

-- Per-module totals computed at ingest, so trend queries never scan values.
CREATE TABLE IF NOT EXISTS module_summary (
  module_id          INTEGER PRIMARY KEY REFERENCES modules(module_id),  -- the module
  total_bytes        INTEGER,           -- `Total bytes used` (all memory spaces, exact)
  allocation_bytes   INTEGER,           -- sum of allocation sizes (equals total_bytes when consistent)
  parameter_bytes    INTEGER,           -- sum over allocations flagged `parameter`
  output_bytes       INTEGER,           -- sum over allocations flagged `maybe-live-out`
  temp_bytes         INTEGER,           -- sum over allocations flagged `preallocated-temp`
  constant_bytes     INTEGER,           -- sum over allocations flagged `constant`
  thread_local_bytes INTEGER,           -- sum over allocations flagged `thread-local`
  allocation_count   INTEGER,           -- allocations
  value_count        INTEGER,           -- buffer values
  live_range_count   INTEGER,           -- values with a live range
  schedule_length    INTEGER,           -- HloLiveRange `max T`
  peak_time          INTEGER,           -- schedule time of `Live ranges at <t> (peak)`
  peak_bytes         INTEGER,           -- logical live bytes at the peak: the last cumulative, else the sum of the list
  peak_buffer_count  INTEGER,           -- lines in the peak list
  instruction_count  INTEGER,           -- instructions known for the module
  stack_trace_peak_bytes INTEGER,       -- `Stack trace breakdown for peak usage: N bytes` (2025-07+)
  live_peak_padded_bytes INTEGER,       -- the most padded bytes live at once: at each schedule time, the sizes
                                        -- of the allocation slices (allocation, offset, size) holding a live
                                        -- value, each slice once; NULL without live ranges (version 4)
  live_peak_padded_time  INTEGER,       -- the first schedule time with that many bytes live (version 4)
  color0_total_bytes     INTEGER        -- allocation bytes in memory space 0 (version 4)
);
-- The largest modules of all runs (module_memory ORDER BY peak_bytes DESC LIMIT n, an analyst's first question)
-- read this index instead of sorting every module (version 6).
CREATE INDEX IF NOT EXISTS module_summary_by_peak ON module_summary(peak_bytes);

-- Per module and memory space (color): what its allocations take. Color 0 is the default space (HBM on an
-- accelerator), 1 is VMEM on TPU, and so on (§2.2). Computed at ingest, with module_summary.
CREATE TABLE IF NOT EXISTS module_memory_spaces (
  module_id              INTEGER NOT NULL, -- the module
  color                  INTEGER NOT NULL, -- memory space
  allocation_count       INTEGER NOT NULL, -- allocations of that color
  total_bytes            INTEGER NOT NULL, -- their bytes
  live_peak_padded_bytes INTEGER,          -- most padded bytes of that color live at once (NULL: no live ranges)
  PRIMARY KEY (module_id, color)
) WITHOUT ROWID;

-- Interned `source_file` paths of instruction metadata, shared by all modules (a module's thousands of
-- instructions come from a handful of Python files).
CREATE TABLE IF NOT EXISTS source_files (
  source_file_id INTEGER PRIMARY KEY,   -- surrogate key
  path           TEXT NOT NULL UNIQUE   -- the path as printed in metadata={… source_file="…"}
);

-- Interned shape texts (with layout), shared by all modules.
CREATE TABLE IF NOT EXISTS shapes (
  shape_id INTEGER PRIMARY KEY,         -- surrogate key
  text     TEXT NOT NULL UNIQUE         -- the shape as printed, e.g. 'bf16[8,2048,128]{2,1,0:T(8,128)(2,1)}'
);

-- Interned names of instructions, shared by all modules: op_name metadata (a real module's thousands of
-- instructions carry a few hundred distinct op_names, and the same ones recur in every run) and computation
-- names (version 6). instruction_details and peak_buffer_details spell them out. Found by hash, so a program
-- whose names are mostly distinct does not store each one twice (store/facts/interned_texts.h).
CREATE TABLE IF NOT EXISTS names (
  name_id INTEGER PRIMARY KEY,          -- surrogate key
  hash    INTEGER NOT NULL,             -- XXH3-64 of the text, as a signed 64-bit integer (not unique)
  text    TEXT NOT NULL                 -- the name as printed
);
CREATE INDEX IF NOT EXISTS names_by_hash ON names(hash);

-- Long texts stored once for all runs (whole instruction lines with backend configs), found by their hash.
-- Rows are appended in arrival order, so a big file's texts fill pages densely; the hash is looked up
-- through its own narrow index. Since version 9 a text is stored without the parts the tables above hold
-- already (its result shape, op_name and source file path, printed again in every instruction): each cut
-- part leaves one placeholder byte, X'01', X'02' or X'03', and its id below. Read whole texts through the
-- view long_text_details (or instruction_details), which puts the parts back (store/facts/long_text.h).
CREATE TABLE IF NOT EXISTS long_texts (
  text_id INTEGER PRIMARY KEY,          -- surrogate key, in arrival order (nothing may depend on the order)
  hash    INTEGER NOT NULL UNIQUE,      -- XXH3-64 of the text (with cut parts: of text, NUL and the ids)
  text    TEXT NOT NULL,                -- the text, a placeholder byte where a part was cut
  shape_id       INTEGER,               -- shapes.shape_id of the part cut at X'01'; NULL: none (version 9)
  op_name_id     INTEGER,               -- names.name_id of the part cut at X'02'; NULL: none (version 9)
  source_file_id INTEGER                -- source_files.source_file_id of the part cut at X'03'; NULL: none
);

-- Store-wide counts, one row each (version 10). 'interned_removals': how many transactions of `xladb delete`
-- and `xladb prune` removed rows of the four interned tables above, each counted in the transaction that
-- removed them; no row until the first. A writer keeps the ids of shapes, source paths and names it looked up
-- from one transaction to the next, and forgets them when this count has moved since its last transaction,
-- so it never writes an id whose row another connection removed. (The writer's end-of-run sweep removes only
-- whole texts, whose ids no writer keeps: it is not counted. store/facts/interned_removals.h)
CREATE TABLE IF NOT EXISTS store_counters (
  name  TEXT PRIMARY KEY,               -- what is counted
  value INTEGER NOT NULL                -- the count
) WITHOUT ROWID;

-- `allocation <idx>: size …, <flags>:` lines (§2.2): one row per buffer allocation.
CREATE TABLE IF NOT EXISTS allocations (
  module_id             INTEGER NOT NULL,  -- the module
  allocation_index      INTEGER NOT NULL,  -- <idx>
  size_bytes            INTEGER NOT NULL,  -- exact, padded bytes
  color                 INTEGER NOT NULL,  -- memory space (0 default/HBM, 1 VMEM on TPU, …)
  is_parameter          INTEGER NOT NULL,  -- entry-computation parameter
  parameter_number      INTEGER,           -- parameter N, NULL if not a parameter
  parameter_shape       TEXT,              -- |shape| after `parameter N, shape`
  parameter_shape_index TEXT,              -- `at ShapeIndex {…}`
  is_output             INTEGER NOT NULL,  -- `output shape is |…|` printed
  output_shape          TEXT,              -- that shape (the whole entry root shape)
  is_constant           INTEGER NOT NULL,  -- `constant`
  is_thread_local       INTEGER NOT NULL,  -- `thread-local`
  is_maybe_live_out     INTEGER NOT NULL,  -- `maybe-live-out`
  is_preallocated_temp  INTEGER NOT NULL,  -- `preallocated-temp`
  address               TEXT,              -- pre-2022-09 `0x…` pointer
  file_id               INTEGER NOT NULL,  -- source file
  PRIMARY KEY (module_id, allocation_index)
) WITHOUT ROWID;

-- HloValues: one row per value, merged from its ` value:` line (allocation, offset, size, shape) and its
-- Used-values block (positions, uses). Its live range is in buffer_live_ranges.
CREATE TABLE IF NOT EXISTS buffer_values (
  module_id        INTEGER NOT NULL,     -- the module
  value_id         INTEGER NOT NULL,     -- HloValue id (unique per module)
  instruction      TEXT NOT NULL,        -- defining instruction name
  shape_index      TEXT NOT NULL,        -- index within the defining shape, '{}' if not a tuple element
  is_phi           INTEGER NOT NULL,     -- `(phi)` value of a while/conditional
  color            INTEGER,              -- `@N` memory space
  allocation_index INTEGER,              -- allocation holding it (NULL if only its details were seen)
  offset_bytes     INTEGER,              -- offset within the allocation
  size_bytes       INTEGER,              -- exact, padded bytes
  shape_id         INTEGER,              -- shapes.shape_id of its shape with layout
  positions        TEXT,                 -- JSON [[instruction, shape_index], …], defining position first; NULL
                                         -- when the block listed only the defining position (the value's own
                                         -- instruction and shape_index: most values), or had no block
                                         -- (uses_state NULL). value_positions lists every position.
  uses             TEXT,                 -- JSON [[instruction, operand, shape_index], …]
  uses_state       TEXT,                 -- 'listed', 'none' or 'not_initialized'
  cross_color      INTEGER,              -- color of a `reused by buffers of a different color` listing, else NULL
  file_id          INTEGER NOT NULL,     -- file that first wrote the row
  PRIMARY KEY (module_id, value_id)
) WITHOUT ROWID;

-- BufferLiveRange lines (§4): when each value is live, in schedule time. One row per value that has a line
-- (thread-local values have none); the value's name and index are on its buffer_values row.
CREATE TABLE IF NOT EXISTS buffer_live_ranges (
  module_id  INTEGER NOT NULL,           -- the module
  value_id   INTEGER NOT NULL,           -- buffer_values.value_id
  live_start INTEGER NOT NULL,           -- first schedule time the value is live
  live_end   INTEGER NOT NULL,           -- last schedule time (inclusive)
  file_id    INTEGER NOT NULL,           -- source file
  PRIMARY KEY (module_id, value_id)
) WITHOUT ROWID;

-- HLO instructions of a module, merged from HLO module text and `from instruction:` lines. Rows are appended
-- in arrival order (instruction_id); (module_id, name) is the key analysts join on.
CREATE TABLE IF NOT EXISTS instructions (
  instruction_id     INTEGER PRIMARY KEY, -- surrogate key, in arrival order (nothing may depend on the order)
  module_id          INTEGER NOT NULL,   -- the module
  name               TEXT NOT NULL,      -- instruction name, without '%'
  opcode             TEXT,               -- e.g. 'fusion', 'custom-call'
  shape_id           INTEGER,            -- result shape with layout
  op_type            TEXT,               -- metadata op_type
  source_file_id     INTEGER,            -- source_files.source_file_id of metadata source_file
  source_line        INTEGER,            -- metadata source_line
  fusion_kind        TEXT,               -- kLoop, kInput, kOutput, kCustom…
  custom_call_target TEXT,               -- custom_call_target
  is_root            INTEGER,            -- ROOT of its computation
  sequence_index     INTEGER,            -- position within its computation in the HLO text
  text_id            INTEGER,            -- long_texts.text_id of the whole printed instruction
  file_id            INTEGER NOT NULL,   -- file that first wrote the row
  computation_id     INTEGER,            -- names.name_id of the enclosing computation (from HLO text; version 6)
  op_name_id         INTEGER,            -- names.name_id of metadata op_name, the framework's name for the op
                                         -- (version 6)
  UNIQUE (module_id, name)
);
-- Which instructions refer to a whole text: a text a merge replaced, or a deleted run's, goes when none does.
CREATE INDEX IF NOT EXISTS instructions_by_text ON instructions(text_id);

-- The flattened schedule: HloLiveRange InstructionSequence lines (§4), `<time>:<name>`.
CREATE TABLE IF NOT EXISTS schedule (
  module_id   INTEGER NOT NULL,          -- the module
  time        INTEGER NOT NULL,          -- schedule time (0-based position in the sequence)
  instruction TEXT NOT NULL,             -- instruction name (instructions.name)
  file_id     INTEGER NOT NULL,          -- source file
  PRIMARY KEY (module_id, time)
) WITHOUT ROWID;

-- Computations of HLO module text.
CREATE TABLE IF NOT EXISTS computations (
  module_id         INTEGER NOT NULL,    -- the module
  name              TEXT NOT NULL,       -- computation name
  is_entry          INTEGER NOT NULL,    -- ENTRY computation
  instruction_count INTEGER NOT NULL,    -- instructions printed in it
  execution_thread  TEXT,                -- `execution_thread="…"` if printed
  file_id           INTEGER NOT NULL,    -- source file
  PRIMARY KEY (module_id, name)
) WITHOUT ROWID;

-- `Live ranges at <t> (peak):` list (§4.1): the buffers XLA counts at the peak moment.
CREATE TABLE IF NOT EXISTS peak_buffers (
  module_id        INTEGER NOT NULL,     -- the module
  ordinal          INTEGER NOT NULL,     -- 0-based position in the printed list
  instruction      TEXT NOT NULL,        -- instruction name
  shape_index      TEXT NOT NULL,        -- printed (V2/V3) or recovered by aligning with BufferLiveRange (V1)
  logical_bytes    INTEGER NOT NULL,     -- logical, unpadded bytes (not comparable to allocation sizes)
  cumulative_bytes INTEGER,              -- `(cumulative: N bytes)` (V3 only)
  value_id         INTEGER,              -- buffer_values.value_id of the buffer, when resolved
  file_id          INTEGER NOT NULL,     -- source file
  PRIMARY KEY (module_id, ordinal)
) WITHOUT ROWID;

-- `Stack trace breakdown for peak usage` tree (§4.2), in printed order.
CREATE TABLE IF NOT EXISTS stack_trace_nodes (
  module_id       INTEGER NOT NULL,      -- the module
  ordinal         INTEGER NOT NULL,      -- 0-based printed order
  depth           INTEGER NOT NULL,      -- 0 for top-level nodes
  name            TEXT NOT NULL,         -- computation / op_name part
  percent         REAL NOT NULL,         -- share of the peak
  total_bytes     INTEGER NOT NULL,      -- total under this node
  current_bytes   INTEGER NOT NULL,      -- bytes of this node itself
  remaining_bytes INTEGER NOT NULL,      -- XLA's running counter
  file_id         INTEGER NOT NULL,      -- source file
  PRIMARY KEY (module_id, ordinal)
) WITHOUT ROWID;

-- Rows of `-memory-usage-report.txt` (§5), V1 and V2.
CREATE TABLE IF NOT EXISTS memory_report_rows (
  file_id                 INTEGER NOT NULL,  -- source file
  ordinal                 INTEGER NOT NULL,  -- 0-based row number in the file
  module_id               INTEGER,           -- the module
  section                 TEXT NOT NULL,     -- 'allocations_by_size', 'allocation_values' or 'memory_space'
  allocation_index        INTEGER,           -- from the printed allocation header (V1)
  memory_space            INTEGER,           -- V2 color
  memory_space_name       TEXT,              -- V2 name as printed (a guess by XLA; trust the number)
  table_ordinal           INTEGER,           -- which per-allocation table (V1 section 2, V2)
  cumulative_bytes_approx INTEGER,           -- cumulative size (human string)
  cumulative_percent      REAL,              -- cumulative percentage as printed
  remaining_bytes_approx  INTEGER,           -- `total_size - cumulative_size` (section 1)
  size_bytes_approx       INTEGER,           -- allocation size (section 1) or max value size at the offset
  offset_bytes            INTEGER,           -- offset (tables)
  value_count             INTEGER,           -- values at that offset (tables)
  shapes                  TEXT,              -- shapes_list (tables) or the allocation header (section 1)
  PRIMARY KEY (file_id, ordinal)
) WITHOUT ROWID;

-- `Total bytes used` (V1) and per-memory-space `Total bytes` (V2) of memory-usage reports.
CREATE TABLE IF NOT EXISTS memory_report_totals (
  file_id      INTEGER NOT NULL,         -- source file
  memory_space INTEGER NOT NULL,         -- -1 for V1's all-spaces total
  module_id    INTEGER,                  -- the module
  total_bytes  INTEGER NOT NULL,         -- exact bytes
  PRIMARY KEY (file_id, memory_space)
) WITHOUT ROWID;

-- TPU utilization counters (§8 bundle profiles and per-bundle reports), one row per counter line.
CREATE TABLE IF NOT EXISTS utilization_counters (
  file_id       INTEGER NOT NULL,        -- source file
  block_ordinal INTEGER NOT NULL,        -- 0-based block within the file (HLO keys can repeat)
  counter       TEXT NOT NULL,           -- e.g. 'VMEM_SPILL_COUNT', 'MXU_0 matpush'
  module_id     INTEGER,                 -- the module (compilation unit)
  kernel        TEXT NOT NULL,           -- HLO instruction name or '<no-hlo-instruction>'
  numerator     INTEGER NOT NULL,        -- achieved count
  denominator   INTEGER NOT NULL,        -- peak count (bundles × issue capacity)
  ratio         REAL NOT NULL,           -- numerator / denominator as printed
  ratio_text    TEXT NOT NULL,           -- the ratio exactly as printed (%g)
  PRIMARY KEY (file_id, block_ordinal, counter)
) WITHOUT ROWID;

-- OOM reports (§9): the stats lines and the peak buffers of `BufferAssignment OOM Debugging.`
CREATE TABLE IF NOT EXISTS oom_stats (
  file_id      INTEGER NOT NULL,         -- source file
  label        TEXT NOT NULL,            -- e.g. 'total allocation'
  bytes_approx INTEGER NOT NULL,         -- from the human string
  bytes_text   TEXT NOT NULL,            -- as printed
  percent      REAL,                     -- fragmentation percentage, NULL otherwise
  PRIMARY KEY (file_id, label)
) WITHOUT ROWID;

CREATE TABLE IF NOT EXISTS oom_buffers (
  file_id            INTEGER NOT NULL,   -- source file
  buffer_number      INTEGER NOT NULL,   -- `Buffer <i>`
  module_id          INTEGER,            -- the module
  size_bytes_approx  INTEGER NOT NULL,   -- from the human string
  size_text          TEXT NOT NULL,      -- as printed
  op_name            TEXT,               -- op_name from `Operator:`
  source_file        TEXT,               -- source_file from `Operator:`
  source_line        INTEGER,            -- source_line from `Operator:`
  xla_label          TEXT,               -- opcode (`XLA Label:`)
  shape              TEXT,               -- `Shape:` or `Entry Parameter Subshape:`
  is_entry_parameter INTEGER NOT NULL,   -- buffer is an entry parameter
  PRIMARY KEY (file_id, buffer_number)
) WITHOUT ROWID;

-- Ingest jobs of the daemon (xladbd), kept so that a restart resumes what was queued or running.
CREATE TABLE IF NOT EXISTS ingest_jobs (
  job_id         TEXT PRIMARY KEY,       -- opaque id given to clients
  source         TEXT NOT NULL,          -- 'path' (IngestPath), 'upload' (Upload) or 'watch' (a watched folder)
  path           TEXT NOT NULL,          -- what is ingested: a server path or the staged upload folder
  run_name       TEXT NOT NULL,          -- the run ('' = named after the folder)
  labels         TEXT NOT NULL,          -- JSON object of labels
  run_time_us    INTEGER,                -- requested run time, NULL = from labels or file times
  state          TEXT NOT NULL,          -- 'QUEUED', 'RUNNING', 'SUCCEEDED' or 'FAILED'
  message        TEXT,                   -- why it failed, or a note
  created_at_us  INTEGER NOT NULL,       -- when it was queued
  finished_at_us INTEGER,                -- when it ended
  append         INTEGER NOT NULL DEFAULT 0,  -- 1: may add to a run that came from another source (version 3)
  content_digest TEXT,                   -- uploads: the digest the run records (runs.content_digest) (version 3)
  source_description TEXT,               -- what the run records as its source, NULL = `path` (version 3)
  files_received INTEGER                 -- uploads: files staged, checked against what the ingest finds (version 3)
);

-- Indexes for the cross-run queries (store/query/queries.cc; plans checked with EXPLAIN QUERY PLAN).
-- ListRuns: newest first, and its page tokens, walk this index instead of sorting every run.
CREATE INDEX IF NOT EXISTS runs_by_time ON runs(run_time_us);
-- The four spill and fill counters' lines of one module, read from the index alone when the writer
-- recomputes that module's kernel_spill_summary rows.
CREATE INDEX IF NOT EXISTS utilization_counters_spills
  ON utilization_counters(module_id, kernel, counter, numerator, denominator)
  WHERE counter IN ('VMEM_SPILL_COUNT', 'VMEM_FILL_COUNT', 'SMEM_SPILL_COUNT', 'SMEM_FILL_COUNT');

-- Per module and kernel: VMEM/SMEM spills and fills summed over the module's utilization reports, computed
-- at ingest (the writer recomputes a module's rows whenever one of its reports is stored), so ranking
-- kernels over all runs reads an index instead of aggregating every counter line.
CREATE TABLE IF NOT EXISTS kernel_spill_summary (
  module_id       INTEGER NOT NULL,      -- the module (compilation unit) the reports belong to
  kernel          TEXT NOT NULL,         -- HLO instruction name or '<no-hlo-instruction>'
  run_id          INTEGER NOT NULL,      -- the module's run
  vmem_spills     INTEGER NOT NULL,      -- sum of VMEM_SPILL_COUNT numerators
  vmem_fills      INTEGER NOT NULL,      -- sum of VMEM_FILL_COUNT numerators
  smem_spills     INTEGER NOT NULL,      -- sum of SMEM_SPILL_COUNT numerators
  smem_fills      INTEGER NOT NULL,      -- sum of SMEM_FILL_COUNT numerators
  bundles         INTEGER NOT NULL,      -- sum of VMEM_SPILL_COUNT denominators (the bundle count)
  vmem_spill_rate REAL NOT NULL,         -- vmem_spills / bundles (0 when there are no bundles)
  vmem_fill_rate  REAL NOT NULL,         -- vmem_fills / bundles of the fill counter
  smem_spill_rate REAL NOT NULL,         -- smem_spills / bundles of the SMEM spill counter
  smem_fill_rate  REAL NOT NULL,         -- smem_fills / bundles of the SMEM fill counter
  PRIMARY KEY (module_id, kernel)
) WITHOUT ROWID;
CREATE INDEX IF NOT EXISTS kernel_spill_summary_by_rate
  ON kernel_spill_summary(vmem_spill_rate DESC, vmem_fill_rate DESC);
-- One run's kernels in rate order, and the kernels of each run that tie at one rate pair (store/query/queries.cc
-- SpillRates reads the ties of the top N run by run; version 6, replacing an index on run_id alone).
CREATE INDEX IF NOT EXISTS kernel_spill_summary_by_run_rate
  ON kernel_spill_summary(run_id, vmem_spill_rate, vmem_fill_rate);

-- ---------------------------------------------------------------------------------------------------
-- Views: the stable interface for analysts. Columns may be added, never renamed or removed.

-- One row per run and module that has a buffer assignment.
CREATE VIEW IF NOT EXISTS module_memory AS
SELECT r.name               AS run_name,
       m.name               AS module_name,
       m.xla_module_id      AS xla_module_id,
       m.stage              AS stage,
       m.backend            AS backend,
       s.peak_bytes         AS peak_bytes,
       s.peak_time          AS peak_time,
       s.total_bytes        AS total_bytes,
       s.parameter_bytes    AS parameter_bytes,
       s.output_bytes       AS output_bytes,
       s.temp_bytes         AS temp_bytes,
       s.constant_bytes     AS constant_bytes,
       s.thread_local_bytes AS thread_local_bytes,
       s.allocation_count   AS allocations,
       s.value_count        AS value_count,
       r.run_time_us        AS run_time_us,
       r.run_id             AS run_id,
       m.module_id          AS module_id,
       m.fingerprint        AS fingerprint,
       s.schedule_length    AS schedule_length,
       m.folder             AS folder,
       m.entry_signature    AS entry_signature,
       m.identity_key       AS identity_key,
       s.live_peak_padded_bytes AS live_peak_padded_bytes,
       s.live_peak_padded_time  AS live_peak_padded_time,
       s.color0_total_bytes AS color0_total_bytes,
       m.entry_sharding     AS entry_sharding
FROM module_summary s
JOIN modules m ON m.module_id = s.module_id
JOIN runs r ON r.run_id = m.run_id
WHERE s.allocation_count > 0 OR s.total_bytes IS NOT NULL;

-- One row per counter line of a utilization report.
CREATE VIEW IF NOT EXISTS kernel_counters AS
SELECT r.name          AS run_name,
       m.name          AS module_name,
       c.kernel        AS kernel,
       c.counter       AS counter,
       c.numerator     AS numerator,
       c.denominator   AS denominator,
       c.ratio         AS ratio,
       c.block_ordinal AS block_ordinal,
       r.run_id        AS run_id,
       m.module_id     AS module_id,
       c.file_id       AS file_id
FROM utilization_counters c
JOIN dump_files f ON f.file_id = c.file_id
JOIN runs r ON r.run_id = f.run_id
LEFT JOIN modules m ON m.module_id = c.module_id;

-- Per run, module and kernel: VMEM/SMEM spill and fill counts, and per-bundle rates (count / bundles).
CREATE VIEW IF NOT EXISTS kernel_spills AS
SELECT r.name AS run_name, m.name AS module_name, k.kernel, k.run_id, k.module_id,
       k.vmem_spills, k.vmem_fills, k.smem_spills, k.smem_fills, k.bundles,
       k.vmem_spill_rate, k.vmem_fill_rate, k.smem_spill_rate, k.smem_fill_rate
FROM kernel_spill_summary k
JOIN runs r ON r.run_id = k.run_id
JOIN modules m ON m.module_id = k.module_id;

-- BufferLiveRange lines with the value's name and index, as XLA printed them.
CREATE VIEW IF NOT EXISTS live_ranges AS
SELECT l.module_id, l.value_id, v.instruction, v.shape_index, l.live_start, l.live_end
FROM buffer_live_ranges l
JOIN buffer_values v ON v.module_id = l.module_id AND v.value_id = l.value_id;

-- The flattened schedule with each instruction's opcode.
CREATE VIEW IF NOT EXISTS instruction_sequence AS
SELECT s.module_id, s.time, s.instruction, i.opcode
FROM schedule s
LEFT JOIN instructions i ON i.module_id = s.module_id AND i.name = s.instruction;

-- Positions and uses of values, unpacked from their JSON columns. JSON functions differ between the backends,
-- so these two views have one text per dialect (store/schema/schema_dialect.h).
-- @dialect sqlite
CREATE VIEW IF NOT EXISTS value_positions AS
SELECT v.module_id, v.value_id, CAST(p.key AS INTEGER) AS ordinal,
       json_extract(p.value, '$[0]') AS instruction, json_extract(p.value, '$[1]') AS shape_index
FROM buffer_values v,
     json_each(COALESCE(v.positions, json_array(json_array(v.instruction, v.shape_index)))) p
WHERE v.uses_state IS NOT NULL;

CREATE VIEW IF NOT EXISTS value_uses AS
SELECT v.module_id, v.value_id, CAST(u.key AS INTEGER) AS ordinal,
       json_extract(u.value, '$[0]') AS instruction, json_extract(u.value, '$[1]') AS operand,
       json_extract(u.value, '$[2]') AS shape_index
FROM buffer_values v, json_each(v.uses) u;
-- @dialect postgresql
/*
CREATE VIEW IF NOT EXISTS value_positions AS
SELECT v.module_id, v.value_id, CAST(p.ordinality - 1 AS INTEGER) AS ordinal,
       p.item ->> 0 AS instruction, p.item ->> 1 AS shape_index
FROM buffer_values v,
     jsonb_array_elements(COALESCE(CAST(v.positions AS jsonb),
                                   jsonb_build_array(jsonb_build_array(v.instruction, v.shape_index))))
       WITH ORDINALITY AS p(item, ordinality)
WHERE v.uses_state IS NOT NULL;

CREATE VIEW IF NOT EXISTS value_uses AS
SELECT v.module_id, v.value_id, CAST(u.ordinality - 1 AS INTEGER) AS ordinal,
       u.item ->> 0 AS instruction, CAST(u.item ->> 1 AS INTEGER) AS operand, u.item ->> 2 AS shape_index
FROM buffer_values v, jsonb_array_elements(CAST(v.uses AS jsonb)) WITH ORDINALITY AS u(item, ordinality);
*/
-- @dialect all

-- Name patterns: SQLite's glob(pattern, text) is built in (it is what `text GLOB pattern` calls); PostgreSQL
-- gets this function, so the store's queries match patterns with one text (store/query/statement_text.h). `*` is any
-- text, `?` one character, `[…]` a class (`[^…]` negated, a leading `]` literal); case-sensitive; every other
-- character stands for itself.
-- @dialect postgresql
/*
CREATE OR REPLACE FUNCTION glob(pattern TEXT, value TEXT) RETURNS BOOLEAN
LANGUAGE plpgsql IMMUTABLE STRICT PARALLEL SAFE AS $glob$
DECLARE
  regex TEXT := '^';
  i INT := 1;
  j INT;
  k INT;
  n INT := length(pattern);
  c TEXT;
BEGIN
  WHILE i <= n LOOP
    c := substr(pattern, i, 1);
    IF c = '*' THEN
      regex := regex || '.*';
    ELSIF c = '?' THEN
      regex := regex || '.';
    ELSIF c = '[' THEN
      j := i + 1;
      IF substr(pattern, j, 1) = '^' THEN j := j + 1; END IF;
      IF substr(pattern, j, 1) = ']' THEN j := j + 1; END IF;
      k := strpos(substr(pattern, j), ']');
      IF k = 0 THEN
        RETURN false;  -- an unclosed class matches nothing, as in SQLite
      END IF;
      j := j + k - 1;
      regex := regex || '[' || replace(replace(substr(pattern, i + 1, j - i - 1), '\', '\\'), '[', '\[') || ']';
      i := j;
    ELSIF c ~ '[[:alnum:]]' THEN
      regex := regex || c;
    ELSE
      regex := regex || '\' || c;
    END IF;
    i := i + 1;
  END LOOP;
  RETURN value ~ (regex || '$');
END
$glob$;
*/
-- @dialect all

-- The buffers live at each module's peak, with what XLA knows about them (largest first per module).
CREATE VIEW IF NOT EXISTS peak_buffer_details AS
SELECT p.module_id, p.ordinal, p.instruction, p.shape_index, p.logical_bytes, p.cumulative_bytes,
       v.value_id, v.allocation_index, v.size_bytes, v.offset_bytes, sh.text AS shape,
       i.opcode, opn.text AS op_name, sf.path AS source_file, i.source_line, l.live_start, l.live_end
FROM peak_buffers p
LEFT JOIN buffer_values v ON v.module_id = p.module_id AND v.value_id = p.value_id
LEFT JOIN buffer_live_ranges l ON l.module_id = p.module_id AND l.value_id = p.value_id
LEFT JOIN shapes sh ON sh.shape_id = v.shape_id
LEFT JOIN instructions i ON i.module_id = p.module_id AND i.name = p.instruction
LEFT JOIN names opn ON opn.name_id = i.op_name_id
LEFT JOIN source_files sf ON sf.source_file_id = i.source_file_id;

-- Long texts whole: the parts cut out of a stored text put back at their placeholders (a text without cut
-- parts is as stored). Exact by construction: a part is cut only where neither the text nor any part holds a
-- placeholder byte (store/facts/long_text.h). A part whose row is missing makes the text NULL, never another
-- text. Filter on text_id (instruction_details does): the parts are looked up row by row.
CREATE VIEW IF NOT EXISTS long_text_details AS
SELECT t.text_id,
       CASE WHEN t.shape_id IS NULL AND t.op_name_id IS NULL AND t.source_file_id IS NULL THEN t.text
            ELSE replace(replace(replace(t.text,
                   char(1), COALESCE((SELECT s.text FROM shapes s WHERE s.shape_id = t.shape_id),
                                     CASE WHEN t.shape_id IS NULL THEN '' END)),
                   char(2), COALESCE((SELECT n.text FROM names n WHERE n.name_id = t.op_name_id),
                                     CASE WHEN t.op_name_id IS NULL THEN '' END)),
                   char(3), COALESCE((SELECT f.path FROM source_files f WHERE f.source_file_id = t.source_file_id),
                                     CASE WHEN t.source_file_id IS NULL THEN '' END))
       END AS text
FROM long_texts t;

-- Instructions with their interned parts spelled out: computation, shape text, op_name, source file path and
-- the whole printed instruction.
CREATE VIEW IF NOT EXISTS instruction_details AS
SELECT i.module_id, i.name, cn.text AS computation, i.opcode, sh.text AS shape, i.op_type, opn.text AS op_name,
       sf.path AS source_file, i.source_line, i.fusion_kind, i.custom_call_target, i.is_root, i.sequence_index,
       (SELECT t.text FROM long_text_details t WHERE t.text_id = i.text_id) AS text, i.file_id
FROM instructions i
LEFT JOIN names cn ON cn.name_id = i.computation_id
LEFT JOIN shapes sh ON sh.shape_id = i.shape_id
LEFT JOIN names opn ON opn.name_id = i.op_name_id
LEFT JOIN source_files sf ON sf.source_file_id = i.source_file_id;

-- Each module of a run paired with its match in another run (both with a buffer assignment), for every
-- ordered pair of runs (run A, run B): the modules of one identity_key pair up
--   * 'identity':    the key is unique in both runs;
--   * 'fingerprint': else, the same program fingerprint (of the same fingerprint_source) first, in the order
--                    of xla_module_id on both sides;
--   * 'order':       the rest of that key, in the order of xla_module_id.
-- same_program is 1 when both fingerprints are comparable and equal, 0 when they differ, NULL when they
-- cannot be compared. Modules without a match (added, removed) have no row. Filter on run_name_a/run_name_b
-- (or the ids): over every pair of runs the view grows with the square of the runs. xladb's own queries run
-- this same text restricted to two runs at the marker below (store/compare/module_match.cc).
CREATE VIEW IF NOT EXISTS module_matches AS
-- n (modules of the key in the run) and program_rank (the module's place among those of its program, by
-- xla_module_id) are counted by correlated subqueries through modules_by_identity, not by window functions:
-- SQLite (3.40) builds no automatic index on a CTE computed with a window function, so by_program's join of m
-- with itself would compare every pair of modules (1,000 × 1,000 for two 500-module runs: 45 ms instead of
-- 5). For the same reason program is NULL without a fingerprint, instead of a WHERE on a that makes the
-- planner scan. (NOT (x IS NOT y) is NULL-safe equality that SQLite before 3.39 reads too; PostgreSQL's
-- translation says IS DISTINCT FROM.)
WITH m AS (
  SELECT mm.module_id, mm.run_id, mm.identity_key, mo.fingerprint, mo.fingerprint_source,
         CASE WHEN mo.fingerprint IS NOT NULL
              THEN COALESCE(mo.fingerprint_source, '') || ':' || mo.fingerprint END AS program,
         COALESCE(mm.xla_module_id, -1) AS xid,
         (SELECT COUNT(*) FROM module_memory o
          WHERE o.identity_key = mm.identity_key AND o.run_id = mm.run_id) AS n,
         (SELECT COUNT(*) FROM module_memory o JOIN modules om ON om.module_id = o.module_id
          WHERE o.identity_key = mm.identity_key AND o.run_id = mm.run_id
            AND NOT (om.fingerprint_source IS NOT mo.fingerprint_source)
            AND NOT (om.fingerprint IS NOT mo.fingerprint)
            AND (COALESCE(o.xla_module_id, -1), o.module_id) <= (COALESCE(mm.xla_module_id, -1), mm.module_id))
           AS program_rank
  FROM module_memory mm JOIN modules mo ON mo.module_id = mm.module_id
  WHERE 1 = 1 /*@runs*/
),
by_program AS (
  SELECT a.run_id AS run_id_a, b.run_id AS run_id_b, a.module_id AS module_id_a, b.module_id AS module_id_b,
         CASE WHEN a.n = 1 AND b.n = 1 THEN 'identity' ELSE 'fingerprint' END AS matched_by
  FROM m a JOIN m b ON b.identity_key = a.identity_key AND b.program = a.program
                   AND b.program_rank = a.program_rank AND b.run_id <> a.run_id
),
rest AS (
  SELECT a.run_id AS run_id_a, o.run_id AS run_id_b, a.module_id, a.identity_key, a.n, o.n AS other_n,
         ROW_NUMBER() OVER (PARTITION BY a.run_id, o.run_id, a.identity_key ORDER BY a.xid, a.module_id) AS k
  FROM m a JOIN (SELECT DISTINCT run_id, identity_key, n FROM m) o
    ON o.identity_key = a.identity_key AND o.run_id <> a.run_id
  WHERE NOT EXISTS (SELECT 1 FROM by_program p WHERE p.module_id_a = a.module_id AND p.run_id_b = o.run_id)
),
pairs AS (
  SELECT run_id_a, run_id_b, module_id_a, module_id_b, matched_by FROM by_program
  UNION ALL
  SELECT a.run_id_a, a.run_id_b, a.module_id, b.module_id,
         CASE WHEN a.n = 1 AND a.other_n = 1 THEN 'identity' ELSE 'order' END
  FROM rest a JOIN rest b ON b.run_id_a = a.run_id_b AND b.run_id_b = a.run_id_a
                         AND b.identity_key = a.identity_key AND b.k = a.k
)
SELECT ra.name AS run_name_a, rb.name AS run_name_b, p.module_id_a, p.module_id_b, ma.name AS module_name,
       ma.stage, ma.folder, ma.entry_signature, ma.identity_key, p.matched_by,
       CASE WHEN ma.fingerprint IS NULL OR mb.fingerprint IS NULL
                 OR ma.fingerprint_source IS NOT mb.fingerprint_source THEN NULL
            WHEN ma.fingerprint = mb.fingerprint THEN 1 ELSE 0 END AS same_program,
       ma.xla_module_id AS xla_module_id_a, mb.xla_module_id AS xla_module_id_b, p.run_id_a, p.run_id_b
FROM pairs p
JOIN modules ma ON ma.module_id = p.module_id_a
JOIN modules mb ON mb.module_id = p.module_id_b
JOIN runs ra ON ra.run_id = p.run_id_a
JOIN runs rb ON rb.run_id = p.run_id_b;

-- Per run: jit names compiled more than once at one stage and folder (retraces with other shapes, or the same
-- program compiled again), over the modules with a buffer assignment.
CREATE VIEW IF NOT EXISTS retrace_groups AS
SELECT mm.run_name, mm.module_name, mm.stage, mm.folder,
       COUNT(*)                           AS compiles,
       COUNT(DISTINCT mm.entry_signature) AS distinct_signatures,
       COUNT(DISTINCT mm.fingerprint)     AS distinct_fingerprints,
       MIN(mm.xla_module_id)              AS first_xla_module_id,
       MAX(mm.xla_module_id)              AS last_xla_module_id,
       mm.run_id
FROM module_memory mm
GROUP BY mm.run_id, mm.run_name, mm.module_name, mm.stage, mm.folder
HAVING COUNT(*) > 1;
