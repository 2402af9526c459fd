#include "store/queries.h"

#include <SQLiteCpp/SQLiteCpp.h>

#include <algorithm>
#include <charconv>
#include <cstdlib>
#include <map>
#include <optional>
#include <string_view>
#include <tuple>
#include <variant>

namespace xladb::store {
namespace {

// ---------------------------------------------------------------------------------------------------
// Building statements from optional filters. Only placeholders go into SQL text; every value that came
// from a caller is bound.

using SqlArg = std::variant<int64_t, std::string>;

class Conditions {
 public:
  // Adds `term` (its `?` placeholders filled by `args`, in order), AND-ed with the others.
  template <typename... Args>
  void Add(std::string_view term, Args&&... args) {
    terms_.emplace_back(term);
    (args_.emplace_back(std::forward<Args>(args)), ...);
  }
  // " WHERE a AND b …", or "" when there is no term.
  std::string Where() const { return Joined(" WHERE "); }
  // " AND a AND b …", for a statement that has a WHERE of its own.
  std::string And() const { return Joined(" AND "); }
  const std::vector<SqlArg>& args() const { return args_; }

 private:
  std::string Joined(std::string_view lead) const {
    std::string sql;
    for (size_t i = 0; i < terms_.size(); ++i) {
      sql += i == 0 ? lead : std::string_view(" AND ");
      sql += terms_[i];
    }
    return sql;
  }
  std::vector<std::string> terms_;
  std::vector<SqlArg> args_;
};

// Binds `args` from placeholder `first` on; returns the next free placeholder.
int BindArgs(SQLite::Statement& q, const std::vector<SqlArg>& args, int first = 1) {
  int index = first;
  for (const SqlArg& arg : args) {
    if (const auto* i = std::get_if<int64_t>(&arg)) {
      q.bind(index++, *i);
    } else {
      q.bind(index++, std::get<std::string>(arg));
    }
  }
  return index;
}

bool IsGlobPattern(const std::string& name) { return name.find_first_of("*?[") != std::string::npos; }

// A GLOB pattern must close every `[…]` class (SQLite would silently match nothing).
Status CheckGlobPattern(const std::string& pattern, std::string_view what) {
  for (size_t i = 0; i < pattern.size(); ++i) {
    if (pattern[i] != '[') continue;
    size_t j = i + 1;
    if (j < pattern.size() && pattern[j] == '^') ++j;
    if (j < pattern.size() && pattern[j] == ']') ++j;  // `]` right after `[` or `[^` is a member
    size_t close = pattern.find(']', j);
    if (close == std::string::npos) {
      return Status::InvalidArgument(std::string(what) + " pattern '" + pattern + "' has a '[' without a closing ']'");
    }
    i = close;
  }
  return Status::Ok();
}

// Matches `column` against a name: nothing when empty, GLOB when it contains * ? [, else equality (which
// also keeps the SQL portable and lets every engine use an index).
Status AddNameMatch(Conditions* where, std::string_view column, const std::string& name, std::string_view what) {
  if (name.empty()) return Status::Ok();
  if (!IsGlobPattern(name)) {
    where->Add(std::string(column) + " = ?", name);
    return Status::Ok();
  }
  Status st = CheckGlobPattern(name, what);
  if (!st.ok()) return st;
  where->Add(std::string(column) + " GLOB ?", name);
  return Status::Ok();
}

// Every label must be present on the run with exactly that value.
void AddLabelMatch(Conditions* where, std::string_view run_id_column, const Labels& labels) {
  for (const auto& [key, value] : labels) {
    where->Add("EXISTS (SELECT 1 FROM run_labels l WHERE l.run_id = " + std::string(run_id_column) +
                   " AND l.key = ? AND l.value = ?)",
               key, value);
  }
}

int64_t IntOr(const SQLite::Column& c, int64_t if_null) { return c.isNull() ? if_null : c.getInt64(); }
double RealOr(const SQLite::Column& c, double if_null) { return c.isNull() ? if_null : c.getDouble(); }
std::string TextOf(const SQLite::Column& c) { return c.isNull() ? std::string() : c.getString(); }

// Runs `fn`, turning any SQLite (or other) exception into kIoError naming the query.
template <typename Fn>
auto CatchSqlErrors(std::string_view query, Fn&& fn) -> decltype(fn()) {
  try {
    return fn();
  } catch (const std::exception& e) {
    return Status::IoError(std::string(query) + ": " + e.what());
  }
}

StatusOr<int64_t> FindRunId(SQLite::Database& db, const std::string& run_name) {
  SQLite::Statement q(db, "SELECT run_id FROM runs WHERE name = ?");
  q.bind(1, run_name);
  if (!q.executeStep()) return Status::NotFound("run '" + run_name + "' not found");
  return q.getColumn(0).getInt64();
}

// ---------------------------------------------------------------------------------------------------
// Runs

constexpr int64_t kDefaultPageSize = 100;
constexpr int64_t kMaxPageSize = 1000;
constexpr std::string_view kRunPageTokenPrefix = "runs1.";

constexpr const char* kRunColumns =
    "r.run_id, r.name, r.source_path, r.run_time_us, r.run_time_source, r.created_at_us, r.updated_at_us";

RunInfo ReadRunColumns(SQLite::Statement& q) {
  RunInfo run;
  run.run_id = q.getColumn(0).getInt64();
  run.name = TextOf(q.getColumn(1));
  run.source_path = TextOf(q.getColumn(2));
  run.run_time_us = q.getColumn(3).getInt64();
  run.run_time_source = TextOf(q.getColumn(4));
  run.created_at_us = q.getColumn(5).getInt64();
  run.updated_at_us = q.getColumn(6).getInt64();
  return run;
}

// Fills a run's labels and file and module counts; prepared once, used for every run of a page.
class RunDetailsReader {
 public:
  explicit RunDetailsReader(SQLite::Database& db)
      : labels_(db, "SELECT key, value FROM run_labels WHERE run_id = ? ORDER BY key"),
        files_(db,
               "SELECT COUNT(*), "
               "       COALESCE(SUM(CASE WHEN verdict = 'ingested' THEN 1 ELSE 0 END), 0), "
               "       COALESCE(SUM(CASE WHEN verdict = 'error' THEN 1 ELSE 0 END), 0) "
               "FROM dump_files WHERE run_id = ?"),
        modules_(db, "SELECT COUNT(*) FROM module_memory WHERE run_id = ?") {}

