#include "store/compare/change_points.h"

#include <algorithm>
#include <array>
#include <cmath>
#include <cstdlib>
#include <cstddef>
#include <map>
#include <set>
#include <string_view>
#include <tuple>
#include <unordered_map>
#include <unordered_set>

#include "store/facts/module_metrics.h"
#include "store/query/result_columns.h"

namespace xladb::store {
namespace {

constexpr size_t kMetricCount = std::size(kModuleMetrics);

struct RunRef {
  int64_t run_id = 0;
  std::string name;
  int64_t time_us = 0;
};

const ResultColumns<RunRef> kRunColumns = {
    {"r.run_id", &RunRef::run_id}, {"r.name", &RunRef::name}, {"r.run_time_us", &RunRef::time_us}};

// Texts that repeat on every row of a history (identity keys, signatures), stored once and named by index.
class Interned {
 public:
  int32_t Id(std::string text) {
    auto [it, added] = ids_.try_emplace(std::move(text), static_cast<int32_t>(texts_.size()));
    if (added) texts_.push_back(&it->first);
    return it->second;
  }
  const std::string& Text(int32_t id) const { return *texts_[static_cast<size_t>(id)]; }

 private:
  std::unordered_map<std::string, int32_t> ids_;
  std::vector<const std::string*> texts_;  // keys of ids_ (node-based: stable addresses)
};

// One module_memory row, reduced to what a change point needs.
struct Instance {
  int32_t run = 0;                  // index into the history's runs
  int32_t identity = 0;             // interned identity key
  int32_t name = 0;                 // index into History::names
  int32_t signature = 0, sharding = 0;
  int64_t module_id = 0, xla_module_id = -1, live_peak_padded_time = -1;
  std::array<int64_t, kMetricCount> values{};  // by kModuleMetrics index; -1 = no figure
};

// One module_memory row as read, before History interns its texts into an Instance.
struct InstanceRow : ModuleMetricValues {
  int64_t run_id = 0, module_id = 0;
  std::string identity_key, module_name, stage, folder, entry_signature, entry_sharding;
  int64_t xla_module_id = -1, live_peak_padded_time = -1;
};

const ResultColumns<InstanceRow> kInstanceColumns =
    ResultColumns<InstanceRow>{
        {"mm.run_id", &InstanceRow::run_id},
        {"mm.module_id", &InstanceRow::module_id},
        {"mm.identity_key", &InstanceRow::identity_key},
        {"mm.module_name", &InstanceRow::module_name},
        {"mm.stage", &InstanceRow::stage},
        {"mm.folder", &InstanceRow::folder},
        {"mm.entry_signature", &InstanceRow::entry_signature},
        {"mm.entry_sharding", &InstanceRow::entry_sharding},
        {"mm.xla_module_id", &InstanceRow::xla_module_id},
        {"mm.live_peak_padded_time", &InstanceRow::live_peak_padded_time},
    }.WithModuleMetrics("mm");

// One series (an identity or a jit name) in one run: how many instances, and which holds the largest value
// of each metric (nullptr: none has a figure).
struct SeriesInRun {
  int32_t run = 0;
  int64_t compiles = 0;
  std::array<const Instance*, kMetricCount> largest{};
};
using Series = std::vector<SeriesInRun>;  // in run order

void Add(Series& series, const Instance& row) {
  if (series.empty() || series.back().run != row.run) series.push_back({row.run, 0, {}});
  SeriesInRun& in_run = series.back();
  ++in_run.compiles;
  for (size_t m = 0; m < kMetricCount; ++m) {
    if (row.values[m] < 0) continue;
    const Instance*& held = in_run.largest[m];
    if (held == nullptr || row.values[m] > held->values[m]) held = &row;  // ties: the first (xla_module_id order)
  }
}

class History {
 public:
  History(Database& db, const ChangeQuery& query) : db_(db), query_(query) {}

