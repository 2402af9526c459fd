#include "store/run_lifecycle.h"

#include "store/query_sql.h"

namespace xladb::store {
namespace {

// Tables whose rows belong to a module (module_id), and to a dump file (file_id), of the run. Keep in step
// with schema.sql: tests/store/run_lifecycle_test.cc fails when a table keeps rows of a deleted run.
constexpr const char* kModuleTables[] = {"module_summary", "module_memory_spaces", "allocations", "buffer_values",
                                         "buffer_live_ranges", "instructions", "schedule", "computations",
                                         "peak_buffers", "stack_trace_nodes"};
constexpr const char* kFileTables[] = {"ingest_issues", "memory_report_rows", "memory_report_totals",
                                       "utilization_counters", "oom_stats", "oom_buffers"};

// The interned rows the run's rows refer to (collected before they go), then those of them no row refers to
// any more. Only the run's own candidates: a text some earlier merge left unreferenced stays, so the file is
// as if the run had never been ingested.
constexpr const char* kInternedOfRun[] = {
    "CREATE TEMP TABLE run_shapes AS SELECT shape_id FROM buffer_values WHERE shape_id IS NOT NULL AND module_id IN "
    "(SELECT module_id FROM modules WHERE run_id = ?1) UNION SELECT shape_id FROM instructions WHERE shape_id IS NOT "
    "NULL AND module_id IN (SELECT module_id FROM modules WHERE run_id = ?1)",
    "CREATE TEMP TABLE run_sources AS SELECT DISTINCT source_file_id FROM instructions WHERE source_file_id IS NOT "
    "NULL AND module_id IN (SELECT module_id FROM modules WHERE run_id = ?1)",
    "CREATE TEMP TABLE run_texts AS SELECT DISTINCT text_id FROM instructions WHERE text_id IS NOT NULL AND "
    "module_id IN (SELECT module_id FROM modules WHERE run_id = ?1)"};
constexpr const char* kUnusedInterned[] = {
    "DELETE FROM shapes WHERE shape_id IN (SELECT shape_id FROM temp.run_shapes) AND shape_id NOT IN "
    "(SELECT shape_id FROM buffer_values WHERE shape_id IS NOT NULL UNION "
    " SELECT shape_id FROM instructions WHERE shape_id IS NOT NULL)",
    "DELETE FROM source_files WHERE source_file_id IN (SELECT source_file_id FROM temp.run_sources) AND "
    "source_file_id NOT IN (SELECT source_file_id FROM instructions WHERE source_file_id IS NOT NULL)",
    "DELETE FROM long_texts WHERE text_id IN (SELECT text_id FROM temp.run_texts) AND text_id NOT IN "
    "(SELECT text_id FROM instructions WHERE text_id IS NOT NULL)"};

}  // namespace

Status RelabelRun(Database& db, const std::string& run, const LabelList& set, const std::vector<std::string>& remove) {
  for (const auto& [key, value] : set) {
    if (key.empty()) return Status::InvalidArgument("a label needs a key: '=" + value + "'");
  }
  auto done = CatchSqlErrors("labelling run '" + run + "'", [&]() -> StatusOr<bool> {
    SQLite::Transaction tx(db.sql(), SQLite::TransactionBehavior::IMMEDIATE);
    StatusOr<int64_t> run_id = FindRunId(db.sql(), run);
    if (!run_id.ok()) return run_id.status();
    SQLite::Statement drop(db.sql(), "DELETE FROM run_labels WHERE run_id = ? AND key = ?");
    for (const std::string& key : remove) {
      drop.bind(1, *run_id);
      drop.bind(2, key);
      drop.exec();
      drop.reset();
    }
    SQLite::Statement put(db.sql(),
                          "INSERT INTO run_labels(run_id, key, value) VALUES (?, ?, ?) "
                          "ON CONFLICT(run_id, key) DO UPDATE SET value = excluded.value");
    for (const auto& [key, value] : set) {
      put.bind(1, *run_id);
      put.bind(2, key);
      put.bind(3, value);
      put.exec();
      put.reset();
    }
    tx.commit();
    return true;
  });
  return done.ok() ? Status::Ok() : done.status();
}

StatusOr<DeletedRun> DeleteRun(Database& db, const std::string& run) {
  return CatchSqlErrors("deleting run '" + run + "'", [&]() -> StatusOr<DeletedRun> {
    SQLite::Transaction tx(db.sql(), SQLite::TransactionBehavior::IMMEDIATE);
    StatusOr<int64_t> run_id = FindRunId(db.sql(), run);
    if (!run_id.ok()) return run_id.status();
    DeletedRun deleted;
    const auto count = [&](const std::string& sql) {
      SQLite::Statement q(db.sql(), sql);
      q.bind(1, *run_id);
      return q.executeStep() ? q.getColumn(0).getInt64() : 0;
    };
    deleted.files = count("SELECT COUNT(*) FROM dump_files WHERE run_id = ?");
    deleted.modules = count("SELECT COUNT(*) FROM modules WHERE run_id = ?");
    const auto remove = [&](const std::string& sql) {
      SQLite::Statement q(db.sql(), sql);
      if (q.getBindParameterCount() > 0) q.bind(1, *run_id);
      deleted.rows += q.exec();
    };
    for (const char* sql : kInternedOfRun) {
      SQLite::Statement q(db.sql(), sql);
      q.bind(1, *run_id);
      q.exec();
    }
    for (const char* table : kModuleTables) {
      remove(std::string("DELETE FROM ") + table + " WHERE module_id IN (SELECT module_id FROM modules WHERE run_id = ?)");
    }
    for (const char* table : kFileTables) {
      remove(std::string("DELETE FROM ") + table + " WHERE file_id IN (SELECT file_id FROM dump_files WHERE run_id = ?)");
    }
    for (const char* table : {"kernel_spill_summary", "modules", "dump_files", "run_labels", "runs"}) {
      remove(std::string("DELETE FROM ") + table + " WHERE run_id = ?");
    }
    for (const char* sql : kUnusedInterned) remove(sql);
    for (const char* table : {"run_shapes", "run_sources", "run_texts"}) db.sql().exec(std::string("DROP TABLE temp.") + table);
    tx.commit();
    return deleted;
  });
}

}  // namespace xladb::store