  void Fill(RunInfo* run) {
    labels_.reset();
    labels_.bind(1, run->run_id);
    while (labels_.executeStep()) run->labels.emplace_back(TextOf(labels_.getColumn(0)), TextOf(labels_.getColumn(1)));
    files_.reset();
    files_.bind(1, run->run_id);
    if (files_.executeStep()) {
      run->file_count = files_.getColumn(0).getInt64();
      run->ingested_file_count = files_.getColumn(1).getInt64();
      run->error_file_count = files_.getColumn(2).getInt64();
    }
    modules_.reset();
    modules_.bind(1, run->run_id);
    if (modules_.executeStep()) run->module_count = modules_.getColumn(0).getInt64();
  }

 private:
  SQLite::Statement labels_, files_, modules_;
};

// The page token is the (run_time_us, run_id) of the last run returned: pages are keyset ranges of the
// newest-first order, so runs ingested between two calls neither repeat nor shift the next page.
std::string MakeRunPageToken(const RunInfo& last) {
  return std::string(kRunPageTokenPrefix) + std::to_string(last.run_time_us) + "." + std::to_string(last.run_id);
}

bool ParseRunPageToken(const std::string& token, int64_t* run_time_us, int64_t* run_id) {
  std::string_view s(token);
  if (s.substr(0, kRunPageTokenPrefix.size()) != kRunPageTokenPrefix) return false;
  s.remove_prefix(kRunPageTokenPrefix.size());
  size_t dot = s.find('.');
  if (dot == std::string_view::npos) return false;
  auto parse = [](std::string_view part, int64_t* out) {
    auto [end, ec] = std::from_chars(part.data(), part.data() + part.size(), *out);
    return ec == std::errc() && end == part.data() + part.size() && !part.empty();
  };
  return parse(s.substr(0, dot), run_time_us) && parse(s.substr(dot + 1), run_id);
}

// ---------------------------------------------------------------------------------------------------
// DiffRuns

// A module with a buffer assignment, as one side of a diff sees it.
struct DiffSideModule {
  int64_t module_id = 0;
  std::string name, stage;
  int64_t xla_module_id = -1;
  std::string fingerprint, fingerprint_source;
  int64_t peak = -1, total = -1, temp = -1;
};

using ModuleKey = std::pair<std::string, std::string>;  // (name, stage)

StatusOr<std::map<ModuleKey, std::vector<DiffSideModule>>> LoadDiffSide(SQLite::Database& db, int64_t run_id,
                                                                        const std::string& module) {
  Conditions where;
  where.Add("mm.run_id = ?", run_id);
  Status st = AddNameMatch(&where, "mm.module_name", module, "module");
  if (!st.ok()) return st;
  SQLite::Statement q(db,
                      "SELECT mm.module_id, mm.module_name, mm.stage, mm.xla_module_id, mm.fingerprint, "
                      "       m.fingerprint_source, mm.peak_bytes, mm.total_bytes, mm.temp_bytes "
                      "FROM module_memory mm JOIN modules m ON m.module_id = mm.module_id" +
                          where.Where() +
                          " ORDER BY mm.module_name, mm.stage, COALESCE(mm.xla_module_id, -1), mm.module_id");
  BindArgs(q, where.args());
  std::map<ModuleKey, std::vector<DiffSideModule>> side;
  while (q.executeStep()) {
    DiffSideModule m;
    m.module_id = q.getColumn(0).getInt64();
    m.name = TextOf(q.getColumn(1));
    m.stage = TextOf(q.getColumn(2));
    m.xla_module_id = IntOr(q.getColumn(3), -1);
    m.fingerprint = TextOf(q.getColumn(4));
    m.fingerprint_source = TextOf(q.getColumn(5));
    m.peak = IntOr(q.getColumn(6), -1);
    m.total = IntOr(q.getColumn(7), -1);
    m.temp = IntOr(q.getColumn(8), -1);
    side[{m.name, m.stage}].push_back(std::move(m));
  }
  return side;
}

// Fingerprints say "same program" only when both exist and were computed from the same kind of input.
bool FingerprintsComparable(const DiffSideModule& a, const DiffSideModule& b) {
  return !a.fingerprint.empty() && !b.fingerprint.empty() && a.fingerprint_source == b.fingerprint_source;
}

// Pairs the modules of one (name, stage) on both sides: a lone module on each side pairs directly;
// repeated names pair by equal fingerprint first, then by order of xla_module_id. Unpaired indices come
// back as -1 on the other side.
std::vector<std::pair<int, int>> PairModules(const std::vector<DiffSideModule>& a,
                                             const std::vector<DiffSideModule>& b) {
  std::vector<std::pair<int, int>> pairs;
  if (a.size() == 1 && b.size() == 1) return {{0, 0}};
  std::vector<int> b_of_a(a.size(), -1);
  std::vector<bool> b_taken(b.size(), false);
  for (size_t i = 0; i < a.size(); ++i) {
    for (size_t j = 0; j < b.size(); ++j) {
      if (!b_taken[j] && FingerprintsComparable(a[i], b[j]) && a[i].fingerprint == b[j].fingerprint) {
        b_of_a[i] = static_cast<int>(j);
        b_taken[j] = true;
        break;
      }
    }
  }
  size_t next_b = 0;
  for (size_t i = 0; i < a.size(); ++i) {
    if (b_of_a[i] >= 0) continue;
    while (next_b < b.size() && b_taken[next_b]) ++next_b;
    if (next_b == b.size()) break;
    b_of_a[i] = static_cast<int>(next_b);
    b_taken[next_b] = true;
  }
  for (size_t i = 0; i < a.size(); ++i) pairs.emplace_back(static_cast<int>(i), b_of_a[i]);
  for (size_t j = 0; j < b.size(); ++j) {
    if (!b_taken[j]) pairs.emplace_back(-1, static_cast<int>(j));
  }
  return pairs;
}

// A buffer value with what identifies it across runs.
struct DiffValue {
  std::string instruction, shape_index;
  int64_t size = -1;
  std::string shape, op_name, source_file;
  int64_t source_line = -1;
  bool paired = false;
};

class ModuleValuesReader {
 public:
  explicit ModuleValuesReader(SQLite::Database& db)
      : q_(db,
           "SELECT v.instruction, v.shape_index, v.size_bytes, sh.text, i.op_name, sf.path, i.source_line "
           "FROM buffer_values v "
           "LEFT JOIN shapes sh ON sh.shape_id = v.shape_id "
           "LEFT JOIN instructions i ON i.module_id = v.module_id AND i.name = v.instruction "
           "LEFT JOIN source_files sf ON sf.source_file_id = i.source_file_id "
           "WHERE v.module_id = ? ORDER BY v.value_id") {}

