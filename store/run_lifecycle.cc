#include "store/run_lifecycle.h"

#include <SQLiteCpp/SQLiteCpp.h>

#include "store/query_sql.h"
#include "store/row_tables.h"

namespace xladb::store {
namespace {

// The interned rows the run's rows refer to (collected before they go), then those of them no row refers to
// any more. Only the run's own candidates: a text some earlier merge left unreferenced stays, so the file is
// as if the run had never been ingested.
constexpr const char* kInternedOfRun[] = {
    "CREATE TEMP TABLE run_shapes AS SELECT shape_id FROM buffer_values WHERE shape_id IS NOT NULL AND module_id IN "
    "(SELECT module_id FROM modules WHERE run_id IN (SELECT run_id FROM temp.doomed_runs)) UNION SELECT shape_id "
    "FROM instructions WHERE shape_id IS NOT NULL AND module_id IN "
    "(SELECT module_id FROM modules WHERE run_id IN (SELECT run_id FROM temp.doomed_runs))",
    "CREATE TEMP TABLE run_sources AS SELECT DISTINCT source_file_id FROM instructions WHERE source_file_id IS NOT "
    "NULL AND module_id IN (SELECT module_id FROM modules WHERE run_id IN (SELECT run_id FROM temp.doomed_runs))",
    "CREATE TEMP TABLE run_texts AS SELECT DISTINCT text_id FROM instructions WHERE text_id IS NOT NULL AND "
    "module_id IN (SELECT module_id FROM modules WHERE run_id IN (SELECT run_id FROM temp.doomed_runs))",
    "CREATE TEMP TABLE run_names AS SELECT computation_id AS name_id FROM instructions WHERE computation_id IS NOT "
    "NULL AND module_id IN (SELECT module_id FROM modules WHERE run_id IN (SELECT run_id FROM temp.doomed_runs)) "
    "UNION SELECT op_name_id FROM instructions WHERE op_name_id IS NOT NULL AND module_id IN "
    "(SELECT module_id FROM modules WHERE run_id IN (SELECT run_id FROM temp.doomed_runs))"};

constexpr const char* kUnusedInterned[] = {
    "DELETE FROM shapes WHERE shape_id IN (SELECT shape_id FROM temp.run_shapes) AND shape_id NOT IN "
    "(SELECT shape_id FROM buffer_values WHERE shape_id IS NOT NULL UNION "
    " SELECT shape_id FROM instructions WHERE shape_id IS NOT NULL)",
    "DELETE FROM source_files WHERE source_file_id IN (SELECT source_file_id FROM temp.run_sources) AND "
    "source_file_id NOT IN (SELECT source_file_id FROM instructions WHERE source_file_id IS NOT NULL)",
    "DELETE FROM long_texts WHERE text_id IN (SELECT text_id FROM temp.run_texts) AND text_id NOT IN "
    "(SELECT text_id FROM instructions WHERE text_id IS NOT NULL)",
    "DELETE FROM names WHERE name_id IN (SELECT name_id FROM temp.run_names) AND name_id NOT IN "
    "(SELECT computation_id FROM instructions WHERE computation_id IS NOT NULL UNION "
    " SELECT op_name_id FROM instructions WHERE op_name_id IS NOT NULL)"};

int64_t FileBytes(SQLite::Database& sql) {
  return sql.execAndGet("PRAGMA page_count").getInt64() * sql.execAndGet("PRAGMA page_size").getInt64();
}

// Fills temp.doomed_runs, the runs whose rows go; collects the interned rows they refer to.
void BeginRemoval(SQLite::Database& sql, const std::vector<int64_t>& run_ids) {
  sql.exec("CREATE TEMP TABLE doomed_runs(run_id INTEGER PRIMARY KEY)");
  SQLite::Statement add(sql, "INSERT INTO temp.doomed_runs(run_id) VALUES (?)");
  for (int64_t id : run_ids) {
    add.bind(1, id);
    add.exec();
    add.reset();
  }
  for (const char* q : kInternedOfRun) sql.exec(q);
}

// Deletes the interned rows of the removed runs that nothing refers to any more; returns the rows deleted.
int64_t EndRemoval(SQLite::Database& sql) {
  int64_t rows = 0;
  for (const char* q : kUnusedInterned) rows += sql.exec(q);
  for (const char* table : {"doomed_runs", "run_shapes", "run_sources", "run_texts", "run_names"}) {
    sql.exec(std::string("DROP TABLE temp.") + table);
  }
  return rows;
}


}  // namespace

Status RelabelRun(Database& db, const std::string& run, const LabelList& set, const std::vector<std::string>& remove) {
  for (const auto& [key, value] : set) {
    if (key.empty()) return Status::InvalidArgument("a label needs a key: '=" + value + "'");
  }
  auto done = CatchSqlErrors("labelling run '" + run + "'", [&]() -> StatusOr<bool> {
    SQLite::Transaction tx(db.sql(), SQLite::TransactionBehavior::IMMEDIATE);
    StatusOr<int64_t> run_id = FindRunId(db.connection(), run);
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
    StatusOr<int64_t> run_id = FindRunId(db.connection(), run);
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
    BeginRemoval(db.sql(), {*run_id});
    const auto remove_by_module = [&](const char* table) {
      remove(std::string("DELETE FROM ") + table + " WHERE module_id IN (SELECT module_id FROM modules WHERE run_id = ?)");
    };
    for (const char* table : kModuleDerivedTables) remove_by_module(table);
    for (const char* table : kModuleRowTables) remove_by_module(table);
    for (const char* table : kFileRowTables) {
      remove(std::string("DELETE FROM ") + table + " WHERE file_id IN (SELECT file_id FROM dump_files WHERE run_id = ?)");
    }
    for (const char* table : {"modules", "dump_files", "run_labels", "runs"}) {
      remove(std::string("DELETE FROM ") + table + " WHERE run_id = ?");
    }
    deleted.rows += EndRemoval(db.sql());
    tx.commit();
    return deleted;
  });
}

StatusOr<PrunedDetail> PruneDetail(Database& db, const PruneOptions& options) {
  if (options.keep_detail_days < 0) return Status::InvalidArgument("--keep-detail-days must not be negative");
  return CatchSqlErrors("pruning run detail", [&]() -> StatusOr<PrunedDetail> {
    PrunedDetail pruned;
    const int64_t cutoff_us = options.now_us - options.keep_detail_days * int64_t{86400} * 1000000;
    {
      SQLite::Transaction tx(db.sql(), SQLite::TransactionBehavior::IMMEDIATE);
      std::string sql =
          "SELECT r.run_id FROM runs r WHERE r.run_time_us < ? AND r.detail_pruned_at_us IS NULL";
      for (size_t i = 0; i < options.keep_labels.size(); ++i) {
        sql += " AND NOT EXISTS (SELECT 1 FROM run_labels l WHERE l.run_id = r.run_id AND l.key = ? AND l.value = ?)";
      }
      SQLite::Statement q(db.sql(), sql + " ORDER BY r.run_time_us");
      int slot = 1;
      q.bind(slot++, cutoff_us);
      for (const auto& [key, value] : options.keep_labels) {
        q.bind(slot++, key);
        q.bind(slot++, value);
      }
      std::vector<int64_t> runs;
      while (q.executeStep()) runs.push_back(q.getColumn(0).getInt64());
      q.reset();
      if (runs.empty()) return pruned;
      pruned.runs = static_cast<int64_t>(runs.size());
      pruned.bytes_before = FileBytes(db.sql());
      BeginRemoval(db.sql(), runs);
      for (const char* table : kModuleDetailTables) {
        pruned.rows += db.sql().exec(std::string("DELETE FROM ") + table + " WHERE module_id IN (SELECT module_id "
                                     "FROM modules WHERE run_id IN (SELECT run_id FROM temp.doomed_runs))");
      }
      pruned.rows += EndRemoval(db.sql());
      SQLite::Statement mark(db.sql(), "UPDATE runs SET detail_pruned_at_us = ? WHERE run_id = ?");
      for (int64_t id : runs) {
        mark.bind(1, options.now_us);
        mark.bind(2, id);
        mark.exec();
        mark.reset();
      }
      tx.commit();
    }
    // Give the space back: incrementally on a file made with auto_vacuum = INCREMENTAL (new files are); an
    // older file is rewritten once by VACUUM, which also switches it to incremental for the next prune.
    if (db.sql().execAndGet("PRAGMA auto_vacuum").getInt() == 2) {
      db.sql().exec("PRAGMA incremental_vacuum");
    } else {
      db.sql().exec("PRAGMA auto_vacuum = INCREMENTAL");
      db.sql().exec("VACUUM");
    }
    db.sql().exec("PRAGMA wal_checkpoint(TRUNCATE)");
    pruned.bytes_after = FileBytes(db.sql());
    return pruned;
  });
}

}  // namespace xladb::store