#include "store/compare/baseline_selector.h"

namespace xladb::store {

StatusOr<Baseline> ResolveBaseline(SqlConnection& sql, const std::string& selector, const CheckedRun& run) {
  Baseline b;
  auto pick = [&](SqlStatement& q) {
    if (q.Step()) {
      b.run_id = q.Int(0);
      b.name = q.Text(1);
    }
  };
  if (selector.rfind("label:", 0) == 0) {
    const std::string kv = selector.substr(6);
    const size_t eq = kv.find('=');
    if (eq == std::string::npos || eq == 0) {
      return Status::InvalidArgument("baseline '" + selector + "': a label selector is label:KEY=VALUE");
    }
    b.selected_by = selector;
    auto q = sql.Prepare(
                        "SELECT r.run_id, r.name FROM runs r JOIN run_labels l ON l.run_id = r.run_id "
                        "WHERE l.key = ? AND l.value = ? AND r.run_time_us <= ? AND r.run_id <> ? "
                        "ORDER BY r.run_time_us DESC, r.run_id DESC LIMIT 1");
    q->Bind(1, kv.substr(0, eq));
    q->Bind(2, kv.substr(eq + 1));
    q->Bind(3, run.run_time_us);
    q->Bind(4, run.run_id);
    pick(*q);
    if (!b.run_id) b.missing = "no run labelled " + kv + " at or before the checked run's time";
    return b;
  }
  if (selector.rfind("commit:", 0) == 0) {
    const std::string sha = selector.substr(7);
    if (sha.empty() || sha.find_first_not_of("0123456789abcdefABCDEF") != std::string::npos) {
      return Status::InvalidArgument("baseline '" + selector + "': commit:SHA takes a hex commit sha");
    }
    b.selected_by = selector;
    auto exact = sql.Prepare(
                            "SELECT r.run_id, r.name FROM runs r JOIN run_labels l ON l.run_id = r.run_id "
                            "WHERE l.key = 'commit' AND l.value = ? AND r.run_id <> ? "
                            "ORDER BY r.run_time_us DESC, r.run_id DESC LIMIT 1");
    exact->Bind(1, sha);
    exact->Bind(2, run.run_id);
    pick(*exact);
    if (b.run_id) return b;
    if (sha.size() >= 7) {
      auto commits = sql.Prepare(
                                "SELECT COUNT(DISTINCT l.value) FROM run_labels l "
                                "WHERE l.key = 'commit' AND substr(l.value, 1, ?) = ? AND l.run_id <> ?");
      commits->Bind(1, static_cast<int64_t>(sha.size()));
      commits->Bind(2, sha);
      commits->Bind(3, run.run_id);
      const int64_t n = commits->Step() ? commits->Int(0) : 0;
      if (n > 1) {
        b.missing = "commit prefix " + sha + " matches " + std::to_string(n) + " commits; give more of the sha";
        return b;
      }
      auto prefix = sql.Prepare(
                               "SELECT r.run_id, r.name FROM runs r JOIN run_labels l ON l.run_id = r.run_id "
                               "WHERE l.key = 'commit' AND substr(l.value, 1, ?) = ? AND r.run_id <> ? "
                               "ORDER BY r.run_time_us DESC, r.run_id DESC LIMIT 1");
      prefix->Bind(1, static_cast<int64_t>(sha.size()));
      prefix->Bind(2, sha);
      prefix->Bind(3, run.run_id);
      pick(*prefix);
      if (b.run_id) return b;
    }
    b.missing = "no run labelled commit=" + sha;
    return b;
  }
  b.selected_by = "name";
  auto q = sql.Prepare("SELECT run_id, name FROM runs WHERE name = ?");
  q->Bind(1, selector);
  pick(*q);
  if (!b.run_id) return Status::NotFound("no run named '" + selector + "' (the baseline)");
  return b;
}

}  // namespace xladb::store
