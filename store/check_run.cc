#include "store/check_run.h"

#include <algorithm>
#include <cmath>
#include <set>
#include <tuple>

#include "store/module_match.h"
#include "store/module_metrics.h"
#include "store/queries.h"
#include "store/query_sql.h"

namespace xladb::store {
namespace {

struct Baseline {
  int64_t run_id = 0;       // 0: none found
  std::string name;
  std::string selected_by;
  std::string missing;      // why none was found
};

struct RunRef {
  int64_t run_id = 0;
  int64_t run_time_us = 0;
};

StatusOr<Baseline> ResolveBaseline(SqlConnection& sql, const std::string& selector, const RunRef& run) {
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
  if (!b.run_id) b.missing = "baseline run '" + selector + "' not found";
  return b;
}

const GrowthLimit& LimitFor(const CheckOptions& o, const std::string& module) {
  for (const ModuleLimit& m : o.module_limits) {
    if (NameMatches(m.pattern, module)) return m.limit;
  }
  return o.limit;
}

bool Exceeds(const GrowthLimit& limit, int64_t baseline, int64_t delta) {
  if (delta <= 0 || delta <= limit.max_bytes) return false;
  if (baseline <= 0) return true;  // growth from nothing is past any percent
  return 100.0 * static_cast<double>(delta) / static_cast<double>(baseline) > limit.max_percent;
}

bool IsIgnored(const CheckOptions& o, const std::string& module) {
  for (const std::string& pattern : o.ignore) {
    if (NameMatches(pattern, module)) return true;
  }
  return false;
}

const AcceptedRegression* AcceptanceFor(const CheckOptions& o, const std::string& module, const MetricDelta& m) {
  for (const AcceptedRegression& a : o.accepted) {
    if (!NameMatches(a.pattern, module)) continue;
    if (!a.metric.empty() && a.metric != m.metric) continue;
    if (a.up_to_bytes > 0 && m.current > a.up_to_bytes) continue;
    return &a;
  }
  return nullptr;
}

int StatusRank(CheckedModule::Status s) {
  using S = CheckedModule::Status;
  switch (s) {
    case S::kRegressed: return 0;
    case S::kAmbiguous: return 1;
    case S::kAdded: return 2;
    case S::kRemoved: return 3;
    case S::kAccepted: return 4;
    case S::kImproved: return 5;
    case S::kUnchanged: return 6;
    case S::kIgnored: return 7;
  }
  return 7;
}

// The size of a module's change, for ordering: its largest growth (regressed) or |change| (others).
int64_t ChangeSize(const CheckedModule& m) {
  int64_t size = 0;
  for (const MetricDelta& d : m.metrics) size = std::max(size, std::abs(d.delta));
  return size;
}

Status CheckOptionsValid(const CheckOptions& o, const std::vector<std::string>& metrics) {
  for (const std::string& m : metrics) {
    if (!FindModuleMetric(m)) {
      return Status::InvalidArgument("unknown metric '" + m + "' (known: " + ModuleMetricNames() + ")");
    }
  }
  if (o.limit.max_bytes < 0 || o.limit.max_percent < 0 || std::isnan(o.limit.max_percent)) {
    return Status::InvalidArgument("growth limits must not be negative");
  }
  for (const std::string& p : o.ignore) {
    if (Status st = CheckGlobPattern(p, "ignore"); !st.ok()) return st;
  }
  for (const ModuleLimit& l : o.module_limits) {
    if (Status st = CheckGlobPattern(l.pattern, "module limit"); !st.ok()) return st;
    if (l.limit.max_bytes < 0 || l.limit.max_percent < 0) {
      return Status::InvalidArgument("module limit '" + l.pattern + "': growth limits must not be negative");
    }
  }
  for (const AcceptedRegression& a : o.accepted) {
    if (Status st = CheckGlobPattern(a.pattern, "accepted regression"); !st.ok()) return st;
    if (a.reason.empty()) return Status::InvalidArgument("accepted regression '" + a.pattern + "' needs a reason");
    if (a.up_to_bytes < 0) {
      return Status::InvalidArgument("accepted regression '" + a.pattern + "': up_to_bytes must not be negative");
    }
    if (!a.metric.empty() && !FindModuleMetric(a.metric)) {
      return Status::InvalidArgument("accepted regression '" + a.pattern + "': unknown metric '" + a.metric + "'");
    }
  }
  return Status::Ok();
}

std::string Plural(int64_t n, const char* one, const char* many) {
  return std::to_string(n) + " " + (n == 1 ? one : many);
}

void Conclude(CheckResult* r, const std::string& inconclusive_reason) {
  using V = CheckResult::Verdict;
  int64_t failed_retraces = 0;
  for (const RetraceChange& c : r->retraces) failed_retraces += c.failed;
  std::string counts = Plural(r->regressed, "module regressed", "modules regressed") + ", " +
                       std::to_string(r->improved) + " improved, " + std::to_string(r->unchanged) + " unchanged";
  if (r->added + r->removed + r->ambiguous > 0) {
    counts += ", " + std::to_string(r->added) + " added, " + std::to_string(r->removed) + " removed, " +
              std::to_string(r->ambiguous) + " ambiguous";
  }
  if (r->accepted > 0) counts += ", " + std::to_string(r->accepted) + " accepted";
  counts += " against " + r->baseline;
  if (r->regressed > 0 || failed_retraces > 0) {
    r->verdict = V::kFail;
    r->reason = counts;
    if (failed_retraces > 0) r->reason += "; " + Plural(failed_retraces, "jit name", "jit names") + " compiled more often";
  } else if (!inconclusive_reason.empty()) {
    r->verdict = V::kInconclusive;
    r->reason = inconclusive_reason;
  } else if (r->added + r->removed + r->ambiguous > 0) {
    r->verdict = V::kInconclusive;
    r->reason = counts + " (a module without a certain match cannot be judged)";
  } else {
    r->verdict = V::kPass;
    r->reason = counts;
  }
}

}  // namespace

StatusOr<CheckResult> CheckRun(Database& db, const CheckOptions& options) {
  CheckResult result;
  result.run = options.run;
  if (options.metrics.empty()) {
    for (std::string_view m : kDefaultGateMetrics) result.metrics.emplace_back(m);
  } else {
    result.metrics = options.metrics;
  }
  if (Status st = CheckOptionsValid(options, result.metrics); !st.ok()) return st;
  return CatchSqlErrors("checking run '" + options.run + "'", [&]() -> StatusOr<CheckResult> {
    auto run_q = db.connection().Prepare("SELECT run_id, run_time_us FROM runs WHERE name = ?");
    run_q->Bind(1, options.run);
    if (!run_q->Step()) return Status::NotFound("run '" + options.run + "' not found");
    const RunRef run{run_q->Int(0), run_q->Int(1)};
    auto baseline = ResolveBaseline(db.connection(), options.baseline, run);
    if (!baseline.ok()) return baseline.status();
    result.baseline = baseline->name;
    result.baseline_selected_by = baseline->selected_by;
    if (baseline->run_id == run.run_id) {
      return Status::InvalidArgument("the baseline is the checked run itself ('" + options.run + "')");
    }
    if (!baseline->run_id) {
      result.verdict = CheckResult::Verdict::kInconclusive;
      result.reason = "no baseline: " + baseline->missing;
      return result;
    }

    auto runs = LoadMatchedRuns(db, baseline->run_id, run.run_id);
    if (!runs.ok()) return runs.status();
    std::set<std::string> backends_base, backends_cur;
    for (const ModuleRow& r : runs->baseline) {
      if (!r.backend.empty()) backends_base.insert(r.backend);
    }
    for (const ModuleRow& r : runs->current) {
      if (!r.backend.empty()) backends_cur.insert(r.backend);
    }
    std::string inconclusive;
    if (runs->current.empty()) inconclusive = "run '" + options.run + "' has no module with a buffer assignment";
    if (runs->baseline.empty()) {
      inconclusive = "baseline '" + baseline->name + "' has no module with a buffer assignment";
    }
    bool shared_backend = false;
    for (const std::string& b : backends_cur) shared_backend |= backends_base.count(b) > 0;
    if (!backends_base.empty() && !backends_cur.empty() && !shared_backend) {
      auto join = [](const std::set<std::string>& s) {
        std::string out;
        for (const auto& b : s) out += (out.empty() ? "" : "+") + b;
        return out;
      };
      inconclusive = "the runs come from different backends (" + join(backends_base) + " in '" + baseline->name +
                     "', " + join(backends_cur) + " in '" + options.run + "'): their figures do not compare";
    }

    for (const ModulePair& p : runs->pairs) {
      const ModuleRow* base = runs->Row(p.baseline_module_id);
      const ModuleRow* cur = runs->Row(p.current_module_id);
      const ModuleRow& any = cur ? *cur : *base;
      CheckedModule m;
      m.module = any.name;
      m.stage = any.stage;
      m.folder = any.folder;
      m.entry_signature = any.entry_signature;
      m.matched_by = p.matched_by;
      if (cur) {
        m.xla_module_id = cur->xla_module_id;
        m.module_id = cur->module_id;
        m.fingerprint = cur->fingerprint;
      }
      if (base) {
        m.baseline_xla_module_id = base->xla_module_id;
        m.baseline_module_id = base->module_id;
        m.baseline_fingerprint = base->fingerprint;
      }
      const GrowthLimit& limit = LimitFor(options, m.module);
      bool regressed = false, shrank = false, differs = false, all_accepted = true;
      for (const std::string& name : result.metrics) {
        MetricDelta d;
        d.metric = name;
        d.baseline = base ? base->metric(name) : -1;
        d.current = cur ? cur->metric(name) : -1;
        if (d.baseline >= 0 && d.current >= 0) d.delta = d.current - d.baseline;
        d.regressed = base && cur && Exceeds(limit, d.baseline, d.delta);
        if (d.regressed) {
          regressed = true;
          if (const AcceptedRegression* a = AcceptanceFor(options, m.module, d)) {
            if (m.accepted_reason.empty()) m.accepted_reason = a->reason;
          } else {
            all_accepted = false;
          }
        }
        shrank |= d.delta < 0;
        differs |= d.delta != 0;
        m.metrics.push_back(std::move(d));
      }
      using S = CheckedModule::Status;
      if (IsIgnored(options, m.module)) {
        m.status = S::kIgnored;
      } else if (!base || !cur) {
        m.status = base ? S::kRemoved : S::kAdded;
      } else if (p.matched_by == "order" && differs) {
        m.status = S::kAmbiguous;
      } else if (regressed) {
        m.status = all_accepted ? S::kAccepted : S::kRegressed;
      } else {
        m.status = shrank ? S::kImproved : S::kUnchanged;
      }
      if (m.status != S::kAccepted) m.accepted_reason.clear();
      if (m.status == S::kRegressed || m.status == S::kAccepted) {
        // Buffers at the peak explain a peak; every value explains totals.
        bool totals = false;
        for (const MetricDelta& d : m.metrics) {
          totals |= d.regressed && d.metric != "peak_bytes" && d.metric != "live_peak_padded_bytes";
        }
        auto attribution = AttributeChange(db, base->module_id, cur->module_id,
                                           totals ? AttributionScope::kValues : AttributionScope::kPeakBuffers,
                                           options.max_attribution);
        if (!attribution.ok()) return attribution.status();
        m.attribution = std::move(*attribution);
      }
      switch (m.status) {
        case S::kRegressed: ++result.regressed; break;
        case S::kImproved: ++result.improved; break;
        case S::kUnchanged: ++result.unchanged; break;
        case S::kAdded: ++result.added; break;
        case S::kRemoved: ++result.removed; break;
        case S::kAmbiguous: ++result.ambiguous; break;
        case S::kAccepted: ++result.accepted; break;
        case S::kIgnored: ++result.ignored; break;
      }
      result.modules.push_back(std::move(m));
    }
    std::stable_sort(result.modules.begin(), result.modules.end(), [](const CheckedModule& x, const CheckedModule& y) {
      if (StatusRank(x.status) != StatusRank(y.status)) return StatusRank(x.status) < StatusRank(y.status);
      if (ChangeSize(x) != ChangeSize(y)) return ChangeSize(x) > ChangeSize(y);
      return std::tie(x.module, x.stage, x.folder, x.xla_module_id) < std::tie(y.module, y.stage, y.folder, y.xla_module_id);
    });

    auto compiles_base = CountCompiles(db, baseline->run_id);
    if (!compiles_base.ok()) return compiles_base.status();
    auto compiles_cur = CountCompiles(db, run.run_id);
    if (!compiles_cur.ok()) return compiles_cur.status();
    std::set<std::tuple<std::string, std::string, std::string>> keys;
    for (const auto& [k, n] : *compiles_base) keys.insert(k);
    for (const auto& [k, n] : *compiles_cur) keys.insert(k);
    for (const auto& k : keys) {
      auto count = [&k](const CompileCounts& c) {
        auto it = c.find(k);
        return it == c.end() ? int64_t{0} : it->second;
      };
      RetraceChange c{std::get<0>(k), std::get<1>(k), std::get<2>(k), count(*compiles_base), count(*compiles_cur)};
      // A name new or gone is an added or removed module, not a compile count that changed.
      if (c.baseline_compiles == c.current_compiles || c.baseline_compiles == 0 || c.current_compiles == 0) continue;
      c.failed = options.fail_on_retrace_growth && !IsIgnored(options, c.module) && c.baseline_compiles > 0 &&
                 c.current_compiles > c.baseline_compiles;
      result.retraces.push_back(std::move(c));
    }
    Conclude(&result, inconclusive);
    return result;
  });
}

}  // namespace xladb::store
