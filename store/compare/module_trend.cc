#include "store/compare/module_trend.h"

#include <algorithm>
#include <map>
#include <string>
#include <tuple>
#include <unordered_map>

#include "store/backend/row_binding.h"
#include "store/compare/baseline_selector.h"
#include "store/compare/module_match.h"
#include "store/facts/module_metrics.h"
#include "store/query/result_columns.h"

namespace xladb::store {
namespace {

// How many modules m a condition selects, and how many of them have a buffer assignment.
struct ModuleCount {
  int64_t modules = 0;
  int64_t with_assignment = 0;
};
const ResultColumns<ModuleCount> kModuleCountColumns = {
    {"COUNT(*)", &ModuleCount::modules},
    {"SUM(CASE WHEN EXISTS (SELECT 1 FROM module_memory mm WHERE mm.module_id = m.module_id) THEN 1 ELSE 0 END)",
     &ModuleCount::with_assignment},
};

ModuleCount CountModules(Database& db, const Conditions& where) {
  auto q = db.connection().Prepare("SELECT " + kModuleCountColumns.SelectList() + " FROM modules m" + where.Where());
  BindArgs(*q, where.args());
  q->Step();
  return kModuleCountColumns.Read(*q);
}

// Why nothing matched, in words: the module does not exist, exists only without a buffer assignment (at
// that stage), or exists but no run passes the filters.
Status NoPointsStatus(Database& db, const TrendQuery& query) {
  Conditions any;
  Status st = AddNameMatch(&any, "m.name", query.module, "module");
  if (!st.ok()) return st;
  std::string what = "module '" + query.module + "'";
  const ModuleCount exists = CountModules(db, any);
  if (exists.modules == 0) return Status::NotFound(what + " not found in any run");
  if (!query.stage.empty()) {
    Conditions at_stage = any;
    at_stage.Add("m.stage = ?", query.stage);
    const ModuleCount staged = CountModules(db, at_stage);
    if (staged.modules == 0) {
      return Status::NotFound(what + " has no stage '" + query.stage + "' in any run (`xladb modules RUN` lists stages)");
    }
    if (staged.with_assignment == 0) {
      return Status::NotFound(what + " at stage '" + query.stage +
                              "' has no buffer assignment in any run, so no memory figures: XLA writes buffer "
                              "assignments after optimizations only");
    }
  } else if (exists.with_assignment == 0) {
    return Status::NotFound(what + " has no buffer assignment in any run, so no memory figures");
  }
  return Status::NotFound(what + ": no run passes the filters (labels, time, folder, xla id, fingerprint)");
}

// The modules of each run that carry an identity key (with a buffer assignment): how many, and the smallest id.
struct InstancesInRun {
  int64_t count = 0;
  int64_t module_id = 0;
};
using InstancesByRun = std::unordered_map<int64_t, InstancesInRun>;

// The instances of every identity in every run among `rows`. Exact where `rows` hold, for each identity and
// run they touch, every module_memory row of it: where the statement's filters keep or drop whole identities
// (name, stage, folder, identity) or whole runs (labels, time), and no other.
std::unordered_map<std::string, InstancesByRun> InstancesByIdentity(const std::vector<ModuleRow>& rows) {
  std::unordered_map<std::string, InstancesByRun> by_key;
  for (const ModuleRow& r : rows) {
    InstancesInRun& in_run = by_key[r.identity_key][r.run_id];
    in_run.module_id = in_run.count == 0 ? r.module_id : std::min(in_run.module_id, r.module_id);
    ++in_run.count;
  }
  return by_key;
}

// A run before the one whose recent values are asked.
struct EarlierRun {
  int64_t run_id = 0;
  std::string name;
};
const ResultColumns<EarlierRun> kEarlierRunColumns = {{"run_id", &EarlierRun::run_id}, {"name", &EarlierRun::name}};

// One identity's value in one run: the largest of its instances (-1: none has a figure).
struct IdentityValue {
  std::string identity_key;
  int64_t run_id = 0;
  int64_t value = -1;
};

}  // namespace

StatusOr<std::vector<TrendPoint>> PeakMemoryTrend(Database& db, const TrendQuery& query) {
  if (query.module.empty()) return Status::InvalidArgument("a trend needs a module name or pattern");
  const ModuleMetric* metric = FindModuleMetric(query.metric);
  if (metric == nullptr) return Status::InvalidArgument("'" + query.metric + "' is not a metric");
  return CatchSqlErrors("trend of '" + query.module + "'", [&]() -> StatusOr<std::vector<TrendPoint>> {
    Conditions where;
    Status st = AddNameMatch(&where, "mm.module_name", query.module, "module");
    if (!st.ok()) return st;
    if (!query.stage.empty()) where.Add("mm.stage = ?", query.stage);
    if (query.folder) where.Add("mm.folder = ?", *query.folder);
    if (!query.identity_key.empty()) where.Add("mm.identity_key = ?", query.identity_key);
    if (query.since_us >= 0) where.Add("mm.run_time_us >= ?", query.since_us);
    if (query.until_us >= 0) where.Add("mm.run_time_us < ?", query.until_us);
    AddLabelMatch(&where, "mm.run_id", query.labels);
    auto rows = LoadModuleRows(db, where);
    if (!rows.ok()) return rows.status();
    // Counted before the filters on single instances (xla_module_id, fingerprint, a figure of the metric), so
    // that a series' run with one instance is known without another statement.
    const auto instances_by_identity = InstancesByIdentity(*rows);
    std::erase_if(*rows, [&](const ModuleRow& r) {
      return r.metric(metric->name) < 0 || (query.xla_module_id >= 0 && r.xla_module_id != query.xla_module_id) ||
             (!query.fingerprint.empty() && r.fingerprint != query.fingerprint);
    });
    if (query.last_n >= 0) {
      // The newest N runs that have a point.
      std::vector<std::pair<int64_t, int64_t>> runs;  // (time, id), newest first after sorting
      for (const ModuleRow& r : *rows) runs.emplace_back(r.run_time_us, r.run_id);
      std::sort(runs.begin(), runs.end(), std::greater<>());
      runs.erase(std::unique(runs.begin(), runs.end()), runs.end());
      if (static_cast<int64_t>(runs.size()) > query.last_n) {
        runs.resize(static_cast<size_t>(query.last_n));
        std::vector<ModuleRow> kept;
        for (ModuleRow& r : *rows) {
          if (std::find(runs.begin(), runs.end(), std::make_pair(r.run_time_us, r.run_id)) != runs.end()) {
            kept.push_back(std::move(r));
          }
        }
        *rows = std::move(kept);
      }
    }
    if (rows->empty()) return NoPointsStatus(db, query);

    // Series by identity; LoadModuleRows returned them by run time already.
    std::map<std::tuple<std::string, std::string, std::string, std::string, std::string>,
             std::vector<const ModuleRow*>>
        series;
    for (const ModuleRow& r : *rows) {
      series[{r.name, r.stage, r.folder, r.entry_signature, r.entry_sharding}].push_back(&r);
    }
    std::unordered_map<int64_t, const ModuleRow*> by_id;
    for (const ModuleRow& r : *rows) by_id[r.module_id] = &r;

    std::vector<TrendPoint> points;
    for (const auto& [key, members] : series) {
      // The change of each instance: against the instance of the previous run (of this series) it matches.
      // Where both runs hold one module of the identity, module_matches pairs them by 'identity' and nothing
      // else (schema.sql): that needs no query. Runs with more instances (retraces) are matched by the view.
      static const InstancesByRun kNone;
      const auto found = instances_by_identity.find(members.front()->identity_key);
      const InstancesByRun& instances = found != instances_by_identity.end() ? found->second : kNone;
      auto only_instance = [&](int64_t run) -> int64_t {
        auto it = instances.find(run);
        return it != instances.end() && it->second.count == 1 ? it->second.module_id : 0;
      };
      std::unordered_map<int64_t, std::pair<int64_t, std::string>> previous;  // module -> (previous module, how)
      int64_t prev_run = -1;
      for (size_t i = 0; i < members.size();) {
        const int64_t run = members[i]->run_id;
        const int64_t alone = prev_run >= 0 ? only_instance(run) : 0;
        const int64_t alone_before = prev_run >= 0 ? only_instance(prev_run) : 0;
        if (alone != 0 && alone_before != 0) {
          previous[alone] = {alone_before, "identity"};
        } else if (prev_run >= 0) {
          auto pairs = MatchModules(db, prev_run, run, members[i]->identity_key);
          if (!pairs.ok()) return pairs.status();
          for (const ModulePair& p : *pairs) {
            if (p.baseline_module_id != 0 && p.current_module_id != 0) {
              previous[p.current_module_id] = {p.baseline_module_id, p.matched_by};
            }
          }
        }
        prev_run = run;
        while (i < members.size() && members[i]->run_id == run) ++i;
      }
      for (const ModuleRow* r : members) {
        TrendPoint p;
        p.run_name = r->run_name;
        p.run_time_us = r->run_time_us;
        p.module_name = r->name;
        p.xla_module_id = r->xla_module_id;
        p.stage = r->stage;
        p.folder = r->folder;
        p.entry_signature = r->entry_signature;
        p.entry_sharding = r->entry_sharding;
        p.identity_key = r->identity_key;
        p.fingerprint = r->fingerprint;
        p.value = r->metric(metric->name);
        p.peak_bytes = r->metric("peak_bytes");
        p.total_bytes = r->metric("total_bytes");
        p.temp_bytes = r->metric("temp_bytes");
        p.live_peak_padded_bytes = r->metric("live_peak_padded_bytes");
        if (auto it = previous.find(r->module_id); it != previous.end()) {
          p.matched_by = it->second.second;
          if (auto prev = by_id.find(it->second.first); prev != by_id.end()) {
            p.has_change = true;
            p.change = p.value - prev->second->metric(metric->name);
          }
        }
        points.push_back(std::move(p));
      }
    }
    return points;
  });
}

StatusOr<RecentValues> RecentIdentityValues(Database& db, const std::string& run_name, const std::string& metric,
                                            int64_t runs) {
  const ModuleMetric* m = FindModuleMetric(metric);
  if (m == nullptr) return Status::InvalidArgument("'" + metric + "' is not a metric");
  if (runs < 1) return Status::InvalidArgument("recent values need at least one run");
  return CatchSqlErrors("recent values of run '" + run_name + "'", [&]() -> StatusOr<RecentValues> {
    const StatusOr<CheckedRun> run = FindCheckedRun(db.connection(), run_name);
    if (!run.ok()) return run.status();
    const int64_t run_id = run->run_id, time_us = run->run_time_us;
    auto before = db.connection().Prepare(
        "SELECT " + kEarlierRunColumns.SelectList() +
        " FROM runs WHERE run_time_us < ? OR (run_time_us = ? AND run_id <= ?) "
        "ORDER BY run_time_us DESC, run_id DESC LIMIT ?");
    BindRow(*before, time_us, time_us, run_id, runs);
    std::vector<int64_t> ids;
    RecentValues out;
    while (before->Step()) {
      EarlierRun earlier = kEarlierRunColumns.Read(*before);
      ids.push_back(earlier.run_id);
      out.runs.push_back(std::move(earlier.name));
    }
    std::reverse(ids.begin(), ids.end());
    std::reverse(out.runs.begin(), out.runs.end());
    std::unordered_map<int64_t, size_t> index;
    for (size_t i = 0; i < ids.size(); ++i) index[ids[i]] = i;
    Conditions where;
    where.AddIn("mm.run_id", ids);
    where.Add("mm.identity_key IN (SELECT identity_key FROM modules WHERE run_id = ?)", run_id);
    const ResultColumns<IdentityValue> value_columns = {{"mm.identity_key", &IdentityValue::identity_key},
                                                        {"mm.run_id", &IdentityValue::run_id},
                                                        {"MAX(mm." + std::string(m->name) + ")", &IdentityValue::value}};
    auto values = db.connection().Prepare("SELECT " + value_columns.SelectList() + " FROM module_memory mm" +
                                          where.Where() + " GROUP BY mm.identity_key, mm.run_id");
    BindArgs(*values, where.args());
    while (values->Step()) {
      IdentityValue v = value_columns.Read(*values);
      auto& series = out.by_identity.try_emplace(std::move(v.identity_key), ids.size(), -1).first->second;
      series[index[v.run_id]] = v.value;
    }
    return out;
  });
}

}  // namespace xladb::store
