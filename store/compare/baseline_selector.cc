#include "store/compare/baseline_selector.h"

#include <string_view>
#include <vector>

#include "store/backend/row_binding.h"
#include "store/query/result_columns.h"
#include "store/query/statement_text.h"

namespace xladb::store {
namespace {

// A run of runs r, as a baseline.
const ResultColumns<Baseline> kBaselineColumns = {{"r.run_id", &Baseline::run_id}, {"r.name", &Baseline::name}};

const ResultColumns<CheckedRun> kCheckedRunColumns = {{"run_id", &CheckedRun::run_id},
                                                      {"run_time_us", &CheckedRun::run_time_us}};

// The newest run other than `run_id` with a label that `condition` selects (a term on l.key, l.value and the
// run r; `args` fill its placeholders), into b->run_id and b->name; b->run_id stays 0 when there is none.
void PickNewestLabelled(SqlConnection& sql, std::string_view condition, const std::vector<SqlArg>& args,
                        int64_t run_id, Baseline* b) {
  auto q = sql.Prepare("SELECT " + kBaselineColumns.SelectList() +
                       " FROM runs r JOIN run_labels l ON l.run_id = r.run_id WHERE " + std::string(condition) +
                       " AND r.run_id <> ? ORDER BY r.run_time_us DESC, r.run_id DESC LIMIT 1");
  q->Bind(BindArgs(*q, args), run_id);
  if (q->Step()) kBaselineColumns.ReadInto(*q, b);
}

// label:KEY=VALUE: the newest other run with that label at or before the checked run's time.
StatusOr<Baseline> BaselineByLabel(SqlConnection& sql, const std::string& selector, const CheckedRun& run) {
  const std::string kv = selector.substr(6);
  const size_t eq = kv.find('=');
  if (eq == std::string::npos || eq == 0) {
    return Status::InvalidArgument("baseline '" + selector + "': a label selector is label:KEY=VALUE");
  }
  Baseline b;
  b.selected_by = selector;
  PickNewestLabelled(sql, "l.key = ? AND l.value = ? AND r.run_time_us <= ?",
                     {kv.substr(0, eq), kv.substr(eq + 1), run.run_time_us}, run.run_id, &b);
  if (!b.run_id) b.missing = "no run labelled " + kv + " at or before the checked run's time";
  return b;
}

// commit:SHA: the newest other run labelled commit=SHA, else (7 hex digits or more) the newest labelled with
// the one commit that starts with SHA.
StatusOr<Baseline> BaselineByCommit(SqlConnection& sql, const std::string& selector, const CheckedRun& run) {
  const std::string sha = selector.substr(7);
  if (sha.empty() || sha.find_first_not_of("0123456789abcdefABCDEF") != std::string::npos) {
    return Status::InvalidArgument("baseline '" + selector + "': commit:SHA takes a hex commit sha");
  }
  Baseline b;
  b.selected_by = selector;
  PickNewestLabelled(sql, "l.key = 'commit' AND l.value = ?", {sha}, run.run_id, &b);
  if (b.run_id) return b;
  if (sha.size() >= 7) {
    auto commits = sql.Prepare("SELECT COUNT(DISTINCT l.value) FROM run_labels l "
                               "WHERE l.key = 'commit' AND substr(l.value, 1, ?) = ? AND l.run_id <> ?");
    BindRow(*commits, static_cast<int64_t>(sha.size()), sha, run.run_id);
    const int64_t n = commits->Step() ? commits->Int(0) : 0;
    if (n > 1) {
      b.missing = "commit prefix " + sha + " matches " + std::to_string(n) + " commits; give more of the sha";
      return b;
    }
    PickNewestLabelled(sql, "l.key = 'commit' AND substr(l.value, 1, ?) = ?",
                       {static_cast<int64_t>(sha.size()), sha}, run.run_id, &b);
    if (b.run_id) return b;
  }
  b.missing = "no run labelled commit=" + sha;
  return b;
}

}  // namespace

StatusOr<CheckedRun> FindCheckedRun(SqlConnection& sql, const std::string& name) {
  auto q = sql.Prepare("SELECT " + kCheckedRunColumns.SelectList() + " FROM runs WHERE name = ?");
  q->Bind(1, name);
  if (!q->Step()) return Status::NotFound("run '" + name + "' not found");
  return kCheckedRunColumns.Read(*q);
}

StatusOr<Baseline> ResolveBaseline(SqlConnection& sql, const std::string& selector, const CheckedRun& run) {
  if (selector.rfind("label:", 0) == 0) return BaselineByLabel(sql, selector, run);
  if (selector.rfind("commit:", 0) == 0) return BaselineByCommit(sql, selector, run);
  Baseline b;
  b.selected_by = "name";
  auto q = sql.Prepare("SELECT " + kBaselineColumns.SelectList() + " FROM runs r WHERE r.name = ?");
  q->Bind(1, selector);
  if (q->Step()) kBaselineColumns.ReadInto(*q, &b);
  if (!b.run_id) return Status::NotFound("no run named '" + selector + "' (the baseline)");
  return b;
}

}  // namespace xladb::store