  // The runs that carry the labels, oldest first.
  void LoadRuns() {
    Conditions where;
    AddLabelMatch(&where, "r.run_id", query_.labels);
    auto q = db_.connection().Prepare("SELECT " + kRunColumns.SelectList() + " FROM runs r" + where.Where() +
                                      " ORDER BY r.run_time_us, r.run_id");
    BindArgs(*q, where.args());
    while (q->Step()) {
      RunRef run = kRunColumns.Read(*q);
      run_index_[run.run_id] = static_cast<int32_t>(runs_.size());
      runs_.push_back(std::move(run));
    }
  }

  // The module_memory rows `where` selects, in run order, appended to `out` (only runs of the history).
  void LoadRows(const Conditions& where, std::vector<Instance>* out) {
    auto q = db_.connection().Prepare(
        "SELECT " + kInstanceColumns.SelectList() + " FROM module_memory mm" + where.Where() +
        " ORDER BY mm.run_time_us, mm.run_id, mm.module_name, mm.stage, mm.folder, COALESCE(mm.xla_module_id, -1), "
        "mm.module_id");
    BindArgs(*q, where.args());
    while (q->Step()) {
      InstanceRow read = kInstanceColumns.Read(*q);
      auto run = run_index_.find(read.run_id);
      if (run == run_index_.end()) continue;
      Instance row;
      row.run = run->second;
      row.module_id = read.module_id;
      row.identity = texts_.Id(std::move(read.identity_key));
      row.name = NameId(std::move(read.module_name), std::move(read.stage), std::move(read.folder));
      row.signature = texts_.Id(std::move(read.entry_signature));
      row.sharding = texts_.Id(std::move(read.entry_sharding));
      row.xla_module_id = read.xla_module_id;
      row.live_peak_padded_time = read.live_peak_padded_time;
      for (size_t m = 0; m < kMetricCount; ++m) row.values[m] = read.*kModuleMetrics[m].value;
      out->push_back(std::move(row));
    }
  }

  int32_t NameId(std::string name, std::string stage, std::string folder) {
    auto key = std::make_tuple(std::move(name), std::move(stage), std::move(folder));
    auto [it, added] = name_ids_.try_emplace(key, static_cast<int32_t>(names_.size()));
    if (added) names_.push_back(std::move(key));
    return it->second;
  }

  const std::vector<RunRef>& runs() const { return runs_; }
  const Interned& texts() const { return texts_; }
  const std::tuple<std::string, std::string, std::string>& name(int32_t id) const { return names_[static_cast<size_t>(id)]; }

