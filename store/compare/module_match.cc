#include "store/compare/module_match.h"

#include <map>
#include <set>
#include <string_view>

#include "store/query/statement_text.h"
#include "store/compare/reshaped_pairs.h"
#include "store/schema/schema_dialect.h"

namespace xladb::store {

extern const char kSchemaSql[];  // generated from schema.sql

namespace {

// The module_matches view's SELECT, from schema.sql in `dialect`, with its `/*@runs*/` marker (inside the
// `m` CTE) replaced by `restriction`.
std::string RestrictedModuleMatchesSql(SqlDialect dialect, std::string_view restriction) {
  static const std::string view = [] {
    const std::string_view schema(kSchemaSql);
    constexpr std::string_view kHead = "CREATE VIEW IF NOT EXISTS module_matches AS\n";
    const size_t begin = schema.find(kHead);
    const size_t end = schema.find(";\n", begin);
    if (begin == std::string_view::npos || end == std::string_view::npos) return std::string();
    return std::string(schema.substr(begin + kHead.size(), end - begin - kHead.size()));
  }();
  static const std::string postgres_view = TranslateSchema(view, SqlDialect::kPostgresql);
  constexpr std::string_view kMarker = "/*@runs*/";
  std::string sql = dialect == SqlDialect::kPostgresql ? postgres_view : view;
  const size_t at = sql.find(kMarker);
  if (at == std::string::npos) return {};
  sql.replace(at, kMarker.size(), restriction);
  return sql;
}

}  // namespace

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
    auto q = db.connection().Prepare(
                        "SELECT mm.module_id, mm.run_id, mm.run_name, mm.run_time_us, mm.module_name, mm.stage, "
                        "       mm.folder, mm.backend, mm.entry_signature, mm.identity_key, mo.fingerprint, "
                        "       mo.fingerprint_source, mm.xla_module_id, mm.peak_time, mm.live_peak_padded_time, "
                        "       mm.schedule_length, mm.entry_sharding" +
                            columns +
                            " FROM module_memory mm JOIN modules mo ON mo.module_id = mm.module_id" +
                            where.Where() +
                            " ORDER BY mm.run_time_us, mm.run_id, mm.module_name, mm.stage, mm.folder, "
                            "COALESCE(mm.xla_module_id, -1), mm.module_id");
    BindArgs(*q, where.args());
    std::vector<ModuleRow> rows;
    while (q->Step()) {
      ModuleRow r;
      r.module_id = q->Int(0);
      r.run_id = q->Int(1);
      r.run_name = q->Text(2);
      r.run_time_us = q->Int(3);
      r.name = q->Text(4);
      r.stage = q->Text(5);
      r.folder = q->Text(6);
      r.backend = q->Text(7);
      r.entry_signature = q->Text(8);
      r.identity_key = q->Text(9);
      r.fingerprint = q->Text(10);
      r.fingerprint_source = q->Text(11);
      r.xla_module_id = q->IntOr(12, -1);
      r.peak_time = q->IntOr(13, -1);
      r.live_peak_padded_time = q->IntOr(14, -1);
      r.schedule_length = q->IntOr(15, -1);
      r.entry_sharding = q->Text(16);
      constexpr int kFirstMetric = 17;
      for (size_t i = 0; i < std::size(kModuleMetrics); ++i) {
        r.*(kModuleMetrics[i].value) = q->IntOr(kFirstMetric + static_cast<int>(i), -1);
      }
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
      auto q = db.connection().Prepare(std::string("SELECT module_id FROM module_memory WHERE run_id = ?") +
                                        (identity_key.empty() ? "" : " AND identity_key = ?") + " ORDER BY module_id");
      q->Bind(1, baseline_run_id);
      if (!identity_key.empty()) q->Bind(2, identity_key);
      std::vector<ModulePair> pairs;
      while (q->Step()) pairs.push_back({q->Int(0), q->Int(0), "identity"});
      return pairs;
    } catch (const std::exception& e) {
      return Status::IoError(std::string("matching a run's modules with themselves: ") + e.what());
    }
  }
  // The two statements' texts, built once per dialect and identity filter: their addresses key the
  // connection's statement cache, so a trend over many runs prepares them once (PostgreSQL plans them once).
  struct Texts {
    std::string pairs, lone;
  };
  static const auto texts = [] {
    std::map<std::pair<SqlDialect, bool>, Texts> built;
    for (SqlDialect dialect : {SqlDialect::kSqlite, SqlDialect::kPostgresql}) {
      for (bool by_key : {false, true}) {
        const std::string key_term = by_key ? " AND identity_key = ?3" : "";
        const std::string body = RestrictedModuleMatchesSql(
            dialect, std::string("AND mm.run_id IN (?1, ?2)") + (by_key ? " AND mm.identity_key = ?3" : ""));
        built[{dialect, by_key}] = {
            body.empty() ? "" : "SELECT module_id_a, module_id_b, matched_by FROM (" + body +
                                    ") AS matches WHERE run_id_a = ?1 AND run_id_b = ?2 ORDER BY module_id_b",
            "SELECT module_id, run_id FROM module_memory WHERE run_id IN (?1, ?2)" + key_term + " ORDER BY module_id"};
      }
    }
    return built;
  }();
  const Texts& text = texts.at({db.dialect(), !identity_key.empty()});
  if (text.pairs.empty()) return Status::Internal("schema.sql has no module_matches view with its /*@runs*/ marker");
  try {
    SqlStatement& q = db.statements().Get(text.pairs.c_str());
    q.Bind(1, baseline_run_id);
    q.Bind(2, current_run_id);
    if (!identity_key.empty()) q.Bind(3, identity_key);
    std::vector<ModulePair> pairs;
    std::set<int64_t> matched;
    while (q.Step()) {
      ModulePair p;
      p.baseline_module_id = q.Int(0);
      p.current_module_id = q.Int(1);
      p.matched_by = q.Text(2);
      matched.insert(p.baseline_module_id);
      matched.insert(p.current_module_id);
      pairs.push_back(std::move(p));
    }
    SqlStatement& lone = db.statements().Get(text.lone.c_str());
    lone.Bind(1, baseline_run_id);
    lone.Bind(2, current_run_id);
    if (!identity_key.empty()) lone.Bind(3, identity_key);
    std::vector<ModulePair> added;
    while (lone.Step()) {
      const int64_t id = lone.Int(0);
      if (matched.count(id)) continue;
      ModulePair p;
      if (lone.Int(1) == baseline_run_id) {
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
  for (const auto* rows : {&runs.baseline, &runs.current}) {
    for (const ModuleRow& r : *rows) runs.by_id_[r.module_id] = &r;
  }
  std::vector<ModulePair> matched;
  std::vector<const ModuleRow*> baseline_leftovers, current_leftovers;
  for (ModulePair& p : *pairs) {
    if (p.baseline_module_id && p.current_module_id) {
      matched.push_back(std::move(p));
    } else if (const ModuleRow* row = runs.Row(p.baseline_module_id ? p.baseline_module_id : p.current_module_id)) {
      (p.baseline_module_id ? baseline_leftovers : current_leftovers).push_back(row);
    }
  }
  std::set<int64_t> reshaped;
  for (const auto& [base, cur] : PairReshaped(baseline_leftovers, current_leftovers)) {
    matched.push_back({base->module_id, cur->module_id, "name"});
    reshaped.insert(base->module_id);
    reshaped.insert(cur->module_id);
  }
  for (const ModuleRow* r : baseline_leftovers) {
    if (!reshaped.count(r->module_id)) matched.push_back({r->module_id, 0, ""});
  }
  for (const ModuleRow* r : current_leftovers) {
    if (!reshaped.count(r->module_id)) matched.push_back({0, r->module_id, ""});
  }
  runs.pairs = std::move(matched);
  return runs;
}

}  // namespace xladb::store
