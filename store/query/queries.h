// Queries: the questions about runs and their modules, as typed functions over a Database. The cross-run
// ones live beside it: store/compare/module_trend.h, store/compare/run_diff.h, store/compare/check_run.h.
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
#ifndef XLADB_STORE_QUERY_QUERIES_H_
#define XLADB_STORE_QUERY_QUERIES_H_

#include <cstdint>
#include <map>
#include <optional>
#include <tuple>
#include <string>
#include <utility>
#include <vector>

#include "base/status.h"
#include "store/backend/database.h"
#include "store/facts/module_metrics.h"

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

// A module and its metrics (ModuleMetricValues: peak_bytes, total_bytes, …, each -1 when unknown; metric(name)).
struct ModuleMemoryInfo : ModuleMetricValues {
  int64_t module_id = 0;
  std::string name;
  int64_t xla_module_id = -1;
  std::string stage;
  std::string backend;
  std::string fingerprint;
  bool has_buffer_assignment = false;
  int64_t peak_time = -1;        // -1 when unknown
  int64_t allocation_count = 0;
  int64_t value_count = 0;
  int64_t instruction_count = 0;
  std::string folder;            // the module's folder inside the run ('' = the root)
  std::string entry_signature;   // entry parameter and output shapes ('' without a buffer assignment)
  std::string identity_key;      // its identity across runs (store/compare/module_match.h)
  int64_t live_peak_padded_time = -1;
  std::string entry_sharding;    // ENTRY parameter and ROOT shardings in its identity ('' = unsharded)
};

struct ModuleListOptions {
  std::string name_pattern;      // GLOB over module names ("" = all)
  std::string stage;             // only this stage ("" = any)
  std::string sort_metric;       // "" = by name, stage, xla_module_id, folder; else a store/facts/module_metrics.h
                                 // name: largest first, unknown last, then by name
  int64_t limit = -1;            // at most this many (-1 = all)
  bool memory_only = false;      // only modules with a buffer assignment, memory report or OOM report
};

// The modules of a run (any stage unless options.stage). kNotFound for an unknown run; kInvalidArgument for
// a sort_metric that is not a metric or a bad pattern.
StatusOr<std::vector<ModuleMemoryInfo>> ListModules(Database& db, const std::string& run_name,
                                                    const ModuleListOptions& options);
// All modules of a run whose name matches, ordered by name, stage, xla_module_id, folder.
StatusOr<std::vector<ModuleMemoryInfo>> ListModules(Database& db, const std::string& run_name,
                                                    const std::string& name_pattern = "");

// A module's bytes in one memory space (the module_memory_spaces table).
struct ModuleSpaceInfo {
  int64_t module_id = 0;
  int64_t color = 0;                  // memory space: 0 default (HBM), 1 VMEM on TPU, …
  int64_t allocation_count = 0;
  int64_t total_bytes = 0;
  int64_t live_peak_padded_bytes = -1;  // -1 without live ranges
};

// Every memory space of every module of a run, largest total_bytes first. kNotFound for an unknown run.
StatusOr<std::vector<ModuleSpaceInfo>> ListModuleSpaces(Database& db, const std::string& run_name);

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
// TopBuffers: the buffers live at a module's peak, largest first: XLA's printed peak list, or the buffers
// live at the padded live peak (computed from the live ranges).

struct TopBuffer {
  int64_t ordinal = 0;           // position in XLA's peak list; in the padded list, position by size
  std::string instruction;
  std::string shape_index;
  int64_t logical_bytes = 0;     // XLA's live-range size (unpadded); in the padded list, the shape's logical
                                 // size (-1 unknown)
  int64_t value_id = -1;
  int64_t allocation_index = -1;
  int64_t size_bytes = -1;       // padded size of the value in its allocation
  std::string shape;
  std::string opcode;
  std::string op_name;
  std::string source_file;
  int64_t source_line = -1;
  int64_t live_start = -1, live_end = -1;
  int64_t shape_bytes = -1;      // the logical size of `shape` (store/facts/shape_text.h; -1 unknown)

