#include "store/copy/store_copy.h"

#include <SQLiteCpp/SQLiteCpp.h>

#include <exception>
#include <map>
#include <optional>
#include <set>
#include <utility>

#include "store/copy/copy_endpoint.h"
#include "store/facts/store_tables.h"
#include "store/schema/schema_dialect.h"

namespace xladb::store {

namespace {

// Texts every run shares, with their id column.
constexpr std::pair<const char*, const char*> kSharedTables[] = {
    {"shapes", "shape_id"}, {"source_files", "source_file_id"}, {"names", "name_id"}, {"long_texts", "text_id"}};
// A run's own tables, keyed by run_id, in the order their foreign keys need.
constexpr const char* kRunTables[] = {"runs", "run_labels", "dump_files", "modules"};
// Not copied.
constexpr const char* kNotCopied[] = {"ingest_jobs", "store_counters"};  // each store its own

// How one table's rows are chosen: WHERE `where`, whose `@` is the endpoint's placeholder for the key.
struct TableRule {
  std::string table;
  std::string where;
};

// The per-run rules, in copy order: the run's own rows, then its files' rows, then its modules' rows.
std::vector<TableRule> RunRules() {
  std::vector<TableRule> rules;
  for (const char* t : kRunTables) rules.push_back({t, "run_id = @"});
  for (const char* t : kFileRowTables) {
    rules.push_back({t, "file_id IN (SELECT file_id FROM dump_files WHERE run_id = @)"});
  }
  for (const char* t : kModuleDerivedTables) {
    rules.push_back({t, "module_id IN (SELECT module_id FROM modules WHERE run_id = @)"});
  }
  for (const char* t : kModuleRowTables) {
    rules.push_back({t, "module_id IN (SELECT module_id FROM modules WHERE run_id = @)"});
  }
  return rules;
}

// Every table of the schema with its columns in order, read from schema.sql applied to an empty in-memory
// database: the same on both backends (tests/postgres/schema_parity_test.cc).
std::map<std::string, std::vector<std::string>> SchemaColumns() {
  SQLite::Database db(":memory:", SQLite::OPEN_READWRITE | SQLite::OPEN_CREATE);
  db.exec(SchemaSql(SqlDialect::kSqlite));
  std::map<std::string, std::vector<std::string>> tables;
  SQLite::Statement q(db, "SELECT name FROM sqlite_schema WHERE type = 'table' AND name NOT LIKE 'sqlite_%'");
  while (q.executeStep()) {
    std::vector<std::string>& columns = tables[q.getColumn(0).getString()];
    SQLite::Statement c(db, "SELECT name FROM pragma_table_info(?) ORDER BY cid");
    c.bind(1, q.getColumn(0).getString());
    while (c.executeStep()) columns.push_back(c.getColumn(0).getString());
  }
  return tables;
}

std::string Joined(const std::vector<std::string>& columns) {
  std::string s;
  for (size_t i = 0; i < columns.size(); ++i) s += (i ? ", " : "") + columns[i];
  return s;
}

// `text` with its n-th `@` replaced by the endpoint's placeholder for parameter n.
std::string WithPlaceholders(std::string text, const CopyEndpoint& endpoint) {
  int n = 0;
  for (size_t at = text.find('@'); at != std::string::npos; at = text.find('@', at)) {
    const std::string placeholder = endpoint.Placeholder(++n);
    text.replace(at, 1, placeholder);
    at += placeholder.size();
  }
  return text;
}

int64_t IntOf(const SqlValue& v) {
  if (auto* i = std::get_if<int64_t>(&v)) return *i;
  return 0;
}
std::string TextOf(const SqlValue& v) {
  if (auto* s = std::get_if<std::string>(&v)) return *s;
  if (auto* i = std::get_if<int64_t>(&v)) return std::to_string(*i);
  return "";
}

class Copier {
 public:
  Copier(CopyEndpoint& src, CopyEndpoint& dst, std::map<std::string, std::vector<std::string>> columns)
      : src_(src), dst_(dst), columns_(std::move(columns)) {}