 private:
  Database& db_;
  const ChangeQuery& query_;
  std::vector<RunRef> runs_;
  std::unordered_map<int64_t, int32_t> run_index_;
  Interned texts_;
  std::map<std::tuple<std::string, std::string, std::string>, int32_t> name_ids_;
  std::vector<std::tuple<std::string, std::string, std::string>> names_;
};

// For the series (identities, or jit names when `by_name`) in `needed`, the rows of the latest run before run
// `before` that has each. One indexed read per 256 keys; `column` holds the key (identity_key or module_name).
std::vector<Instance> EarlierRows(History& history, const ChangeQuery& query, std::string_view column,
                                  const std::vector<std::string>& keys, int32_t before, bool by_name,
                                  const std::unordered_set<int32_t>& needed) {
  constexpr size_t kKeysAQuery = 256;
  std::vector<Instance> found;
  for (size_t at = 0; at < keys.size(); at += kKeysAQuery) {
    const std::vector<std::string> batch(keys.begin() + static_cast<std::ptrdiff_t>(at),
                                         keys.begin() + static_cast<std::ptrdiff_t>(std::min(keys.size(), at + kKeysAQuery)));
    Conditions where;
    where.AddIn("mm." + std::string(column), batch);
    AddLabelMatch(&where, "mm.run_id", query.labels);
    where.Add("mm.run_time_us <= ?", history.runs()[static_cast<size_t>(before)].time_us);
    history.LoadRows(where, &found);
  }
  auto series_of = [by_name](const Instance& r) { return by_name ? r.name : r.identity; };
  std::unordered_map<int32_t, int32_t> latest;  // series -> its latest run before `before`
  for (const Instance& r : found) {
    if (r.run >= before || needed.count(series_of(r)) == 0) continue;
    int32_t& run = latest.try_emplace(series_of(r), r.run).first->second;
    run = std::max(run, r.run);
  }
  std::vector<Instance> rows;
  for (Instance& r : found) {
    auto it = latest.find(series_of(r));
    if (it != latest.end() && it->second == r.run) rows.push_back(std::move(r));
  }
  return rows;  // still in run order
}

// A change point before it is written out: the two sides' instances that hold the values.
struct Found {
  ChangePoint::Level level = ChangePoint::Level::kIdentity;
  const SeriesInRun* before = nullptr;
  const SeriesInRun* after = nullptr;
  size_t metric = 0;      // kModuleMetrics index
  size_t metric_rank = 0; // its place in the query's metrics
  int64_t delta() const { return after->largest[metric]->values[metric] - before->largest[metric]->values[metric]; }
};

bool Passes(const ChangeQuery& query, int64_t before, int64_t after) {
  const int64_t change = std::llabs(after - before);
  if (change == 0 || change < query.min_bytes) return false;
  return before <= 0 || static_cast<double>(change) * 100.0 >= query.min_percent * static_cast<double>(before);
}

std::string LabelsText(const Labels& labels) {
  std::string text;
  for (const auto& [k, v] : labels) text += (text.empty() ? "" : ", ") + k + "=" + v;
  return text;
}

// The bounds a query must keep: kInvalidArgument naming the one it breaks.
Status CheckBounds(const ChangeQuery& query) {
  if (!query.since_run.empty() && query.last_n >= 0) {
    return Status::InvalidArgument("since_run and last_n both bound the window: give one of them");
  }
  if (query.last_n == 0 || query.last_n < -1) return Status::InvalidArgument("last_n must be at least 1");
  if (query.min_bytes < 0 || !std::isfinite(query.min_percent) || query.min_percent < 0) {
    return Status::InvalidArgument("min_bytes and min_percent must not be negative");
  }
  if (query.attribute < -1 || query.max_attribution < -1 || query.limit < -1 || query.first_above_bytes < 0) {
    return Status::InvalidArgument("attribute, max_attribution, limit and first_above_bytes must not be negative");
  }
  return Status::Ok();
}

// The kModuleMetrics indexes of the metrics asked (the gate's by default), in the order asked, each once;
// their names go to `names`. kInvalidArgument for a name that is not a metric.
StatusOr<std::vector<size_t>> MetricsAsked(const ChangeQuery& query, std::vector<std::string>* names) {
  std::vector<std::string> asked = query.metrics;
  if (asked.empty()) asked.assign(std::begin(kDefaultGateMetrics), std::end(kDefaultGateMetrics));
  std::vector<size_t> metrics;
  for (const std::string& name : asked) {
    const ModuleMetric* m = FindModuleMetric(name);
    if (m == nullptr) return Status::InvalidArgument("'" + name + "' is not a metric (" + ModuleMetricNames() + ")");
    const size_t index = static_cast<size_t>(m - kModuleMetrics);
    if (std::find(metrics.begin(), metrics.end(), index) != metrics.end()) continue;
    metrics.push_back(index);
    names->push_back(name);
  }
  return metrics;
}

// Since when one jit name's metric `m` has exceeded query.first_above_bytes in the window (its module, stage,
// folder and metric left for the caller); nullopt when it never did.
std::optional<FirstAbove> FirstAboveOf(const Series& series, size_t m, int32_t window, const std::vector<RunRef>& runs,
                                       int64_t bytes) {
  FirstAbove above;
  bool ever = false, streak = false;
  for (const SeriesInRun& s : series) {
    if (s.run < window || s.largest[m] == nullptr) continue;
    const int64_t value = s.largest[m]->values[m];
    const std::string& run = runs[static_cast<size_t>(s.run)].name;
    const bool over = value > bytes;
    if (over && !ever) {
      ever = true;
      above.first_run = run;
      above.first_value = value;
    }
    if (over && !streak) {
      above.since_run = run;
      above.since_value = value;
    }
    streak = over;
    above.latest_run = run;
    above.latest_value = value;
  }
  if (!ever) return std::nullopt;
  if (!streak) {
    above.since_run.clear();
    above.since_value = 0;
  }
  above.bytes = bytes;
  return above;
}

// One ListChanges query, answered step by step into its ChangeHistory: the runs and the window, the rows,
// the series, the change points found, ordered and explained, and the notes. The steps throw SqlError
// (ListChanges turns it into a Status). Used once; not copyable (the series point into the rows).
class ChangeSearch {
 public:
  ChangeSearch(Database& db, const ChangeQuery& query, std::vector<size_t> metrics, ChangeHistory result)
      : db_(db), query_(query), metrics_(std::move(metrics)), result_(std::move(result)), history_(db, query) {}
  ChangeSearch(const ChangeSearch&) = delete;
  ChangeSearch& operator=(const ChangeSearch&) = delete;

