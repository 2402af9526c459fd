#include "store/store_copy.h"

#include <SQLiteCpp/SQLiteCpp.h>
#include <sqlite3.h>

#include <cstdio>
#include <exception>
#include <map>
#include <optional>
#include <set>
#include <string_view>
#include <utility>

#include "store/row_tables.h"
#include "store/schema_dialect.h"

namespace xladb::store {
namespace {

constexpr size_t kCopyChunkBytes = size_t{1} << 20;

// Texts every run shares, with their id column.
constexpr std::pair<const char*, const char*> kSharedTables[] = {
    {"shapes", "shape_id"}, {"source_files", "source_file_id"}, {"names", "name_id"}, {"long_texts", "text_id"}};
// A run's own tables, keyed by run_id, in the order their foreign keys need.
constexpr const char* kRunTables[] = {"runs", "run_labels", "dump_files", "modules"};
// Not copied.
constexpr const char* kNotCopied[] = {"ingest_jobs"};

// How one table's rows are chosen: WHERE `where` with one `?`.
struct TableRule {
  std::string table;
  std::string where;
};

// The per-run rules, in copy order: the run's own rows, then its files' rows, then its modules' rows.
std::vector<TableRule> RunRules() {
  std::vector<TableRule> rules;
  for (const char* t : kRunTables) rules.push_back({t, "run_id = ?"});
  for (const char* t : kFileRowTables) {
    rules.push_back({t, "file_id IN (SELECT file_id FROM dump_files WHERE run_id = ?)"});
  }
  for (const char* t : kModuleDerivedTables) {
    rules.push_back({t, "module_id IN (SELECT module_id FROM modules WHERE run_id = ?)"});
  }
  for (const char* t : kModuleRowTables) {
    rules.push_back({t, "module_id IN (SELECT module_id FROM modules WHERE run_id = ?)"});
  }
  return rules;
}

// The columns of `table` in the source, in order (the destination has the same: tests/postgres).
std::vector<std::string> Columns(SQLite::Database& sql, const std::string& table) {
  std::vector<std::string> columns;
  SQLite::Statement q(sql, "SELECT name FROM pragma_table_info(?) ORDER BY cid");
  q.bind(1, table);
  while (q.executeStep()) columns.push_back(q.getColumn(0).getString());
  return columns;
}

std::string Joined(const std::vector<std::string>& columns) {
  std::string s;
  for (size_t i = 0; i < columns.size(); ++i) s += (i ? ", " : "") + columns[i];
  return s;
}

// Every table of the source has a copy rule, or is named as not copied: a table added to the schema without
// one fails the copy instead of being left behind.
Status CheckEveryTableHasARule(SQLite::Database& sql, const std::vector<TableRule>& run_rules) {
  std::set<std::string> ruled(std::begin(kNotCopied), std::end(kNotCopied));
  for (const auto& [table, id] : kSharedTables) ruled.insert(table);
  for (const TableRule& r : run_rules) ruled.insert(r.table);
  SQLite::Statement q(sql, "SELECT name FROM sqlite_schema WHERE type = 'table' AND name NOT LIKE 'sqlite_%'");
  while (q.executeStep()) {
    const std::string table = q.getColumn(0).getString();
    if (!ruled.count(table)) return Status::Internal("table " + table + " has no copy rule (store/store_copy.cc)");
  }
  return Status::Ok();
}

class Copier {
 public:
  Copier(SQLite::Database& source, PostgresConnection& destination) : src_(source), dst_(destination) {}

  // Copies the rows of `table` WHERE `where` (its `?` bound to `key`); returns the rows stored.
  StatusOr<int64_t> CopyRows(const std::string& table, const std::string& where, int64_t key) {
    std::vector<std::string>& columns = ColumnsOf(table);
    SQLite::Statement q(src_, "SELECT " + Joined(columns) + " FROM " + table + " WHERE " + where);
    q.bind(1, key);
    if (Status begun = dst_.BeginCopy(table, columns); !begun.ok()) return begun;
    store::CopyRows rows;
    Status sent = Status::Ok();
    char number[40];
    while (q.executeStep()) {
      for (int c = 0; c < q.getColumnCount(); ++c) {
        SQLite::Column cell = q.getColumn(c);
        switch (cell.getType()) {
          case SQLITE_NULL: rows.Null(); break;
          case SQLITE_INTEGER:
            std::snprintf(number, sizeof number, "%lld", static_cast<long long>(cell.getInt64()));
            rows.Text(number);
            break;
          case SQLITE_FLOAT:  // 17 significant digits: the same double on the other side
            std::snprintf(number, sizeof number, "%.17g", cell.getDouble());
            rows.Text(number);
            break;
          default:
            rows.Text(std::string_view(static_cast<const char*>(cell.getBlob()), static_cast<size_t>(cell.getBytes())));
            break;
        }
      }
      rows.EndRow();
      if (rows.data().size() >= kCopyChunkBytes) {
        if (sent.ok()) sent = dst_.PutCopyData(rows.data());
        rows.Clear();
      }
    }
    if (sent.ok() && !rows.data().empty()) sent = dst_.PutCopyData(rows.data());
    StatusOr<int64_t> stored = dst_.EndCopy();  // always end the COPY, so the connection is usable again
    if (!sent.ok()) return sent;
    return stored;
  }

 private:
  std::vector<std::string>& ColumnsOf(const std::string& table) {
    auto it = columns_.find(table);
    if (it == columns_.end()) it = columns_.emplace(table, Columns(src_, table)).first;
    return it->second;
  }

