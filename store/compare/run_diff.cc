#include "store/compare/run_diff.h"

#include <algorithm>
#include <cstdlib>
#include <tuple>

#include "store/compare/module_match.h"
#include "store/query/statement_text.h"

namespace xladb::store {
namespace {

constexpr const char* kComparedMetrics[] = {"peak_bytes", "total_bytes", "temp_bytes", "live_peak_padded_bytes"};

int ChangeRank(ModuleDiff::Change c) {
  switch (c) {
    case ModuleDiff::Change::kChanged: return 0;
    case ModuleDiff::Change::kAdded: return 1;
    case ModuleDiff::Change::kRemoved: return 2;
    case ModuleDiff::Change::kUnchanged: return 3;
  }
  return 3;
}

int64_t AbsDelta(int64_t a, int64_t b) { return a >= 0 && b >= 0 ? std::abs(b - a) : 0; }

// The size of a module's change: its largest absolute change among the compared figures.
int64_t ChangeSize(const ModuleDiff& d) {
  return std::max({AbsDelta(d.peak_a, d.peak_b), AbsDelta(d.total_a, d.total_b), AbsDelta(d.temp_a, d.temp_b),
                   AbsDelta(d.live_peak_padded_a, d.live_peak_padded_b)});
}

void FillSide(const ModuleRow& m, bool side_b, ModuleDiff* d) {
  d->module_name = m.name;
  d->stage = m.stage;
  d->folder = m.folder;
  (side_b ? d->entry_signature : d->entry_signature_a) = m.entry_signature;
  (side_b ? d->xla_module_id_b : d->xla_module_id_a) = m.xla_module_id;
  (side_b ? d->fingerprint_b : d->fingerprint_a) = m.fingerprint;
  (side_b ? d->peak_b : d->peak_a) = m.metric("peak_bytes");
  (side_b ? d->total_b : d->total_a) = m.metric("total_bytes");
  (side_b ? d->temp_b : d->temp_a) = m.metric("temp_bytes");
  (side_b ? d->live_peak_padded_b : d->live_peak_padded_a) = m.metric("live_peak_padded_bytes");
}

}  // namespace

StatusOr<RunDiff> DiffRuns(Database& db, const DiffQuery& query) {
  return CatchSqlErrors("diff of runs '" + query.run_a + "' and '" + query.run_b + "'", [&]() -> StatusOr<RunDiff> {
    ReadTransaction snapshot(db.connection());
    StatusOr<int64_t> run_a = FindRunId(db.connection(), query.run_a);
    if (!run_a.ok()) return run_a.status();
    StatusOr<int64_t> run_b = FindRunId(db.connection(), query.run_b);
    if (!run_b.ok()) return run_b.status();
    if (IsGlobPattern(query.module)) {
      Status st = CheckGlobPattern(query.module, "module");
      if (!st.ok()) return st;
    }
    auto runs = LoadMatchedRuns(db, *run_a, *run_b);
    if (!runs.ok()) return runs.status();

    // The pairs, their figures compared; then the buffers of those that need them, attributed together.
    std::vector<ModuleDiff> diffs;
    std::vector<size_t> attributed;  // diffs[attributed[i]] is explained by pairs[i]
    std::vector<AttributionPair> pairs;
    for (const ModulePair& p : runs->pairs) {
      const ModuleRow* a = runs->Row(p.baseline_module_id);
      const ModuleRow* b = runs->Row(p.current_module_id);
      if (!NameMatches(query.module, (a ? a : b)->name)) continue;
      ModuleDiff& d = diffs.emplace_back();
      d.matched_by = p.matched_by;
      if (a) FillSide(*a, false, &d);
      if (a && !b) d.entry_signature = a->entry_signature;
      if (b) FillSide(*b, true, &d);
      if (!a || !b) {
        d.change = a ? ModuleDiff::Change::kRemoved : ModuleDiff::Change::kAdded;
        continue;
      }
      bool same_figures = true;
      for (const char* metric : kComparedMetrics) same_figures &= a->metric(metric) == b->metric(metric);
      const int same_program = SameProgram(*a, *b);
      d.change = !same_figures || same_program == 0 ? ModuleDiff::Change::kChanged : ModuleDiff::Change::kUnchanged;
      // The same program with the same figures has the same buffers: skip reading them.
      if (query.buffer_level && !(same_program == 1 && same_figures)) {
        attributed.push_back(diffs.size() - 1);
        pairs.push_back({a->module_id, b->module_id, AttributionScope::kValues, query.max_buffers});
      }
    }
    auto attributions = AttributeChanges(db, pairs);
    if (!attributions.ok()) return attributions.status();
    for (size_t i = 0; i < attributed.size(); ++i) {
      ModuleDiff& d = diffs[attributed[i]];
      Attribution& attribution = (*attributions)[i];
      d.buffers = std::move(attribution.changes);
      d.buffer_changes = attribution.change_count;
      d.by_source = std::move(attribution.by_source);
      if (d.buffer_changes > 0) d.change = ModuleDiff::Change::kChanged;
    }
    RunDiff diff;
    for (ModuleDiff& d : diffs) {
      switch (d.change) {
        case ModuleDiff::Change::kAdded: ++diff.added; break;
        case ModuleDiff::Change::kRemoved: ++diff.removed; break;
        case ModuleDiff::Change::kChanged: ++diff.changed; break;
        case ModuleDiff::Change::kUnchanged: ++diff.unchanged; break;
      }
      if (d.change != ModuleDiff::Change::kUnchanged || query.include_unchanged) diff.modules.push_back(std::move(d));
    }
    std::vector<std::string> metrics(std::begin(kComparedMetrics), std::end(kComparedMetrics));
    for (NameRollup& n : RollUpByName(*runs, metrics, true)) {
      if (!NameMatches(query.module, n.module)) continue;
      if (n.changed || query.include_unchanged) diff.by_name.push_back(std::move(n));
    }
    std::stable_sort(diff.modules.begin(), diff.modules.end(), [](const ModuleDiff& x, const ModuleDiff& y) {
      if (ChangeRank(x.change) != ChangeRank(y.change)) return ChangeRank(x.change) < ChangeRank(y.change);
      if (ChangeSize(x) != ChangeSize(y)) return ChangeSize(x) > ChangeSize(y);
      return std::tie(x.module_name, x.stage, x.folder, x.xla_module_id_a, x.xla_module_id_b) <
             std::tie(y.module_name, y.stage, y.folder, y.xla_module_id_a, y.xla_module_id_b);
    });
    return diff;
  });
}

}  // namespace xladb::store
