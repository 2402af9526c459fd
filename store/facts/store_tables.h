// Which tables hold the rows a dump file writes, written once for everything that removes rows: replacing a
// file or rebuilding a module (store/write/file_replacement.cc), deleting or pruning a run
// (store/admin/run_lifecycle.cc). Keep in step with schema.sql: tests/store/run_lifecycle_test.cc counts every table after a delete, so a table
// missing here fails it.
//
// Constant data; thread-safe.
#ifndef XLADB_STORE_FACTS_STORE_TABLES_H_
#define XLADB_STORE_FACTS_STORE_TABLES_H_

namespace xladb::store {

// Rows parsed from a module's files, keyed by (module_id, …), each also carrying the file_id that wrote it.
inline constexpr const char* kModuleRowTables[] = {"allocations",  "buffer_values", "buffer_live_ranges",
                                                   "instructions", "schedule",      "computations",
                                                   "peak_buffers", "stack_trace_nodes"};

// The value-, live-range- and instruction-level part of kModuleRowTables, which `xladb prune` drops;
// allocations and peak lists stay with the summaries.
inline constexpr const char* kModuleDetailTables[] = {"buffer_values", "buffer_live_ranges", "instructions",
                                                      "schedule",      "computations",       "stack_trace_nodes"};

// Rows computed from a module's rows at ingest (store/facts/module_facts.h, the writer's spill summary), keyed by
// module_id.
inline constexpr const char* kModuleDerivedTables[] = {"module_summary", "module_memory_spaces",
                                                       "kernel_spill_summary"};

// Rows keyed by the file_id of the file that wrote them, with no module key of their own.
inline constexpr const char* kFileRowTables[] = {"memory_report_rows", "memory_report_totals", "utilization_counters",
                                                 "oom_stats",          "oom_buffers",          "ingest_issues"};

}  // namespace xladb::store

#endif  // XLADB_STORE_FACTS_STORE_TABLES_H_