  SQLite::Database& src_;
  PostgresConnection& dst_;
  std::map<std::string, std::vector<std::string>> columns_;
};

StatusOr<int64_t> DestinationInt(PostgresConnection& dst, const std::string& sql,
                                 const std::vector<std::string>& params = {}) {
  auto rows = dst.Query(sql, params);
  if (!rows.ok()) return rows.status();
  if (rows->values.empty() || !rows->values[0][0]) return int64_t{0};
  return std::stoll(*rows->values[0][0]);
}

// Rolls back the destination's open transaction and returns `why`.
Status Abandon(PostgresConnection& dst, Status why) {
  (void)dst.Exec("ROLLBACK");
  return why;
}

StatusOr<CopyReport> Copy(SQLite::Database& src, PostgresConnection& dst) {
  CopyReport report;
  const std::vector<TableRule> run_rules = RunRules();
  if (Status ruled = CheckEveryTableHasARule(src, run_rules); !ruled.ok()) return ruled;
  if (Status schema = dst.Exec("BEGIN; " + SchemaSql(SqlDialect::kPostgresql) + "; COMMIT"); !schema.ok()) {
    return Abandon(dst, schema);
  }
  std::map<std::string, int64_t> copied;
  Copier copier(src, dst);

  // Shared texts: the rows past the destination's largest id.
  if (Status begun = dst.Exec("BEGIN"); !begun.ok()) return begun;
  for (const auto& [table, id] : kSharedTables) {
    auto max_id = DestinationInt(dst, std::string("SELECT MAX(") + id + ") FROM " + table);
    if (!max_id.ok()) return Abandon(dst, max_id.status());
    auto rows = copier.CopyRows(table, std::string(id) + " > ?", *max_id);
    if (!rows.ok()) return Abandon(dst, rows.status());
    copied[table] += *rows;
  }
  if (Status committed = dst.Exec("COMMIT"); !committed.ok()) return Abandon(dst, committed);

  // Runs, one transaction each.
  std::vector<std::pair<int64_t, std::string>> runs;
  {
    SQLite::Statement q(src, "SELECT run_id, name FROM runs ORDER BY run_id");
    while (q.executeStep()) runs.emplace_back(q.getColumn(0).getInt64(), q.getColumn(1).getString());
  }
  for (const auto& [run_id, name] : runs) {
    auto there = dst.Query("SELECT run_id, name FROM runs WHERE run_id = $1 OR name = $2",
                           {std::to_string(run_id), name});
    if (!there.ok()) return there.status();
    bool present = false;
    for (const auto& row : there->values) {
      if (*row[0] == std::to_string(run_id) && *row[1] == name) {
        present = true;
      } else {
        return Status::FailedPrecondition("the destination holds run " + *row[0] + " '" + *row[1] +
                                          "', where this store has run " + std::to_string(run_id) + " '" + name +
                                          "': it holds another store's runs; copy into an empty database");
      }
    }
    if (present) {
      ++report.runs_already_there;
      continue;
    }
    if (Status begun = dst.Exec("BEGIN"); !begun.ok()) return begun;
    for (const TableRule& rule : run_rules) {
      auto rows = copier.CopyRows(rule.table, rule.where, run_id);
      if (!rows.ok()) return Abandon(dst, Status::IoError("copying run '" + name + "', table " + rule.table + ": " +
                                                          rows.status().message()));
      copied[rule.table] += *rows;
    }
    if (Status committed = dst.Exec("COMMIT"); !committed.ok()) return Abandon(dst, committed);
    ++report.runs_copied;
  }

  // Identity columns continue past the copied ids.
  auto identities = dst.Query("SELECT table_name, column_name FROM information_schema.columns "
                              "WHERE table_schema = current_schema() AND is_identity = 'YES'");
  if (!identities.ok()) return identities.status();
  for (const auto& row : identities->values) {
    const std::string& table = *row[0];
    const std::string& column = *row[1];
    Status set = dst.Exec("SELECT setval(pg_get_serial_sequence('" + table + "', '" + column + "'), "
                          "COALESCE((SELECT MAX(" + column + ") FROM " + table + "), 0) + 1, false)");
    if (!set.ok()) return set;
  }

  // Verification: every copied table holds as many rows on both sides.
  std::vector<std::string> order;
  for (const auto& [table, id] : kSharedTables) order.push_back(table);
  for (const TableRule& rule : run_rules) order.push_back(rule.table);
  std::string differences;
  for (const std::string& table : order) {
    CopyReport::Table t;
    t.name = table;
    t.rows_copied = copied[table];
    t.source_rows = src.execAndGet("SELECT COUNT(*) FROM " + table).getInt64();
    auto n = DestinationInt(dst, "SELECT COUNT(*) FROM " + table);
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

}  // namespace

StatusOr<CopyReport> CopyToPostgres(Database& source, PostgresConnection& destination) {
  SQLite::Database& src = source.sql();
  try {
    src.exec("BEGIN");  // one snapshot of the source for the whole copy
    StatusOr<CopyReport> report = Copy(src, destination);
    src.exec("COMMIT");
    return report;
  } catch (const std::exception& e) {
    try {
      src.exec("ROLLBACK");
    } catch (...) {
    }
    (void)destination.Exec("ROLLBACK");
    return Status::IoError(std::string("reading the source store: ") + e.what());
  }
}

}  // namespace xladb::store