  // XLA counted it below its shape's size: a tuple element printed at its defining instruction's tuple size
  // (pointers), as XLA did before 2025-04 (docs/formats.md §4.1).
  bool counted_at_pointer_size() const { return logical_bytes >= 0 && shape_bytes > logical_bytes; }
};

enum class PeakList {
  kXla,     // XLA's printed `Live ranges at <t> (peak)` list
  kPadded,  // the values live at the padded live peak, one per allocation slice (the largest of a shared slice)
};

// The module TopBuffers answered for (a run may hold several of one name), and its buffers.
struct TopBuffersAnswer {
  int64_t module_id = 0;         // the store's module_id of the module picked
  std::string identity_key;      // its identity across runs (store/compare/module_match.h)
  std::string module;
  std::string stage;
  std::string folder;            // the module's folder inside the run ('' = the root)
  int64_t xla_module_id = -1;
  int64_t peak_bytes = -1;       // XLA's printed peak (-1 when unknown)
  int64_t peak_time = -1;
  int64_t total_bytes = -1;      // `Total bytes used` (-1 when unknown)
  int64_t live_peak_padded_bytes = -1;  // the padded live peak (-1 without live ranges)
  int64_t live_peak_padded_time = -1;
  bool has_memory = false;       // a buffer assignment or memory report is stored (else only HLO text)
  int64_t compiles = 0;          // modules of the name (and stage, folder when given) with memory figures in
                                 // the run, before xla_module_id picks: more than 1 means one was picked
  bool picked_largest = false;   // several matched and no xla_module_id was given: the largest total_bytes
  PeakList list = PeakList::kXla;  // what `buffers` holds
  int64_t list_time = -1;        // the schedule time of that list (-1 unknown)
  std::vector<TopBuffer> buffers;
  std::optional<TopBuffer> largest_counted_at_pointer_size;  // of XLA's whole peak list

  // XLA's printed peak and the padded live peak differ by more than 10% of the padded one.
  bool peaks_differ() const {
    return peak_bytes >= 0 && live_peak_padded_bytes > 0 &&
           (live_peak_padded_bytes > peak_bytes ? live_peak_padded_bytes - peak_bytes
                                                : peak_bytes - live_peak_padded_bytes) * 10 >
               live_peak_padded_bytes;
  }
};

// `module` is an exact module name; when the run holds several modules of that name, `stage`, `xla_module_id`
// (>= 0) and `folder` (set: that folder, '' the root) pick one, else the one with the largest total_bytes
// among those with memory figures (a buffer assignment or memory report) is used. kNotFound names what is
// missing. Buffers ordered by logical_bytes desc, then ordinal (XLA's list) or by size_bytes desc (padded);
// at most n (all when n < 0). No buffers when the module has no such list.
StatusOr<TopBuffersAnswer> TopBuffers(Database& db, const std::string& run_name, const std::string& module,
                                      int64_t n, const std::string& stage = "", int64_t xla_module_id = -1,
                                      const std::optional<std::string>& folder = std::nullopt,
                                      PeakList list = PeakList::kXla);

// ---------------------------------------------------------------------------------------------------
// Retraces: jit names compiled more than once in a run (the retrace_groups view).

struct RetraceGroup {
  std::string module, stage, folder;
  int64_t compiles = 0;
  int64_t distinct_signatures = 0;
  int64_t distinct_fingerprints = 0;
  std::vector<int64_t> xla_module_ids;  // ascending (-1 for modules without a number)
};

// Groups with at least min_compiles modules (min_compiles >= 2), most compiles first, then name, stage,
// folder. kNotFound for an unknown run.
StatusOr<std::vector<RetraceGroup>> ListRetraces(Database& db, const std::string& run_name, int64_t min_compiles = 2);

}  // namespace xladb::store

#endif  // XLADB_STORE_QUERY_QUERIES_H_