  StatusOr<ChangeHistory> Run() {
    history_.LoadRuns();
    if (history_.runs().empty()) {
      result_.notes.push_back(query_.labels.empty() ? "the store has no runs"
                                                    : "no run carries the labels " + LabelsText(query_.labels));
      return std::move(result_);
    }
    StatusOr<bool> window_has_runs = FindWindow();
    if (!window_has_runs.ok()) return window_has_runs.status();
    if (!*window_has_runs) return std::move(result_);
    NoteEqualRunTimes();
    StatusOr<bool> window_has_rows = LoadWindowRows();
    if (!window_has_rows.ok()) return window_has_rows.status();
    if (!*window_has_rows) return std::move(result_);
    LoadEarlierRows();
    BuildSeries();
    FindChanges(by_identity_, ChangePoint::Level::kIdentity);
    FindChanges(by_name_, ChangePoint::Level::kName);
    OrderAndLimit();
    WriteChangePoints();
    if (Status explained = ExplainLargest(); !explained.ok()) return explained;
    if (query_.first_above_bytes > 0) FindFirstAbove();
    NoteShortHistory();
    return std::move(result_);
  }

 private:
  const std::vector<RunRef>& runs() const { return history_.runs(); }
  int32_t run_count() const { return static_cast<int32_t>(runs().size()); }

  // The window: the runs where changes are reported, from window_ on. False when it is empty (noted);
  // kInvalidArgument for a since_run that names no run.
  StatusOr<bool> FindWindow() {
    if (!query_.since_run.empty()) {
      auto id = FindRunId(db_.connection(), query_.since_run);
      if (!id.ok()) return Status::InvalidArgument("no run named '" + query_.since_run + "' (since)");
      auto q = db_.connection().Prepare("SELECT run_time_us FROM runs WHERE run_id = ?");
      q->Bind(1, *id);
      q->Step();
      const std::pair<int64_t, int64_t> since{q->Int(0), *id};
      while (window_ < run_count() && std::make_pair(runs()[window_].time_us, runs()[window_].run_id) <= since) {
        ++window_;
      }
      if (window_ == run_count()) {
        result_.notes.push_back("no run after '" + query_.since_run + "'" +
                                (query_.labels.empty() ? "" : " carries the labels " + LabelsText(query_.labels)));
        return false;
      }
    } else if (query_.last_n > 0) {
      window_ = static_cast<int32_t>(std::max<int64_t>(0, run_count() - query_.last_n));
    }
    result_.runs = run_count() - window_;
    result_.first_run = runs()[static_cast<size_t>(window_)].name;
    result_.last_run = runs().back().name;
    return true;
  }

  void NoteEqualRunTimes() {
    int64_t ties = 0;
    for (int32_t i = std::max(window_, 1); i < run_count(); ++i) {
      if (runs()[i].time_us != runs()[i - 1].time_us) continue;
      if (++ties <= 3) {
        result_.notes.push_back("runs '" + runs()[i - 1].name + "' and '" + runs()[i].name +
                                "' have the same run time: ordered as they were stored");
      }
    }
    if (ties > 3) result_.notes.push_back(std::to_string(ties - 3) + " more pairs of runs with equal run times");
  }

