// Queries: the cross-run questions xladb answers, as typed functions over a Database.
//
// The service translates these to and from protobuf; the CLI's offline mode and tests call them directly.
// Everything here reads the stable tables and views of schema.sql; no text format is known here.
//
// Contract
//   * Every function runs read-only statements on the caller's connection (a read-only Database is
//     fine), one thread at a time per connection. Results are returned whole (they are small: bounded by
//     runs × modules or by explicit limits).
//   * Errors come back as Status: kNotFound for an unknown run or module (naming it), kInvalidArgument for
//     a bad pattern or page token, kIoError for database failures. No exceptions escape.
//   * Patterns are SQL GLOB patterns (`jit_*`, case-sensitive); an empty pattern matches everything, one
//     without * ? [ is an exact name, and a `[` without its `]` is kInvalidArgument.
//   * Numbers XLA did not print come back as -1 (the fields say which can be unknown).
#ifndef XLADB_STORE_QUERIES_H_
#define XLADB_STORE_QUERIES_H_

#include <cstdint>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "ingest/status.h"
#include "store/database.h"

namespace xladb::store {

using Labels = std::vector<std::pair<std::string, std::string>>;

// ---------------------------------------------------------------------------------------------------
// Runs and modules

struct RunInfo {
  int64_t run_id = 0;
  std::string name;
  std::string source_path;
  int64_t run_time_us = 0;
  std::string run_time_source;
  int64_t created_at_us = 0;
  int64_t updated_at_us = 0;
  Labels labels;                 // sorted by key
  int64_t file_count = 0;
  int64_t ingested_file_count = 0;
  int64_t error_file_count = 0;
  int64_t module_count = 0;      // modules with a buffer assignment
};

struct RunFilter {
  Labels labels;                 // every label must match exactly
  int64_t since_us = -1;         // run_time_us >= since_us when >= 0
  int64_t until_us = -1;         // run_time_us < until_us when >= 0
  std::string name_pattern;      // GLOB over the run name
  int64_t page_size = 100;       // 1..1000; 0 means 100, larger values are cut to 1000, negative is kInvalidArgument
  std::string page_token;        // from the previous page's next_page_token; "" for the first page. Pages are
                                 // keyset ranges of the newest-first order: runs ingested between calls never
                                 // repeat or shift a later page. Use it with the same filter.
};

struct RunPage {
  std::vector<RunInfo> runs;     // newest first (run_time_us desc, then run_id desc)
  std::string next_page_token;   // "" when this is the last page
};

StatusOr<RunPage> ListRuns(Database& db, const RunFilter& filter);
StatusOr<RunInfo> GetRun(Database& db, const std::string& run_name);

struct ModuleMemoryInfo {
  int64_t module_id = 0;
  std::string name;
  int64_t xla_module_id = -1;
  std::string stage;
  std::string backend;
  std::string fingerprint;
  bool has_buffer_assignment = false;
  int64_t peak_bytes = -1;       // -1 when unknown
  int64_t peak_time = -1;
  int64_t total_bytes = -1;
  int64_t parameter_bytes = -1;
  int64_t output_bytes = -1;
  int64_t temp_bytes = -1;
  int64_t allocation_count = 0;
  int64_t value_count = 0;
  int64_t instruction_count = 0;
  std::string folder;            // the module's folder inside the run ('' = the root)
};

// All modules of a run (any stage), ordered by name, stage, xla_module_id, folder. kNotFound for an unknown run.
StatusOr<std::vector<ModuleMemoryInfo>> ListModules(Database& db, const std::string& run_name,
                                                    const std::string& name_pattern = "");

// ---------------------------------------------------------------------------------------------------
// PeakMemoryTrend: one module (name or pattern) across runs, ordered by run time.

enum class TrendMetric { kPeakBytes, kTotalBytes, kTempBytes };

struct TrendQuery {
  std::string module;            // exact name, or a GLOB pattern when it contains * ? [
  TrendMetric metric = TrendMetric::kPeakBytes;
  int64_t last_n = -1;           // only the newest N runs (still returned oldest first); -1: all
  Labels labels;                 // runs must carry these labels
  std::string stage;             // "" = any stage with a buffer assignment
};

struct TrendPoint {
  std::string run_name;
  int64_t run_time_us = 0;
  std::string module_name;
  int64_t xla_module_id = -1;
  std::string stage;
  std::string fingerprint;
  int64_t value = 0;             // the requested metric
  int64_t peak_bytes = -1;
  int64_t total_bytes = -1;
  int64_t temp_bytes = -1;
};

// Points oldest run first (then module name, xla_module_id): the module_memory rows of the matching
// modules, leaving out those where the requested metric is unknown. Empty when nothing matches (not an
// error); kInvalidArgument for an empty module.
StatusOr<std::vector<TrendPoint>> PeakMemoryTrend(Database& db, const TrendQuery& query);

// ---------------------------------------------------------------------------------------------------
// SpillRates: VMEM/SMEM spills and fills per kernel and run.

struct SpillQuery {
  std::string kernel_pattern;    // GLOB over the kernel (HLO instruction) name; "" = all
  std::string run;               // exact run name; "" = all runs
  int64_t limit = -1;            // top N by vmem_spill_rate desc; -1 = all
};

// The rows of the kernel_spills view; a rate whose denominator is 0 reads 0. kNotFound for an unknown run.

struct SpillRateRow {
  std::string run_name;
  int64_t run_time_us = 0;
  std::string module_name;
  std::string kernel;
  int64_t vmem_spills = 0, vmem_fills = 0, smem_spills = 0, smem_fills = 0;
  int64_t bundles = 0;
  double vmem_spill_rate = 0, vmem_fill_rate = 0, smem_spill_rate = 0, smem_fill_rate = 0;
};

// Ordered by vmem_spill_rate desc, then vmem_fill_rate desc, run time desc, kernel.
StatusOr<std::vector<SpillRateRow>> SpillRates(Database& db, const SpillQuery& query);

// ---------------------------------------------------------------------------------------------------
// TopBuffers: the buffers live at a module's peak, largest first.

struct TopBuffer {
  int64_t ordinal = 0;           // position in XLA's peak list
  std::string instruction;
  std::string shape_index;
  int64_t logical_bytes = 0;     // XLA's live-range size (unpadded)
  int64_t value_id = -1;
  int64_t allocation_index = -1;
  int64_t size_bytes = -1;       // padded size of the value in its allocation
  std::string shape;
  std::string opcode;
  std::string op_name;
  std::string source_file;
  int64_t source_line = -1;
  int64_t live_start = -1, live_end = -1;
};

// The module TopBuffers answered for (a run may hold several of one name), and its buffers.
struct TopBuffersAnswer {
  std::string module;
  std::string stage;
  std::string folder;            // the module's folder inside the run ('' = the root)
  int64_t xla_module_id = -1;
  int64_t peak_bytes = -1;       // -1 when unknown
  int64_t peak_time = -1;
  std::vector<TopBuffer> buffers;
};

// `module` is an exact module name; when the run holds several modules of that name, `stage`, `xla_module_id`
// (>= 0) and `folder` (set: that folder, '' the root) pick one, else the one with the largest peak is used.
// kNotFound names what is missing. Buffers ordered by logical_bytes desc, then ordinal; at most n (all when
// n < 0). No buffers when the module has no peak list.
StatusOr<TopBuffersAnswer> TopBuffers(Database& db, const std::string& run_name, const std::string& module,
                                      int64_t n, const std::string& stage = "", int64_t xla_module_id = -1,
                                      const std::optional<std::string>& folder = std::nullopt);

// ---------------------------------------------------------------------------------------------------
// DiffRuns: what changed between two runs.

struct BufferDiff {
  enum class Change { kGrew, kShrank, kAppeared, kDisappeared };
  Change change = Change::kGrew;
  std::string instruction_a, instruction_b;  // empty on the side where it does not exist
  std::string shape_index;
  std::string matched_by;        // "name" (instruction + shape index) or "op_name_source" (renamed)
  int64_t size_a = -1, size_b = -1;          // padded value sizes
  std::string shape_a, shape_b;
  std::string op_name;
  std::string source;            // "file:line" where known
};

struct ModuleDiff {
  enum class Change { kAdded, kRemoved, kChanged, kUnchanged };
  Change change = Change::kUnchanged;
  std::string module_name;
  std::string stage;
  int64_t xla_module_id_a = -1, xla_module_id_b = -1;
  std::string fingerprint_a, fingerprint_b;
  int64_t peak_a = -1, peak_b = -1;
  int64_t total_a = -1, total_b = -1;
  int64_t temp_a = -1, temp_b = -1;
  std::vector<BufferDiff> buffers;  // grew/appeared first by size delta desc, then shrank/disappeared by
                                    // size delta asc (largest shrink first); at most max_buffers
  int64_t buffer_changes = 0;       // buffer diffs found before the max_buffers cut
};

struct DiffQuery {
  std::string run_a, run_b;
  std::string module;            // exact name or GLOB pattern; "" = all modules
  bool include_unchanged = false;
  bool buffer_level = true;
  int64_t max_buffers = 50;      // per module; -1 = all
};

struct RunDiff {
  std::vector<ModuleDiff> modules;  // changed (by |peak delta| desc), then added, removed, unchanged
  int64_t added = 0, removed = 0, changed = 0, unchanged = 0;
};

// Compares the modules that have a buffer assignment (the module_memory rows) of two runs. kNotFound
// names an unknown run.
//
// Modules are matched by (name, stage) and, when a name repeats within a run, by fingerprint, then by
// order of xla_module_id. Buffers are matched by (instruction, shape_index), and the rest by
// (op_name, source file and line, shape_index) so renamed instructions still pair up; a matched pair is
// a diff only when its padded size changed. A matched module is kChanged when its peak, total or temp
// bytes differ, when its fingerprints (of the same fingerprint_source) differ, or when a buffer differs;
// buffers are not read for a pair with equal fingerprints and equal totals (the same program).
StatusOr<RunDiff> DiffRuns(Database& db, const DiffQuery& query);

}  // namespace xladb::store

#endif  // XLADB_STORE_QUERIES_H_