  std::vector<DiffValue> Read(int64_t module_id) {
    q_.reset();
    q_.bind(1, module_id);
    std::vector<DiffValue> values;
    while (q_.executeStep()) {
      DiffValue v;
      v.instruction = TextOf(q_.getColumn(0));
      v.shape_index = TextOf(q_.getColumn(1));
      v.size = IntOr(q_.getColumn(2), -1);
      v.shape = TextOf(q_.getColumn(3));
      v.op_name = TextOf(q_.getColumn(4));
      v.source_file = TextOf(q_.getColumn(5));
      v.source_line = IntOr(q_.getColumn(6), -1);
      values.push_back(std::move(v));
    }
    return values;
  }

 private:
  SQLite::Statement q_;
};

std::string SourceOf(const DiffValue& v) {
  if (v.source_file.empty()) return {};
  return v.source_line >= 0 ? v.source_file + ":" + std::to_string(v.source_line) : v.source_file;
}

int64_t SizeDelta(const BufferDiff& d) { return std::max<int64_t>(d.size_b, 0) - std::max<int64_t>(d.size_a, 0); }

bool IsGrowth(const BufferDiff& d) {
  return d.change == BufferDiff::Change::kGrew || d.change == BufferDiff::Change::kAppeared;
}

// What pairs two values: (instruction, shape_index, "", 0) by name, or (op_name, source_file,
// shape_index, source_line) by origin.
using ValueKey = std::tuple<std::string, std::string, std::string, int64_t>;

// Pairs values by `key` (first come, first paired, in value_id order) among those still unpaired, and
// records the pairs whose sizes differ. `key` returns std::optional<ValueKey>; nullopt: no such key.
template <typename KeyFn>
void PairValues(std::vector<DiffValue>& a, std::vector<DiffValue>& b, KeyFn key, std::string_view matched_by,
                std::vector<BufferDiff>* diffs) {
  std::multimap<ValueKey, size_t> b_by_key;
  for (size_t j = 0; j < b.size(); ++j) {
    if (!b[j].paired) {
      if (auto k = key(b[j]); k) b_by_key.emplace(*k, j);
    }
  }
  for (DiffValue& va : a) {
    if (va.paired) continue;
    auto k = key(va);
    if (!k) continue;
    auto it = b_by_key.find(*k);
    if (it == b_by_key.end()) continue;
    DiffValue& vb = b[it->second];
    b_by_key.erase(it);
    va.paired = vb.paired = true;
    if (va.size < 0 || vb.size < 0 || va.size == vb.size) continue;
    BufferDiff d;
    d.change = vb.size > va.size ? BufferDiff::Change::kGrew : BufferDiff::Change::kShrank;
    d.instruction_a = va.instruction;
    d.instruction_b = vb.instruction;
    d.shape_index = vb.shape_index;
    d.matched_by = std::string(matched_by);
    d.size_a = va.size;
    d.size_b = vb.size;
    d.shape_a = va.shape;
    d.shape_b = vb.shape;
    d.op_name = vb.op_name.empty() ? va.op_name : vb.op_name;
    d.source = SourceOf(vb).empty() ? SourceOf(va) : SourceOf(vb);
    diffs->push_back(std::move(d));
  }
}

// Buffer-level diff of two modules: pairs by (instruction, shape_index), then the rest by (op_name,
// source file and line, shape_index); values left over appeared or disappeared. Growth first (largest
// delta first), then shrinkage (largest first).
std::vector<BufferDiff> DiffBuffers(std::vector<DiffValue> a, std::vector<DiffValue> b) {
  std::vector<BufferDiff> diffs;
  if (a.empty() && b.empty()) return diffs;
  using Key = std::optional<ValueKey>;
  PairValues(
      a, b, [](const DiffValue& v) -> Key { return ValueKey(v.instruction, v.shape_index, "", 0); }, "name", &diffs);
  PairValues(
      a, b,
      [](const DiffValue& v) -> Key {
        if (v.op_name.empty()) return std::nullopt;
        return ValueKey(v.op_name, v.source_file, v.shape_index, v.source_line);
      },
      "op_name_source", &diffs);
  auto lone = [&diffs](const DiffValue& v, bool in_b) {
    if (v.paired) return;
    BufferDiff d;
    d.change = in_b ? BufferDiff::Change::kAppeared : BufferDiff::Change::kDisappeared;
    (in_b ? d.instruction_b : d.instruction_a) = v.instruction;
    (in_b ? d.size_b : d.size_a) = v.size;
    (in_b ? d.shape_b : d.shape_a) = v.shape;
    d.shape_index = v.shape_index;
    d.op_name = v.op_name;
    d.source = SourceOf(v);
    diffs.push_back(std::move(d));
  };
  for (const DiffValue& v : a) lone(v, false);
  for (const DiffValue& v : b) lone(v, true);
  std::stable_sort(diffs.begin(), diffs.end(), [](const BufferDiff& x, const BufferDiff& y) {
    if (IsGrowth(x) != IsGrowth(y)) return IsGrowth(x);
    int64_t dx = std::abs(SizeDelta(x)), dy = std::abs(SizeDelta(y));
    if (dx != dy) return dx > dy;
    return std::tie(x.instruction_a, x.instruction_b, x.shape_index) <
           std::tie(y.instruction_a, y.instruction_b, y.shape_index);
  });
  return diffs;
}

int ChangeRank(ModuleDiff::Change c) {
  switch (c) {
    case ModuleDiff::Change::kChanged: return 0;
    case ModuleDiff::Change::kAdded: return 1;
    case ModuleDiff::Change::kRemoved: return 2;
    case ModuleDiff::Change::kUnchanged: return 3;
  }
  return 3;
}

int64_t PeakDelta(const ModuleDiff& d) { return d.peak_a >= 0 && d.peak_b >= 0 ? std::abs(d.peak_b - d.peak_a) : 0; }

}  // namespace

// ---------------------------------------------------------------------------------------------------

StatusOr<RunPage> ListRuns(Database& db, const RunFilter& filter) {
  if (filter.page_size < 0) {
    return Status::InvalidArgument("page_size must be 0 (default) to " + std::to_string(kMaxPageSize) + ", not " +
                                   std::to_string(filter.page_size));
  }
  const int64_t page_size = filter.page_size == 0 ? kDefaultPageSize : std::min(filter.page_size, kMaxPageSize);
  Conditions where;
  AddLabelMatch(&where, "r.run_id", filter.labels);
  if (filter.since_us >= 0) where.Add("r.run_time_us >= ?", filter.since_us);
  if (filter.until_us >= 0) where.Add("r.run_time_us < ?", filter.until_us);
  Status st = AddNameMatch(&where, "r.name", filter.name_pattern, "run name");
  if (!st.ok()) return st;
  if (!filter.page_token.empty()) {
    int64_t after_time = 0, after_id = 0;
    if (!ParseRunPageToken(filter.page_token, &after_time, &after_id)) {
      return Status::InvalidArgument("page token '" + filter.page_token +
                                     "' is not one this server returned; pass \"\" for the first page");
    }
    where.Add("(r.run_time_us < ? OR (r.run_time_us = ? AND r.run_id < ?))", after_time, after_time, after_id);
  }
  return CatchSqlErrors("listing runs", [&]() -> StatusOr<RunPage> {
    SQLite::Statement q(db.sql(), std::string("SELECT ") + kRunColumns + " FROM runs r" + where.Where() +
                                      " ORDER BY r.run_time_us DESC, r.run_id DESC LIMIT ?");
    int next = BindArgs(q, where.args());
    q.bind(next, page_size + 1);  // one more than the page, to know whether another page follows
    RunPage page;
    while (q.executeStep()) page.runs.push_back(ReadRunColumns(q));
    if (static_cast<int64_t>(page.runs.size()) > page_size) {
      page.runs.resize(static_cast<size_t>(page_size));
      page.next_page_token = MakeRunPageToken(page.runs.back());
    }
    RunDetailsReader details(db.sql());
    for (RunInfo& run : page.runs) details.Fill(&run);
    return page;
  });
}

StatusOr<RunInfo> GetRun(Database& db, const std::string& run_name) {
  return CatchSqlErrors("reading run '" + run_name + "'", [&]() -> StatusOr<RunInfo> {
    SQLite::Statement q(db.sql(), std::string("SELECT ") + kRunColumns + " FROM runs r WHERE r.name = ?");
    q.bind(1, run_name);
    if (!q.executeStep()) return Status::NotFound("run '" + run_name + "' not found");
    RunInfo run = ReadRunColumns(q);
    RunDetailsReader(db.sql()).Fill(&run);
    return run;
  });
}

StatusOr<std::vector<ModuleMemoryInfo>> ListModules(Database& db, const std::string& run_name,
                                                    const std::string& name_pattern) {
  return CatchSqlErrors("listing modules of run '" + run_name + "'",
                        [&]() -> StatusOr<std::vector<ModuleMemoryInfo>> {
    StatusOr<int64_t> run_id = FindRunId(db.sql(), run_name);
    if (!run_id.ok()) return run_id.status();
    Conditions where;
    where.Add("m.run_id = ?", *run_id);
    Status st = AddNameMatch(&where, "m.name", name_pattern, "module name");
    if (!st.ok()) return st;
    SQLite::Statement q(
        db.sql(),
        "SELECT m.module_id, m.name, m.xla_module_id, m.stage, m.backend, m.fingerprint, "
        "       EXISTS (SELECT 1 FROM module_memory mm WHERE mm.module_id = m.module_id), "
        "       s.peak_bytes, s.peak_time, s.total_bytes, s.parameter_bytes, s.output_bytes, s.temp_bytes, "
        "       s.allocation_count, s.value_count, s.instruction_count, m.folder "
        "FROM modules m LEFT JOIN module_summary s ON s.module_id = m.module_id" +
            where.Where() + " ORDER BY m.name, m.stage, COALESCE(m.xla_module_id, -1), m.folder, m.module_id");
    BindArgs(q, where.args());
    std::vector<ModuleMemoryInfo> modules;
    while (q.executeStep()) {
      ModuleMemoryInfo m;
      m.module_id = q.getColumn(0).getInt64();
      m.name = TextOf(q.getColumn(1));
      m.xla_module_id = IntOr(q.getColumn(2), -1);
      m.stage = TextOf(q.getColumn(3));
      m.backend = TextOf(q.getColumn(4));
      m.fingerprint = TextOf(q.getColumn(5));
      m.has_buffer_assignment = q.getColumn(6).getInt() != 0;
      m.peak_bytes = IntOr(q.getColumn(7), -1);
      m.peak_time = IntOr(q.getColumn(8), -1);
      m.total_bytes = IntOr(q.getColumn(9), -1);
      m.parameter_bytes = IntOr(q.getColumn(10), -1);
      m.output_bytes = IntOr(q.getColumn(11), -1);
      m.temp_bytes = IntOr(q.getColumn(12), -1);
      m.allocation_count = IntOr(q.getColumn(13), 0);
      m.value_count = IntOr(q.getColumn(14), 0);
      m.instruction_count = IntOr(q.getColumn(15), 0);
      m.folder = TextOf(q.getColumn(16));
      modules.push_back(std::move(m));
    }
    return modules;
  });
}

StatusOr<std::vector<TrendPoint>> PeakMemoryTrend(Database& db, const TrendQuery& query) {
  if (query.module.empty()) return Status::InvalidArgument("a trend needs a module name or pattern");
  const char* metric = "peak_bytes";
  switch (query.metric) {
    case TrendMetric::kPeakBytes: metric = "peak_bytes"; break;
    case TrendMetric::kTotalBytes: metric = "total_bytes"; break;
    case TrendMetric::kTempBytes: metric = "temp_bytes"; break;
  }
  Conditions where;
  Status st = AddNameMatch(&where, "mm.module_name", query.module, "module");
  if (!st.ok()) return st;
  if (!query.stage.empty()) where.Add("mm.stage = ?", query.stage);
  where.Add(std::string("mm.") + metric + " IS NOT NULL");
  AddLabelMatch(&where, "mm.run_id", query.labels);
  // The points are the matching module_memory rows; with last_n, only those of the newest N runs that
  // have a point.
  std::string sql =
      std::string("WITH points AS (SELECT mm.run_name, mm.run_time_us, mm.module_name, mm.xla_module_id, mm.stage, "
                  "mm.fingerprint, mm.") +
      metric + " AS value, mm.peak_bytes, mm.total_bytes, mm.temp_bytes, mm.run_id FROM module_memory mm" +
      where.Where() + ")";
  if (query.last_n >= 0) {
    sql += ", newest AS (SELECT DISTINCT run_time_us, run_id FROM points "
           "ORDER BY run_time_us DESC, run_id DESC LIMIT ?)";
  }
  sql += " SELECT run_name, run_time_us, module_name, xla_module_id, stage, fingerprint, value, peak_bytes, "
         "total_bytes, temp_bytes FROM points";
  if (query.last_n >= 0) sql += " WHERE run_id IN (SELECT run_id FROM newest)";
  sql += " ORDER BY run_time_us, run_id, module_name, COALESCE(xla_module_id, -1), stage";
  return CatchSqlErrors("peak memory trend of '" + query.module + "'", [&]() -> StatusOr<std::vector<TrendPoint>> {
    SQLite::Statement q(db.sql(), sql);
    int next = BindArgs(q, where.args());
    if (query.last_n >= 0) q.bind(next, query.last_n);
    std::vector<TrendPoint> points;
    while (q.executeStep()) {
      TrendPoint p;
      p.run_name = TextOf(q.getColumn(0));
      p.run_time_us = q.getColumn(1).getInt64();
      p.module_name = TextOf(q.getColumn(2));
      p.xla_module_id = IntOr(q.getColumn(3), -1);
      p.stage = TextOf(q.getColumn(4));
      p.fingerprint = TextOf(q.getColumn(5));
      p.value = q.getColumn(6).getInt64();
      p.peak_bytes = IntOr(q.getColumn(7), -1);
      p.total_bytes = IntOr(q.getColumn(8), -1);
      p.temp_bytes = IntOr(q.getColumn(9), -1);
      points.push_back(std::move(p));
    }
    return points;
  });
}

StatusOr<std::vector<SpillRateRow>> SpillRates(Database& db, const SpillQuery& query) {
  return CatchSqlErrors("spill rates", [&]() -> StatusOr<std::vector<SpillRateRow>> {
    Conditions where;
    if (!query.run.empty()) {
      // By run_id, a GROUP BY column of kernel_spills, so SQLite pushes it into the view's aggregate.
      StatusOr<int64_t> run_id = FindRunId(db.sql(), query.run);
      if (!run_id.ok()) return run_id.status();
      where.Add("ks.run_id = ?", *run_id);
    }
    Status st = AddNameMatch(&where, "ks.kernel", query.kernel_pattern, "kernel");
    if (!st.ok()) return st;
    // kernel_spills reads kernel_spill_summary (computed at ingest); its rate index serves the top N.
    std::string sql =
        "SELECT ks.run_name, r.run_time_us, ks.module_name, ks.kernel, ks.vmem_spills, ks.vmem_fills, "
        "       ks.smem_spills, ks.smem_fills, ks.bundles, ks.vmem_spill_rate, ks.vmem_fill_rate, "
        "       ks.smem_spill_rate, ks.smem_fill_rate "
        "FROM kernel_spills ks JOIN runs r ON r.run_id = ks.run_id" +
        where.Where() +
        " ORDER BY ks.vmem_spill_rate DESC, ks.vmem_fill_rate DESC, r.run_time_us DESC, "
        "ks.kernel, ks.run_id, ks.module_id";
    if (query.limit >= 0) sql += " LIMIT ?";
    SQLite::Statement q(db.sql(), sql);
    int next = BindArgs(q, where.args());
    if (query.limit >= 0) q.bind(next, query.limit);
    std::vector<SpillRateRow> rows;
    while (q.executeStep()) {
      SpillRateRow row;
      row.run_name = TextOf(q.getColumn(0));
      row.run_time_us = q.getColumn(1).getInt64();
      row.module_name = TextOf(q.getColumn(2));
      row.kernel = TextOf(q.getColumn(3));
      row.vmem_spills = IntOr(q.getColumn(4), 0);
      row.vmem_fills = IntOr(q.getColumn(5), 0);
      row.smem_spills = IntOr(q.getColumn(6), 0);
      row.smem_fills = IntOr(q.getColumn(7), 0);
      row.bundles = IntOr(q.getColumn(8), 0);
      row.vmem_spill_rate = RealOr(q.getColumn(9), 0);
      row.vmem_fill_rate = RealOr(q.getColumn(10), 0);
      row.smem_spill_rate = RealOr(q.getColumn(11), 0);
      row.smem_fill_rate = RealOr(q.getColumn(12), 0);
      rows.push_back(std::move(row));
    }
    return rows;
  });
}

StatusOr<TopBuffersAnswer> TopBuffers(Database& db, const std::string& run_name, const std::string& module,
                                      int64_t n, const std::string& stage, int64_t xla_module_id,
                                      const std::optional<std::string>& folder) {
  return CatchSqlErrors("top buffers of '" + module + "' in run '" + run_name + "'",
                        [&]() -> StatusOr<TopBuffersAnswer> {
    StatusOr<int64_t> run_id = FindRunId(db.sql(), run_name);
    if (!run_id.ok()) return run_id.status();
    Conditions where;
    where.Add("m.run_id = ?", *run_id);
    where.Add("m.name = ?", module);
    if (!stage.empty()) where.Add("m.stage = ?", stage);
    if (xla_module_id >= 0) where.Add("m.xla_module_id = ?", xla_module_id);
    if (folder) where.Add("m.folder = ?", *folder);
    SQLite::Statement pick(db.sql(),
                           "SELECT m.module_id, m.name, m.stage, m.folder, m.xla_module_id, s.peak_bytes, s.peak_time "
                           "FROM modules m LEFT JOIN module_summary s ON s.module_id = m.module_id" +
                               where.Where() + " ORDER BY COALESCE(s.peak_bytes, -1) DESC, m.module_id LIMIT 1");
    BindArgs(pick, where.args());
    if (!pick.executeStep()) {
      std::string what = "module '" + module + "'";
      if (!stage.empty()) what += " at stage '" + stage + "'";
      if (xla_module_id >= 0) what += " with xla_module_id " + std::to_string(xla_module_id);
      if (folder) what += " in folder '" + *folder + "'";
      return Status::NotFound(what + " not found in run '" + run_name + "'");
    }
    const int64_t module_id = pick.getColumn(0).getInt64();
    TopBuffersAnswer answer;
    answer.module = TextOf(pick.getColumn(1));
    answer.stage = TextOf(pick.getColumn(2));
    answer.folder = TextOf(pick.getColumn(3));
    answer.xla_module_id = IntOr(pick.getColumn(4), -1);
    answer.peak_bytes = IntOr(pick.getColumn(5), -1);
    answer.peak_time = IntOr(pick.getColumn(6), -1);
    std::string sql =
        "SELECT ordinal, instruction, shape_index, logical_bytes, value_id, allocation_index, size_bytes, shape, "
        "       opcode, op_name, source_file, source_line, live_start, live_end "
        "FROM peak_buffer_details WHERE module_id = ? ORDER BY logical_bytes DESC, ordinal";
    if (n >= 0) sql += " LIMIT ?";
    SQLite::Statement q(db.sql(), sql);
    q.bind(1, module_id);
    if (n >= 0) q.bind(2, n);
    std::vector<TopBuffer>& buffers = answer.buffers;
    while (q.executeStep()) {
      TopBuffer b;
      b.ordinal = q.getColumn(0).getInt64();
      b.instruction = TextOf(q.getColumn(1));
      b.shape_index = TextOf(q.getColumn(2));
      b.logical_bytes = q.getColumn(3).getInt64();
      b.value_id = IntOr(q.getColumn(4), -1);
      b.allocation_index = IntOr(q.getColumn(5), -1);
      b.size_bytes = IntOr(q.getColumn(6), -1);
      b.shape = TextOf(q.getColumn(7));
      b.opcode = TextOf(q.getColumn(8));
      b.op_name = TextOf(q.getColumn(9));
      b.source_file = TextOf(q.getColumn(10));
      b.source_line = IntOr(q.getColumn(11), -1);
      b.live_start = IntOr(q.getColumn(12), -1);
      b.live_end = IntOr(q.getColumn(13), -1);
      buffers.push_back(std::move(b));
    }
    return answer;
  });
}

StatusOr<RunDiff> DiffRuns(Database& db, const DiffQuery& query) {
  return CatchSqlErrors("diff of runs '" + query.run_a + "' and '" + query.run_b + "'", [&]() -> StatusOr<RunDiff> {
    StatusOr<int64_t> run_a = FindRunId(db.sql(), query.run_a);
    if (!run_a.ok()) return run_a.status();
    StatusOr<int64_t> run_b = FindRunId(db.sql(), query.run_b);
    if (!run_b.ok()) return run_b.status();
    auto side_a = LoadDiffSide(db.sql(), *run_a, query.module);
    if (!side_a.ok()) return side_a.status();
    auto side_b = LoadDiffSide(db.sql(), *run_b, query.module);
    if (!side_b.ok()) return side_b.status();

    std::map<ModuleKey, std::pair<const std::vector<DiffSideModule>*, const std::vector<DiffSideModule>*>> keys;
    for (const auto& [key, modules] : *side_a) keys[key].first = &modules;
    for (const auto& [key, modules] : *side_b) keys[key].second = &modules;

    static const std::vector<DiffSideModule> kNone;
    ModuleValuesReader values(db.sql());
    RunDiff diff;
    for (const auto& [key, sides] : keys) {
      const auto& a = sides.first ? *sides.first : kNone;
      const auto& b = sides.second ? *sides.second : kNone;
      for (auto [ia, ib] : PairModules(a, b)) {
        ModuleDiff d;
        d.module_name = key.first;
        d.stage = key.second;
        const DiffSideModule* ma = ia >= 0 ? &a[ia] : nullptr;
        const DiffSideModule* mb = ib >= 0 ? &b[ib] : nullptr;
        if (ma) {
          d.xla_module_id_a = ma->xla_module_id;
          d.fingerprint_a = ma->fingerprint;
          d.peak_a = ma->peak;
          d.total_a = ma->total;
          d.temp_a = ma->temp;
        }
        if (mb) {
          d.xla_module_id_b = mb->xla_module_id;
          d.fingerprint_b = mb->fingerprint;
          d.peak_b = mb->peak;
          d.total_b = mb->total;
          d.temp_b = mb->temp;
        }
        if (!ma || !mb) {
          d.change = ma ? ModuleDiff::Change::kRemoved : ModuleDiff::Change::kAdded;
        } else {
          const bool same_numbers = ma->peak == mb->peak && ma->total == mb->total && ma->temp == mb->temp;
          const bool comparable = FingerprintsComparable(*ma, *mb);
          const bool same_program = comparable && ma->fingerprint == mb->fingerprint;
          // The same program with the same totals has the same buffers: skip reading them.
          if (query.buffer_level && !(same_program && same_numbers)) {
            d.buffers = DiffBuffers(values.Read(ma->module_id), values.Read(mb->module_id));
          }
          d.buffer_changes = static_cast<int64_t>(d.buffers.size());
          if (query.max_buffers >= 0 && d.buffer_changes > query.max_buffers) {
            d.buffers.resize(static_cast<size_t>(query.max_buffers));
          }
          const bool changed = !same_numbers || (comparable && !same_program) || d.buffer_changes > 0;
          d.change = changed ? ModuleDiff::Change::kChanged : ModuleDiff::Change::kUnchanged;
        }
        switch (d.change) {
          case ModuleDiff::Change::kAdded: ++diff.added; break;
          case ModuleDiff::Change::kRemoved: ++diff.removed; break;
          case ModuleDiff::Change::kChanged: ++diff.changed; break;
          case ModuleDiff::Change::kUnchanged: ++diff.unchanged; break;
        }
        if (d.change != ModuleDiff::Change::kUnchanged || query.include_unchanged) diff.modules.push_back(std::move(d));
      }
    }
    std::stable_sort(diff.modules.begin(), diff.modules.end(), [](const ModuleDiff& x, const ModuleDiff& y) {
      if (ChangeRank(x.change) != ChangeRank(y.change)) return ChangeRank(x.change) < ChangeRank(y.change);
      if (x.change == ModuleDiff::Change::kChanged && PeakDelta(x) != PeakDelta(y)) return PeakDelta(x) > PeakDelta(y);
      return std::tie(x.module_name, x.stage, x.xla_module_id_a, x.xla_module_id_b) <
             std::tie(y.module_name, y.stage, y.xla_module_id_a, y.xla_module_id_b);
    });
    return diff;
  });
}

}  // namespace xladb::store