  // The rows of the window and of the run before it. False when the window has none (noted); kNotFound
  // when `module` names no module of any run.
  StatusOr<bool> LoadWindowRows() {
    first_loaded_ = std::max(window_ - 1, 0);
    Conditions where;
    (void)AddNameMatch(&where, "mm.module_name", query_.module, "module");  // checked by ListChanges
    AddLabelMatch(&where, "mm.run_id", query_.labels);
    if (window_ > 0) where.Add("mm.run_time_us >= ?", runs()[static_cast<size_t>(first_loaded_)].time_us);
    history_.LoadRows(where, &rows_);
    rows_.erase(std::remove_if(rows_.begin(), rows_.end(), [&](const Instance& r) { return r.run < first_loaded_; }),
                rows_.end());
    if (std::any_of(rows_.begin(), rows_.end(), [&](const Instance& r) { return r.run >= window_; })) return true;
    if (query_.module.empty()) {
      result_.notes.push_back("no module with a buffer assignment in the runs considered");
      return false;
    }
    Conditions exists;
    (void)AddNameMatch(&exists, "m.name", query_.module, "module");
    auto q = db_.connection().Prepare("SELECT COUNT(*) FROM modules m" + exists.Where());
    BindArgs(*q, exists.args());
    q->Step();
    if (q->Int(0) == 0) return Status::NotFound("module '" + query_.module + "' not found in any run");
    result_.notes.push_back("module '" + query_.module + "' has no buffer assignment in the " +
                            std::to_string(result_.runs) + (result_.runs == 1 ? " run" : " runs") + " considered");
    return false;
  }

  // Series that the window has and the run before it lacks: their latest earlier run.
  void LoadEarlierRows() {
    if (window_ == 0) return;
    std::unordered_set<int32_t> identities_before, names_before, identities_needed, names_needed;
    for (const Instance& r : rows_) {
      if (r.run != first_loaded_) continue;
      identities_before.insert(r.identity);
      names_before.insert(r.name);
    }
    std::vector<std::string> identity_keys, module_names;
    std::set<std::string> names_asked;
    for (const Instance& r : rows_) {
      if (identities_before.count(r.identity) == 0 && identities_needed.insert(r.identity).second) {
        identity_keys.push_back(history_.texts().Text(r.identity));
      }
      if (names_before.count(r.name) == 0 && names_needed.insert(r.name).second &&
          names_asked.insert(std::get<0>(history_.name(r.name))).second) {
        module_names.push_back(std::get<0>(history_.name(r.name)));
      }
    }
    earlier_identities_ = EarlierRows(history_, query_, "identity_key", identity_keys, first_loaded_, false,
                                      identities_needed);
    earlier_names_ = EarlierRows(history_, query_, "module_name", module_names, first_loaded_, true, names_needed);
  }

  // Series by identity and by jit name, oldest run first.
  void BuildSeries() {
    for (const Instance& r : earlier_identities_) Add(by_identity_[r.identity], r);
    for (const Instance& r : earlier_names_) Add(by_name_[r.name], r);
    for (const Instance& r : rows_) {
      Add(by_identity_[r.identity], r);
      Add(by_name_[r.name], r);
    }
  }

  // The changes of each series at the window's runs that pass the query's sizes. Identities first: a name's
  // change is passed over where an identity of that name shows it.
  void FindChanges(const std::unordered_map<int32_t, Series>& all, ChangePoint::Level level) {
    for (const auto& [key, series] : all) {
      for (size_t j = 1; j < series.size(); ++j) {
        const SeriesInRun& a = series[j - 1];
        const SeriesInRun& b = series[j];
        if (b.run < window_) continue;
        for (size_t rank = 0; rank < metrics_.size(); ++rank) {
          const size_t m = metrics_[rank];
          if (a.largest[m] == nullptr || b.largest[m] == nullptr) continue;
          if (!Passes(query_, a.largest[m]->values[m], b.largest[m]->values[m])) continue;
          if (level == ChangePoint::Level::kIdentity) {
            identity_changed_.insert({b.run, b.largest[m]->name, m});
          } else if (identity_changed_.count({b.run, key, m}) != 0) {
            continue;  // an identity of this name shows the change
          }
          found_.push_back({level, &a, &b, m, rank});
        }
      }
    }
  }