  // Copies the rows of `table` WHERE `where` (its key bound to `key`) inside the destination's open
  // transaction; returns the rows stored.
  StatusOr<int64_t> CopyRows(const std::string& table, const std::string& where, int64_t key) {
    const std::vector<std::string>& columns = columns_.at(table);
    if (Status begun = dst_.BeginTable(table, columns); !begun.ok()) return begun;
    Status read = src_.ReadRows(
        "SELECT " + Joined(columns) + " FROM " + table + " WHERE " + WithPlaceholders(where, src_), key,
        [&](const CopyEndpoint::Row& row) { return dst_.AddRow(row); });
    StatusOr<int64_t> stored = dst_.EndTable();  // always ended, so the destination is usable again
    if (!read.ok()) return read;
    return stored;
  }

  // One integer of the destination (NULL: 0).
  StatusOr<int64_t> DestinationInt(const std::string& sql) {
    auto rows = dst_.Query(sql, {});
    if (!rows.ok()) return rows.status();
    return rows->empty() || rows->front().empty() ? 0 : IntOf(rows->front()[0]);
  }

 private:
  CopyEndpoint& src_;
  CopyEndpoint& dst_;
  std::map<std::string, std::vector<std::string>> columns_;
};

// A destination that holds an earlier copy can take more runs only if the source has only grown since: no
// copied run deleted or pruned there, and no shared text removed (SQLite hands a removed largest id out again,
// and the copy adds texts by id). Anything else is refused before a row is written.
Status CheckTheSourceOnlyGrew(CopyEndpoint& src, CopyEndpoint& dst) {
  const std::string empty_again = "; copy into an empty database";
  auto copied_runs = dst.Query("SELECT run_id, name, CASE WHEN detail_pruned_at_us IS NULL THEN 0 ELSE 1 END "
                               "FROM runs ORDER BY run_id",
                               {});
  if (!copied_runs.ok()) return copied_runs.status();
  const std::string find = WithPlaceholders(
      "SELECT name, CASE WHEN detail_pruned_at_us IS NULL THEN 0 ELSE 1 END FROM runs WHERE run_id = @", src);
  // A run the source lacks is one deleted there since the last copy, unless the source has none of the
  // destination's runs: then the destination holds another store's runs.
  std::optional<Status> missing;
  bool any_copied = false;
  for (const CopyEndpoint::Row& run : *copied_runs) {
    auto there = src.Query(find, {run[0]});
    if (!there.ok()) return there.status();
    const std::string name = TextOf(run[1]);
    if (there->empty() || TextOf((*there)[0][0]) != name) {
      if (!missing) {
        missing = Status::FailedPrecondition("the destination holds run " + TextOf(run[0]) + " '" + name +
                                             "', which the source no longer has (deleted since the last copy?)" +
                                             empty_again);
      }
      continue;
    }
    any_copied = true;
    if (IntOf((*there)[0][1]) != IntOf(run[2])) {
      return Status::FailedPrecondition("run '" + name + "' was pruned in the source since the last copy" +
                                        empty_again);
    }
  }
  if (missing && !any_copied) {
    return Status::FailedPrecondition("the destination holds another store's runs: none of its " +
                                      std::to_string(copied_runs->size()) + " runs (run " +
                                      TextOf((*copied_runs)[0][0]) + " '" + TextOf((*copied_runs)[0][1]) +
                                      "', …) is in the source" + empty_again);
  }
  if (missing) return *missing;
  for (const auto& [table, id] : kSharedTables) {
    auto rows = dst.Query(std::string("SELECT COUNT(*), MAX(") + id + ") FROM " + table, {});
    if (!rows.ok()) return rows.status();
    const int64_t count = IntOf((*rows)[0][0]);
    const int64_t max_id = IntOf((*rows)[0][1]);
    if (count == 0) continue;
    auto source =
        src.Query(WithPlaceholders(std::string("SELECT COUNT(*) FROM ") + table + " WHERE " + id + " <= @", src),
                  {max_id});
    if (!source.ok()) return source.status();
    if (IntOf((*source)[0][0]) != count) {
      return Status::FailedPrecondition(std::string("the source's ") + table +
                                        " lost rows since the last copy (a run was deleted or pruned there, or a "
                                        "file ingested again with other text), so their ids may name other texts "
                                        "now" +
                                        empty_again);
    }
  }
  return Status::Ok();
}

// Rolls back the destination's open transaction and returns `why`.
Status Abandon(CopyEndpoint& dst, Status why) {
  dst.Rollback();
  return why;
}

StatusOr<CopyReport> Copy(CopyEndpoint& src, CopyEndpoint& dst) {
  CopyReport report;
  const std::vector<TableRule> run_rules = RunRules();
  std::map<std::string, std::vector<std::string>> columns;
  try {
    columns = SchemaColumns();
  } catch (const std::exception& e) {
    return Status::Internal(std::string("reading the schema: ") + e.what());
  }
  // Every table has a copy rule, or is named as not copied: a table added to the schema without one fails the
  // copy instead of being left behind.
  std::set<std::string> ruled(std::begin(kNotCopied), std::end(kNotCopied));
  for (const auto& [table, id] : kSharedTables) ruled.insert(table);
  for (const TableRule& r : run_rules) ruled.insert(r.table);
  for (const auto& [table, cols] : columns) {
    if (!ruled.count(table)) return Status::Internal("table " + table + " has no copy rule (store/copy/store_copy.cc)");
  }
  if (Status opened = dst.Open(/*as_source=*/false); !opened.ok()) return opened;
  std::map<std::string, int64_t> copied;
  Copier copier(src, dst, columns);
  if (Status grown = CheckTheSourceOnlyGrew(src, dst); !grown.ok()) return grown;

  // Shared texts: the rows past the destination's largest id (ids only grow).
  if (Status begun = dst.Begin(); !begun.ok()) return begun;
  for (const auto& [table, id] : kSharedTables) {
    auto max_id = copier.DestinationInt(std::string("SELECT MAX(") + id + ") FROM " + table);
    if (!max_id.ok()) return Abandon(dst, max_id.status());
    auto rows = copier.CopyRows(table, std::string(id) + " > @", *max_id);
    if (!rows.ok()) return Abandon(dst, rows.status());
    copied[table] += *rows;
  }
  if (Status committed = dst.Commit(); !committed.ok()) return Abandon(dst, committed);

  // Runs, one destination transaction each.
  std::vector<std::string> failed_runs;
  auto runs = src.Query("SELECT run_id, name FROM runs ORDER BY run_id", {});
  if (!runs.ok()) return runs.status();
  const std::string find_run = WithPlaceholders("SELECT run_id, name FROM runs WHERE run_id = @ OR name = @", dst);
  for (const CopyEndpoint::Row& run : *runs) {
    const int64_t run_id = IntOf(run[0]);
    const std::string name = TextOf(run[1]);
    auto there = dst.Query(find_run, {run_id, name});
    if (!there.ok()) return there.status();
    bool present = false;
    for (const CopyEndpoint::Row& row : *there) {
      if (IntOf(row[0]) == run_id && TextOf(row[1]) == name) {
        present = true;
      } else {
        return Status::FailedPrecondition("the destination holds run " + TextOf(row[0]) + " '" + TextOf(row[1]) +
                                          "', where the source has run " + std::to_string(run_id) + " '" + name +
                                          "': it holds another store's runs; copy into an empty database");
      }
    }
    if (present) {
      ++report.runs_already_there;
      continue;
    }
    // A run the destination refuses (a text PostgreSQL will not take as UTF-8, say) is rolled back, named,
    // and passed over: the runs after it are still copied, and a later copy tries it again.
    if (Status begun = dst.Begin(); !begun.ok()) return begun;
    std::map<std::string, int64_t> copied_now;
    Status run_status = Status::Ok();
    for (const TableRule& rule : run_rules) {
      auto rows = copier.CopyRows(rule.table, rule.where, run_id);
      if (!rows.ok()) {
        run_status = Status::IoError("run '" + name + "', table " + rule.table + ": " + rows.status().message());
        break;
      }
      copied_now[rule.table] += *rows;
    }
    if (run_status.ok()) {
      if (Status committed = dst.Commit(); !committed.ok()) run_status = committed;
    }
    if (!run_status.ok()) {
      dst.Rollback();
      failed_runs.push_back(run_status.message());
      continue;
    }
    for (const auto& [table, n] : copied_now) copied[table] += n;
    ++report.runs_copied;
  }
  std::vector<std::string> order;  // every table copied: the shared texts, then the run's tables
  for (const auto& [table, id] : kSharedTables) order.push_back(table);
  for (const TableRule& rule : run_rules) order.push_back(rule.table);
  if (Status finished = dst.Finish(); !finished.ok()) return finished;
  std::vector<std::string> filled;  // the tables this call put rows into
  for (const std::string& table : order) {
    if (copied[table] > 0) filled.push_back(table);
  }
  if (Status tidied = dst.Tidy(filled); !tidied.ok()) {
    report.tidy_warning = "the copied tables were not vacuumed and analyzed (" + tidied.message() +
                          "); queries answer, planned on older statistics, until autovacuum comes by or "
                          "VACUUM (ANALYZE) runs";
  }
  if (!failed_runs.empty()) {
    std::string why = std::to_string(report.runs_copied) + " runs copied, but " +
                      std::to_string(failed_runs.size()) + " could not be (a later copy tries them again): ";
    for (size_t i = 0; i < failed_runs.size() && i < 5; ++i) why += (i ? "; " : "") + failed_runs[i];
    if (failed_runs.size() > 5) why += "; …";
    return Status::IoError(why);
  }

  // Verification: every copied table holds as many rows on both sides.
  std::string differences;
  for (const std::string& table : order) {
    CopyReport::Table t;
    t.name = table;
    t.rows_copied = copied[table];
    auto source_rows = src.Query("SELECT COUNT(*) FROM " + table, {});
    if (!source_rows.ok()) return source_rows.status();
    t.source_rows = IntOf((*source_rows)[0][0]);
    auto n = copier.DestinationInt("SELECT COUNT(*) FROM " + table);
    if (!n.ok()) return n.status();
    t.destination_rows = *n;
    if (t.source_rows != t.destination_rows) {
      differences += (differences.empty() ? "" : "; ") + table + " has " + std::to_string(t.source_rows) +
                     " rows in the source and " + std::to_string(t.destination_rows) + " in the destination";
    }
    report.tables.push_back(std::move(t));
  }
  if (!differences.empty()) return Status::DataLoss("the copy does not match its source: " + differences);
  return report;
}

// The copy between two endpoints, inside the source's read snapshot.
StatusOr<CopyReport> CopyBetween(CopyEndpoint& src, CopyEndpoint& dst) {
  if (Status opened = src.Open(/*as_source=*/true); !opened.ok()) return opened;
  if (Status begun = src.Begin(); !begun.ok()) return begun;
  StatusOr<CopyReport> report = Copy(src, dst);
  src.Rollback();  // a read snapshot: nothing to commit
  return report;
}

}  // namespace

StatusOr<CopyReport> CopyToPostgres(Database& source, PostgresConnection& destination) {
  auto src = SqliteCopyEndpoint(&source);
  auto dst = PostgresCopyEndpoint(&destination);
  return CopyBetween(*src, *dst);
}

StatusOr<CopyReport> CopyToSqlite(PostgresConnection& source, Database& destination) {
  auto src = PostgresCopyEndpoint(&source);
  auto dst = SqliteCopyEndpoint(&destination);
  return CopyBetween(*src, *dst);
}

}  // namespace xladb::store
