#include "store/compare/module_match.h"

#include <map>
#include <set>
#include <string_view>

#include "store/backend/row_binding.h"
#include "store/query/result_columns.h"
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

// A module_memory row mm, with its modules row mo.
const ResultColumns<ModuleRow> kModuleRowColumns =
    ResultColumns<ModuleRow>{
        {"mm.module_id", &ModuleRow::module_id},
        {"mm.run_id", &ModuleRow::run_id},
        {"mm.run_name", &ModuleRow::run_name},
        {"mm.run_time_us", &ModuleRow::run_time_us},
        {"mm.module_name", &ModuleRow::name},
        {"mm.stage", &ModuleRow::stage},
        {"mm.folder", &ModuleRow::folder},
        {"mm.backend", &ModuleRow::backend},
        {"mm.entry_signature", &ModuleRow::entry_signature},
        {"mm.identity_key", &ModuleRow::identity_key},
        {"mo.fingerprint", &ModuleRow::fingerprint},
        {"mo.fingerprint_source", &ModuleRow::fingerprint_source},
        {"mm.xla_module_id", &ModuleRow::xla_module_id},
        {"mm.peak_time", &ModuleRow::peak_time},
        {"mm.live_peak_padded_time", &ModuleRow::live_peak_padded_time},
        {"mm.schedule_length", &ModuleRow::schedule_length},
        {"mm.entry_sharding", &ModuleRow::entry_sharding},
    }.WithModuleMetrics("mm");

// A pair of the module_matches view (MatchModules' statement selects from it as `matches`).
const ResultColumns<ModulePair> kModulePairColumns = {
    {"module_id_a", &ModulePair::baseline_module_id},
    {"module_id_b", &ModulePair::current_module_id},
    {"matched_by", &ModulePair::matched_by},
};

// A module of either run, to find the ones the view left unmatched.
struct RunModule {
  int64_t module_id = 0;
  int64_t run_id = 0;
};
const ResultColumns<RunModule> kRunModuleColumns = {{"module_id", &RunModule::module_id},
                                                    {"run_id", &RunModule::run_id}};

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
    // Kept for the connection: the next trend or gate of the same shape runs the same text.
    auto q = db.statements().ByText("SELECT " + kModuleRowColumns.SelectList() +
                                    " FROM module_memory mm JOIN modules mo ON mo.module_id = mm.module_id" +
                                    where.Where() +
                                    " ORDER BY mm.run_time_us, mm.run_id, mm.module_name, mm.stage, mm.folder, "
                                    "COALESCE(mm.xla_module_id, -1), mm.module_id");
    BindArgs(*q, where.args());
    std::vector<ModuleRow> rows;
    while (q->Step()) rows.push_back(kModuleRowColumns.Read(*q));
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
      auto q = db.connection().Prepare("SELECT " + kRunModuleColumns.SelectList() +
                                        " FROM module_memory WHERE run_id = ?" +
                                        (identity_key.empty() ? "" : " AND identity_key = ?") + " ORDER BY module_id");
      q->Bind(1, baseline_run_id);
      if (!identity_key.empty()) q->Bind(2, identity_key);
      std::vector<ModulePair> pairs;
      while (q->Step()) {
        const int64_t id = kRunModuleColumns.Read(*q).module_id;
        pairs.push_back({id, id, "identity"});
      }
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
            body.empty() ? "" : "SELECT " + kModulePairColumns.SelectList() + " FROM (" + body +
                                    ") AS matches WHERE run_id_a = ?1 AND run_id_b = ?2 ORDER BY module_id_b",
            "SELECT " + kRunModuleColumns.SelectList() + " FROM module_memory WHERE run_id IN (?1, ?2)" + key_term +
                " ORDER BY module_id"};
      }
    }
    return built;
  }();
  const Texts& text = texts.at({db.dialect(), !identity_key.empty()});
  if (text.pairs.empty()) return Status::Internal("schema.sql has no module_matches view with its /*@runs*/ marker");
  try {
    SqlStatement& q = db.statements().Get(text.pairs.c_str());
    const ResetWhenDone reset_pairs(q);  // a throw half-way leaves no snapshot held (ResetWhenDone)
    BindRow(q, baseline_run_id, current_run_id);
    if (!identity_key.empty()) q.Bind(3, identity_key);
    std::vector<ModulePair> pairs;
    std::set<int64_t> matched;
    while (q.Step()) {
      ModulePair p = kModulePairColumns.Read(q);
      matched.insert(p.baseline_module_id);
      matched.insert(p.current_module_id);
      pairs.push_back(std::move(p));
    }
    SqlStatement& lone = db.statements().Get(text.lone.c_str());
    const ResetWhenDone reset_lone(lone);
    BindRow(lone, baseline_run_id, current_run_id);
    if (!identity_key.empty()) lone.Bind(3, identity_key);
    std::vector<ModulePair> added;
    while (lone.Step()) {
      const RunModule m = kRunModuleColumns.Read(lone);
      const int64_t id = m.module_id;
      if (matched.count(id)) continue;
      ModulePair p;
      if (m.run_id == baseline_run_id) {
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