  // Order (ChangeHistory::changes), then the limit.
  void OrderAndLimit() {
    auto name_of = [&](const Found& f) -> const auto& { return history_.name(f.after->largest[f.metric]->name); };
    auto tie_break = [&](const Found& x, const Found& y) {
      const Instance& a = *x.after->largest[x.metric];
      const Instance& b = *y.after->largest[y.metric];
      return std::make_tuple(x.level, std::cref(name_of(x)), x.metric_rank, a.xla_module_id, a.module_id) <
             std::make_tuple(y.level, std::cref(name_of(y)), y.metric_rank, b.xla_module_id, b.module_id);
    };
    if (!query_.module.empty()) {
      std::sort(found_.begin(), found_.end(), [&](const Found& x, const Found& y) {
        if (x.after->run != y.after->run) return x.after->run < y.after->run;
        if (std::llabs(x.delta()) != std::llabs(y.delta())) return std::llabs(x.delta()) > std::llabs(y.delta());
        return tie_break(x, y);
      });
    } else {
      std::sort(found_.begin(), found_.end(), [&](const Found& x, const Found& y) {
        if (std::llabs(x.delta()) != std::llabs(y.delta())) return std::llabs(x.delta()) > std::llabs(y.delta());
        if (x.after->run != y.after->run) return x.after->run > y.after->run;
        return tie_break(x, y);
      });
    }
    result_.change_count = static_cast<int64_t>(found_.size());
    if (query_.limit >= 0 && found_.size() > static_cast<size_t>(query_.limit)) {
      found_.resize(static_cast<size_t>(query_.limit));
    }
  }

  void WriteChangePoints() {
    for (const Found& f : found_) {
      const Instance& was = *f.before->largest[f.metric];
      const Instance& now = *f.after->largest[f.metric];
      ChangePoint p;
      p.level = f.level;
      p.run = runs()[static_cast<size_t>(now.run)].name;
      p.run_time_us = runs()[static_cast<size_t>(now.run)].time_us;
      p.previous_run = runs()[static_cast<size_t>(was.run)].name;
      p.previous_run_time_us = runs()[static_cast<size_t>(was.run)].time_us;
      std::tie(p.module, p.stage, p.folder) = history_.name(now.name);
      p.entry_signature = history_.texts().Text(now.signature);
      p.previous_entry_signature = history_.texts().Text(was.signature);
      p.entry_sharding = history_.texts().Text(now.sharding);
      p.previous_entry_sharding = history_.texts().Text(was.sharding);
      p.xla_module_id = now.xla_module_id;
      p.previous_xla_module_id = was.xla_module_id;
      p.module_id = now.module_id;
      p.previous_module_id = was.module_id;
      p.compiles = f.after->compiles;
      p.previous_compiles = f.before->compiles;
      p.metric = std::string(kModuleMetrics[f.metric].name);
      p.before = was.values[f.metric];
      p.after = now.values[f.metric];
      result_.changes.push_back(std::move(p));
    }
  }

  // The largest changes (query.attribute of them), explained by the gate's attribution.
  Status ExplainLargest() {
    std::vector<size_t> by_size(result_.changes.size());
    for (size_t i = 0; i < by_size.size(); ++i) by_size[i] = i;
    std::stable_sort(by_size.begin(), by_size.end(), [&](size_t x, size_t y) {
      return std::llabs(result_.changes[x].delta()) > std::llabs(result_.changes[y].delta());
    });
    if (query_.attribute >= 0 && by_size.size() > static_cast<size_t>(query_.attribute)) {
      by_size.resize(static_cast<size_t>(query_.attribute));
    }
    std::vector<AttributionPair> pairs;
    for (size_t i : by_size) {
      const ChangePoint& p = result_.changes[i];
      const auto scope = IsPeakMetric(p.metric) ? AttributionScope::kPeakBuffers : AttributionScope::kValues;
      pairs.push_back({p.previous_module_id, p.module_id, scope, query_.max_attribution});
    }
    auto attributions = AttributeChanges(db_, pairs);  // all together: a few statements for them all
    if (!attributions.ok()) return attributions.status();
    for (size_t k = 0; k < by_size.size(); ++k) {
      ChangePoint& p = result_.changes[by_size[k]];
      const Found& f = found_[by_size[k]];
      p.attribution = std::move((*attributions)[k]);
      p.peak_metric = p.metric == "live_peak_padded_bytes" ? p.metric : "peak_bytes";
      if (p.peak_metric == "live_peak_padded_bytes") {
        p.attribution->baseline_peak_time = f.before->largest[f.metric]->live_peak_padded_time;
        p.attribution->current_peak_time = f.after->largest[f.metric]->live_peak_padded_time;
      }
    }
    return Status::Ok();
  }

