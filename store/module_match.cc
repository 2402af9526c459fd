#include "store/module_match.h"

#include <SQLiteCpp/SQLiteCpp.h>

#include <set>
#include <string_view>

#include "store/query_sql.h"

namespace xladb::store {

extern const char kSchemaSql[];  // generated from schema.sql

namespace {

// The module_matches view's SELECT, from schema.sql, with its `/*@runs*/` marker (inside the `m` CTE)
// replaced by `restriction`.
std::string RestrictedModuleMatchesSql(std::string_view restriction) {
  static const std::string view = [] {
    const std::string_view schema(kSchemaSql);
    constexpr std::string_view kHead = "CREATE VIEW IF NOT EXISTS module_matches AS\n";
    const size_t begin = schema.find(kHead);
    const size_t end = schema.find(";\n", begin);
    if (begin == std::string_view::npos || end == std::string_view::npos) return std::string();
    return std::string(schema.substr(begin + kHead.size(), end - begin - kHead.size()));
  }();
  constexpr std::string_view kMarker = "/*@runs*/";
  std::string sql = view;
  const size_t at = sql.find(kMarker);
  if (at == std::string::npos) return {};
  sql.replace(at, kMarker.size(), restriction);
  return sql;
}

}  // namespace

int64_t ModuleRow::metric(std::string_view name) const {
  for (size_t i = 0; i < std::size(kModuleMetrics); ++i) {
    if (kModuleMetrics[i].name == name) return metrics[i];
  }
  return -1;
}

int SameProgram(const ModuleRow& a, const ModuleRow& b) {
  if (a.fingerprint.empty() || b.fingerprint.empty() || a.fingerprint_source != b.fingerprint_source) return -1;
  return a.fingerprint == b.fingerprint ? 1 : 0;
}

StatusOr<std::vector<ModuleRow>> LoadRunModules(Database& db, int64_t run_id) {
  Conditions where;
  where.Add("mm.run_id = ?", run_id);
  return LoadModuleRows(db, where);
}

StatusOr<std::vector<ModuleRow>> LoadModuleRows(Database& db, const Conditions& where) {
  try {
    std::string columns;
    for (const ModuleMetric& m : kModuleMetrics) columns += ", mm." + std::string(m.name);
    SQLite::Statement q(db.sql(),
                        "SELECT mm.module_id, mm.run_id, mm.run_name, mm.run_time_us, mm.module_name, mm.stage, "
                        "       mm.folder, mm.backend, mm.entry_signature, mm.identity_key, mo.fingerprint, "
                        "       mo.fingerprint_source, mm.xla_module_id, mm.peak_time, mm.live_peak_padded_time, "
                        "       mm.schedule_length" +
                            columns +
                            " FROM module_memory mm JOIN modules mo ON mo.module_id = mm.module_id" +
                            where.Where() +
                            " ORDER BY mm.run_time_us, mm.run_id, mm.module_name, mm.stage, mm.folder, "
                            "COALESCE(mm.xla_module_id, -1), mm.module_id");
    BindArgs(q, where.args());
    std::vector<ModuleRow> rows;
    while (q.executeStep()) {
      ModuleRow r;
      r.module_id = q.getColumn(0).getInt64();
      r.run_id = q.getColumn(1).getInt64();
      r.run_name = TextOf(q.getColumn(2));
      r.run_time_us = q.getColumn(3).getInt64();
      r.name = TextOf(q.getColumn(4));
      r.stage = TextOf(q.getColumn(5));
      r.folder = TextOf(q.getColumn(6));
      r.backend = TextOf(q.getColumn(7));
      r.entry_signature = TextOf(q.getColumn(8));
      r.identity_key = TextOf(q.getColumn(9));
      r.fingerprint = TextOf(q.getColumn(10));
      r.fingerprint_source = TextOf(q.getColumn(11));
      auto int_or = [&](int i) { return q.getColumn(i).isNull() ? int64_t{-1} : q.getColumn(i).getInt64(); };
      r.xla_module_id = int_or(12);
      r.peak_time = int_or(13);
      r.live_peak_padded_time = int_or(14);
      r.schedule_length = int_or(15);
      for (size_t i = 0; i < std::size(kModuleMetrics); ++i) r.metrics[i] = int_or(16 + static_cast<int>(i));
      rows.push_back(std::move(r));
    }
    return rows;
  } catch (const std::exception& e) {
    return Status::IoError(std::string("reading the modules of a run: ") + e.what());
  }
}

StatusOr<std::vector<ModulePair>> MatchModules(Database& db, int64_t baseline_run_id, int64_t current_run_id,
                                               const std::string& identity_key) {
  if (baseline_run_id == current_run_id) {
    // A run against itself: every module is its own match.
    try {
      SQLite::Statement q(db.sql(), std::string("SELECT module_id FROM module_memory WHERE run_id = ?") +
                                        (identity_key.empty() ? "" : " AND identity_key = ?") + " ORDER BY module_id");
      q.bind(1, baseline_run_id);
      if (!identity_key.empty()) q.bind(2, identity_key);
      std::vector<ModulePair> pairs;
      while (q.executeStep()) pairs.push_back({q.getColumn(0).getInt64(), q.getColumn(0).getInt64(), "identity"});
      return pairs;
    } catch (const std::exception& e) {
      return Status::IoError(std::string("matching a run's modules with themselves: ") + e.what());
    }
  }
  std::string restriction = "AND mm.run_id IN (:a, :b)";
  if (!identity_key.empty()) restriction += " AND mm.identity_key = :key";
  const std::string body = RestrictedModuleMatchesSql(restriction);
  if (body.empty()) return Status::Internal("schema.sql has no module_matches view with its /*@runs*/ marker");
  try {
    SQLite::Statement q(db.sql(), "SELECT module_id_a, module_id_b, matched_by FROM (" + body +
                                      ") WHERE run_id_a = :a AND run_id_b = :b ORDER BY module_id_b");
    q.bind(":a", baseline_run_id);
    q.bind(":b", current_run_id);
    if (!identity_key.empty()) q.bind(":key", identity_key);
    std::vector<ModulePair> pairs;
    std::set<int64_t> matched;
    while (q.executeStep()) {
      ModulePair p;
      p.baseline_module_id = q.getColumn(0).getInt64();
      p.current_module_id = q.getColumn(1).getInt64();
      p.matched_by = TextOf(q.getColumn(2));
      matched.insert(p.baseline_module_id);
      matched.insert(p.current_module_id);
      pairs.push_back(std::move(p));
    }
    SQLite::Statement lone(db.sql(),
                           std::string("SELECT module_id, run_id FROM module_memory WHERE run_id IN (:a, :b)") +
                               (identity_key.empty() ? "" : " AND identity_key = :key") + " ORDER BY module_id");
    lone.bind(":a", baseline_run_id);
    lone.bind(":b", current_run_id);
    if (!identity_key.empty()) lone.bind(":key", identity_key);
    std::vector<ModulePair> added;
    while (lone.executeStep()) {
      const int64_t id = lone.getColumn(0).getInt64();
      if (matched.count(id)) continue;
      ModulePair p;
      if (lone.getColumn(1).getInt64() == baseline_run_id) {
        p.baseline_module_id = id;
        pairs.push_back(p);
      } else {
        p.current_module_id = id;
        added.push_back(p);
      }
    }
    pairs.insert(pairs.end(), added.begin(), added.end());
    return pairs;
  } catch (const std::exception& e) {
    return Status::IoError(std::string("matching the modules of two runs: ") + e.what());
  }
}

const ModuleRow* MatchedRuns::Row(int64_t module_id) const {
  if (module_id == 0) return nullptr;
  auto it = by_id_.find(module_id);
  return it == by_id_.end() ? nullptr : it->second;
}

StatusOr<MatchedRuns> LoadMatchedRuns(Database& db, int64_t baseline_run_id, int64_t current_run_id) {
  MatchedRuns runs;
  auto baseline = LoadRunModules(db, baseline_run_id);
  if (!baseline.ok()) return baseline.status();
  auto current = LoadRunModules(db, current_run_id);
  if (!current.ok()) return current.status();
  auto pairs = MatchModules(db, baseline_run_id, current_run_id);
  if (!pairs.ok()) return pairs.status();
  runs.baseline = std::move(*baseline);
  runs.current = std::move(*current);
  runs.pairs = std::move(*pairs);
  for (const auto* rows : {&runs.baseline, &runs.current}) {
    for (const ModuleRow& r : *rows) runs.by_id_[r.module_id] = &r;
  }
  return runs;
}

}  // namespace xladb::store
