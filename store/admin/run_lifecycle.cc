#include "store/admin/run_lifecycle.h"

#include "ingest/source/run_name.h"
#include "store/admin/store_size.h"
#include "store/backend/row_binding.h"
#include "store/query/statement_text.h"
#include "store/facts/interned_removals.h"
#include "store/facts/run_labels.h"
#include "store/facts/store_tables.h"

namespace xladb::store {
namespace {

// The interned rows the run's rows refer to (collected before they go), then those of them no row refers to
// any more. Only the run's own candidates: a text left unreferenced otherwise (on PostgreSQL, by a file
// rolled back after its texts were committed) stays, so the store is as if the run had never been ingested.
constexpr const char* kInternedOfRun[] = {
    "CREATE TEMP TABLE run_texts AS SELECT DISTINCT text_id FROM instructions WHERE text_id IS NOT NULL AND "
    "module_id IN (SELECT module_id FROM doomed_modules)",
    "CREATE TEMP TABLE run_shapes AS SELECT shape_id FROM buffer_values WHERE shape_id IS NOT NULL AND module_id IN "
    "(SELECT module_id FROM doomed_modules) "
    "UNION SELECT shape_id FROM instructions WHERE shape_id IS NOT NULL AND module_id IN "
    "(SELECT module_id FROM doomed_modules) "
    "UNION SELECT shape_id FROM long_texts WHERE shape_id IS NOT NULL AND text_id IN (SELECT text_id FROM run_texts)",
    "CREATE TEMP TABLE run_sources AS SELECT source_file_id FROM instructions WHERE source_file_id IS NOT NULL AND "
    "module_id IN (SELECT module_id FROM doomed_modules) "
    "UNION SELECT source_file_id FROM long_texts WHERE source_file_id IS NOT NULL AND text_id IN "
    "(SELECT text_id FROM run_texts)",
    "CREATE TEMP TABLE run_names AS SELECT computation_id AS name_id FROM instructions WHERE computation_id IS NOT "
    "NULL AND module_id IN (SELECT module_id FROM doomed_modules) "
    "UNION SELECT op_name_id FROM instructions WHERE op_name_id IS NOT NULL AND module_id IN "
    "(SELECT module_id FROM doomed_modules) "
    "UNION SELECT op_name_id FROM long_texts WHERE op_name_id IS NOT NULL AND text_id IN "
    "(SELECT text_id FROM run_texts)"};

// The long texts first: a text that stays keeps the shape, name and source file cut out of it
// (store/facts/long_text.h).
constexpr const char* kUnusedInterned[] = {
    "DELETE FROM long_texts WHERE text_id IN (SELECT text_id FROM run_texts) AND text_id NOT IN "
    "(SELECT text_id FROM instructions WHERE text_id IS NOT NULL)",
    "DELETE FROM shapes WHERE shape_id IN (SELECT shape_id FROM run_shapes) AND shape_id NOT IN "
    "(SELECT shape_id FROM buffer_values WHERE shape_id IS NOT NULL UNION "
    " SELECT shape_id FROM instructions WHERE shape_id IS NOT NULL UNION "
    " SELECT shape_id FROM long_texts WHERE shape_id IS NOT NULL)",
    "DELETE FROM source_files WHERE source_file_id IN (SELECT source_file_id FROM run_sources) AND "
    "source_file_id NOT IN (SELECT source_file_id FROM instructions WHERE source_file_id IS NOT NULL UNION "
    " SELECT source_file_id FROM long_texts WHERE source_file_id IS NOT NULL)",
    "DELETE FROM names WHERE name_id IN (SELECT name_id FROM run_names) AND name_id NOT IN "
    "(SELECT computation_id FROM instructions WHERE computation_id IS NOT NULL UNION "
    " SELECT op_name_id FROM instructions WHERE op_name_id IS NOT NULL UNION "
    " SELECT op_name_id FROM long_texts WHERE op_name_id IS NOT NULL)"};

// Fills the temporary tables doomed_runs and doomed_modules, the runs whose rows go and their modules;
// collects the interned rows they refer to.
void BeginRemoval(SqlConnection& sql, const std::vector<int64_t>& run_ids) {
  // Before anything is removed: writers' open transactions end first, and none begins until this one ends.
  LockInternedRowsForRemoval(sql);
  sql.Exec("CREATE TEMP TABLE doomed_runs(run_id BIGINT PRIMARY KEY)");
  auto add = sql.Prepare("INSERT INTO doomed_runs(run_id) VALUES (?)");
  for (int64_t id : run_ids) {
    add->Bind(1, id);
    add->Execute();
  }
  sql.Exec("CREATE TEMP TABLE doomed_modules AS SELECT module_id FROM modules WHERE run_id IN "
           "(SELECT run_id FROM doomed_runs)");
  for (const char* q : kInternedOfRun) sql.Exec(q);
}

// Deletes the interned rows of the removed runs that nothing refers to any more; returns the rows deleted.
int64_t EndRemoval(SqlConnection& sql) {
  int64_t rows = 0;
  for (const char* q : kUnusedInterned) rows += sql.Prepare(q)->Execute();
  if (rows > 0) CountInternedRemoval(sql);  // writers forget the ids they kept
  for (const char* table :
       {"doomed_runs", "doomed_modules", "run_shapes", "run_sources", "run_texts", "run_names"}) {
    sql.Exec(std::string("DROP TABLE ") + table);
  }
  return rows;
}


}  // namespace

Status RelabelRun(Database& db, const std::string& run, const LabelList& set, const std::vector<std::string>& remove) {
  if (Status valid = ingest::ValidateRunLabels(set); !valid.ok()) return valid;
  auto done = CatchSqlErrors("labelling run '" + run + "'", [&]() -> StatusOr<bool> {
    WriteTransaction tx(db.connection());
    StatusOr<int64_t> run_id = FindRunId(db.connection(), run);
    if (!run_id.ok()) return run_id.status();
    auto drop = db.connection().Prepare("DELETE FROM run_labels WHERE run_id = ? AND key = ?");
    for (const std::string& key : remove) {
      BindRow(*drop, *run_id, key);
      drop->Execute();
    }
    PutRunLabels(db.connection(), *run_id, set);
    tx.Commit();
    return true;
  });
  return done.ok() ? Status::Ok() : done.status();
}

StatusOr<DeletedRun> DeleteRun(Database& db, const std::string& run) {
  return CatchSqlErrors("deleting run '" + run + "'", [&]() -> StatusOr<DeletedRun> {
    SqlConnection& sql = db.connection();
    WriteTransaction tx(sql);
    StatusOr<int64_t> run_id = FindRunId(sql, run);
    if (!run_id.ok()) return run_id.status();
    DeletedRun deleted;
    const auto count = [&](const std::string& text) {
      auto q = sql.Prepare(text);
      q->Bind(1, *run_id);
      return q->Step() ? q->Int(0) : 0;
    };
    deleted.files = count("SELECT COUNT(*) FROM dump_files WHERE run_id = ?");
    deleted.modules = count("SELECT COUNT(*) FROM modules WHERE run_id = ?");
    const auto remove = [&](const std::string& text) {  // `text` has one placeholder: the run
      auto q = sql.Prepare(text);
      q->Bind(1, *run_id);
      deleted.rows += q->Execute();
    };
    BeginRemoval(sql, {*run_id});
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
    deleted.rows += EndRemoval(sql);
    tx.Commit();
    return deleted;
  });
}

StatusOr<PrunedDetail> PruneDetail(Database& db, const PruneOptions& options) {
  if (options.keep_detail_days < 0) return Status::InvalidArgument("--keep-detail-days must not be negative");
  return CatchSqlErrors("pruning run detail", [&]() -> StatusOr<PrunedDetail> {
    SqlConnection& sql = db.connection();
    PrunedDetail pruned;
    const int64_t cutoff_us = options.now_us - options.keep_detail_days * int64_t{86400} * 1000000;
    {
      WriteTransaction tx(sql);
      std::string text = "SELECT r.run_id FROM runs r WHERE r.run_time_us < ? AND r.detail_pruned_at_us IS NULL";
      for (size_t i = 0; i < options.keep_labels.size(); ++i) {
        text += " AND NOT EXISTS (SELECT 1 FROM run_labels l WHERE l.run_id = r.run_id AND l.key = ? AND l.value = ?)";
      }
      auto q = sql.Prepare(text + " ORDER BY r.run_time_us");
      int slot = 1;
      q->Bind(slot++, cutoff_us);
      for (const auto& [key, value] : options.keep_labels) {
        q->Bind(slot++, key);
        q->Bind(slot++, value);
      }
      std::vector<int64_t> runs;
      while (q->Step()) runs.push_back(q->Int(0));
      q->Reset();
      if (runs.empty()) return pruned;
      pruned.runs = static_cast<int64_t>(runs.size());
      pruned.bytes_before = StoreBytes(sql);
      BeginRemoval(sql, runs);
      for (const char* table : kModuleDetailTables) {
        pruned.rows += sql.Prepare(std::string("DELETE FROM ") + table +
                                   " WHERE module_id IN (SELECT module_id FROM doomed_modules)")->Execute();
      }
      pruned.rows += EndRemoval(sql);
      auto mark = sql.Prepare("UPDATE runs SET detail_pruned_at_us = ? WHERE run_id = ?");
      for (int64_t id : runs) {
        BindRow(*mark, options.now_us, id);
        mark->Execute();
      }
      tx.Commit();
    }
    if (!db.is_sqlite()) {  // PostgreSQL's autovacuum makes the space reusable; the size is the database's
      pruned.bytes_after = StoreBytes(sql);
      return pruned;
    }
    // Give the space back: incrementally on a file made with auto_vacuum = INCREMENTAL (new files are); an
    // older file is rewritten once by VACUUM, which also switches it to incremental for the next prune.
    auto mode = sql.Prepare("PRAGMA auto_vacuum");
    const int64_t auto_vacuum = mode->Step() ? mode->Int(0) : 0;
    mode.reset();
    if (auto_vacuum == 2) {
      sql.Exec("PRAGMA incremental_vacuum");
    } else {
      sql.Exec("PRAGMA auto_vacuum = INCREMENTAL");
      sql.Exec("VACUUM");
    }
    sql.Exec("PRAGMA wal_checkpoint(TRUNCATE)");
    pruned.bytes_after = StoreBytes(sql);
    return pruned;
  });
}

}  // namespace xladb::store