  // Since when each jit name has exceeded the size asked about (in the window).
  void FindFirstAbove() {
    for (const auto& [key, series] : by_name_) {
      for (const size_t m : metrics_) {
        std::optional<FirstAbove> above = FirstAboveOf(series, m, window_, runs(), query_.first_above_bytes);
        if (!above) continue;
        std::tie(above->module, above->stage, above->folder) = history_.name(key);
        above->metric = std::string(kModuleMetrics[m].name);
        result_.first_above.push_back(std::move(*above));
      }
    }
    std::sort(result_.first_above.begin(), result_.first_above.end(), [&](const FirstAbove& x, const FirstAbove& y) {
      auto rank = [&](const std::string& metric) {
        return std::find(result_.metrics.begin(), result_.metrics.end(), metric) - result_.metrics.begin();
      };
      return std::make_tuple(std::cref(x.module), std::cref(x.stage), std::cref(x.folder), rank(x.metric)) <
             std::make_tuple(std::cref(y.module), std::cref(y.stage), std::cref(y.folder), rank(y.metric));
    });
    if (result_.first_above.empty()) {
      result_.notes.push_back("no jit name exceeded " + std::to_string(query_.first_above_bytes) +
                              " bytes in the runs considered");
    }
  }

  // Histories too short to change.
  void NoteShortHistory() {
    if (run_count() == 1) {
      result_.notes.push_back("one run ('" + runs().front().name + "'): no earlier run to compare with");
      return;
    }
    if (query_.module.empty() || result_.change_count != 0) return;
    std::set<int32_t> module_runs;
    for (const auto& [key, series] : by_name_) {
      for (const SeriesInRun& s : series) module_runs.insert(s.run);
    }
    if (module_runs.size() == 1) {
      result_.notes.push_back("module '" + query_.module + "' is in one run only ('" +
                              runs()[static_cast<size_t>(*module_runs.begin())].name + "'): nothing to compare");
    }
  }

  Database& db_;
  const ChangeQuery& query_;
  const std::vector<size_t> metrics_;  // kModuleMetrics indexes, in the order asked
  ChangeHistory result_;
  History history_;
  int32_t window_ = 0;        // the window's first run (index into the history's runs)
  int32_t first_loaded_ = 0;  // the run before it, whose rows are loaded too (0 when the window starts there)
  std::vector<Instance> rows_, earlier_identities_, earlier_names_;
  std::unordered_map<int32_t, Series> by_identity_, by_name_;
  std::set<std::tuple<int32_t, int32_t, size_t>> identity_changed_;  // (run, name, metric)
  std::vector<Found> found_;
};

}  // namespace

StatusOr<ChangeHistory> ListChanges(Database& db, const ChangeQuery& query) {
  if (Status bounded = CheckBounds(query); !bounded.ok()) return bounded;
  ChangeHistory result;
  StatusOr<std::vector<size_t>> metrics = MetricsAsked(query, &result.metrics);
  if (!metrics.ok()) return metrics.status();
  {
    Conditions check;
    if (Status st = AddNameMatch(&check, "m.name", query.module, "module"); !st.ok()) return st;
  }
  return CatchSqlErrors("changes", [&] {
    return ChangeSearch(db, query, std::move(*metrics), std::move(result)).Run();
  });
}

}  // namespace xladb::store
