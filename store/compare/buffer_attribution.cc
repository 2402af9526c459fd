#include "store/compare/buffer_attribution.h"


#include <algorithm>
#include <cstdlib>
#include <map>
#include <tuple>
#include <unordered_map>

#include "store/query/result_columns.h"
#include "store/query/statement_text.h"
#include "store/facts/shape_text.h"

namespace xladb::store {
namespace {

// A buffer with what identifies it across runs.
struct Buffer {
  std::string instruction, shape_index;
  int64_t size = -1;
  std::string shape, op_name, source_file;
  int64_t source_line = -1;
  bool paired = false;
};

// A value of buffer_values v, with its shape, instruction, op name and source file (ReadBuffers' joins).
const ResultColumns<Buffer> kValueColumns = {
    {"v.instruction", &Buffer::instruction},
    {"v.shape_index", &Buffer::shape_index},
    {"v.size_bytes", &Buffer::size},
    {"sh.text", &Buffer::shape},
    {"opn.text", &Buffer::op_name},
    {"sf.path", &Buffer::source_file},
    {"i.source_line", &Buffer::source_line},
};

// A buffer of the peak_buffer_details view.
const ResultColumns<Buffer> kPeakBufferColumns = {
    {"instruction", &Buffer::instruction},
    {"shape_index", &Buffer::shape_index},
    {"COALESCE(size_bytes, logical_bytes)", &Buffer::size},
    {"shape", &Buffer::shape},
    {"op_name", &Buffer::op_name},
    {"source_file", &Buffer::source_file},
    {"source_line", &Buffer::source_line},
};

// Every value of the module, or the buffers of its peak list (their padded value size; the logical size
// XLA printed when the value is not resolved or has no size). The statements' texts are built once: their
// addresses key the connection's statement cache, so a gate over 500 reshaped pairs prepares them once.
std::vector<Buffer> ReadBuffers(StatementCache& statements, int64_t module_id, AttributionScope scope) {
  static const std::string kValuesSql =
      "SELECT " + kValueColumns.SelectList() +
      " FROM buffer_values v "
      "LEFT JOIN shapes sh ON sh.shape_id = v.shape_id "
      "LEFT JOIN instructions i ON i.module_id = v.module_id AND i.name = v.instruction "
      "LEFT JOIN names opn ON opn.name_id = i.op_name_id "
      "LEFT JOIN source_files sf ON sf.source_file_id = i.source_file_id "
      "WHERE v.module_id = ? ORDER BY v.value_id";
  static const std::string kPeakBuffersSql = "SELECT " + kPeakBufferColumns.SelectList() +
                                             " FROM peak_buffer_details WHERE module_id = ? ORDER BY ordinal";
  const bool values = scope == AttributionScope::kValues;
  const ResultColumns<Buffer>& columns = values ? kValueColumns : kPeakBufferColumns;
  SqlStatement& q = statements.Get(values ? kValuesSql.c_str() : kPeakBuffersSql.c_str());
  q.Bind(1, module_id);
  std::vector<Buffer> buffers;
  while (q.Step()) buffers.push_back(columns.Read(q));
  return buffers;
}

std::string SourceOf(const Buffer& b) {
  if (b.source_file.empty()) return {};
  return b.source_line >= 0 ? b.source_file + ":" + std::to_string(b.source_line) : b.source_file;
}

using Key = std::tuple<std::string, std::string, std::string, std::string, int64_t>;

struct KeyHash {
  size_t operator()(const Key& k) const {
    size_t h = std::hash<std::string>()(std::get<0>(k));
    h = h * 31 + std::hash<std::string>()(std::get<1>(k));
    h = h * 31 + std::hash<std::string>()(std::get<2>(k));
    h = h * 31 + std::hash<std::string>()(std::get<3>(k));
    return h * 31 + std::hash<int64_t>()(std::get<4>(k));
  }
};

// Pairs buffers by `key` (first come, first paired, in order) among those still unpaired, and records the
// pairs whose sizes differ. Each key's unpaired current buffers wait in index order behind a cursor, so a
// pairing is O(1): thousands of buffers of one origin (a renamed loop body) pair in linear time.
template <typename KeyFn>
void Pair(std::vector<Buffer>& base, std::vector<Buffer>& cur, KeyFn key, const char* matched_by,
          std::vector<BufferChange>* changes) {
  struct Waiting {
    std::vector<size_t> indices;  // ascending
    size_t next = 0;              // the earliest not yet paired
  };
  std::unordered_map<Key, Waiting, KeyHash> cur_by_key;
  for (size_t j = 0; j < cur.size(); ++j) {
    if (!cur[j].paired) {
      if (auto k = key(cur[j]); k) cur_by_key[std::move(*k)].indices.push_back(j);
    }
  }
  for (Buffer& a : base) {
    if (a.paired) continue;
    auto k = key(a);
    if (!k) continue;
    auto found = cur_by_key.find(*k);
    if (found == cur_by_key.end() || found->second.next == found->second.indices.size()) continue;
    Buffer& b = cur[found->second.indices[found->second.next++]];
    a.paired = b.paired = true;
    if (a.size < 0 || b.size < 0 || a.size == b.size) continue;
    BufferChange c;
    c.kind = b.size > a.size ? BufferChange::Kind::kGrew : BufferChange::Kind::kShrank;
    c.instruction = b.instruction;
    c.baseline_instruction = a.instruction;
    c.shape_index = b.shape_index;
    c.matched_by = matched_by;
    c.baseline_bytes = a.size;
    c.current_bytes = b.size;
    c.baseline_shape = a.shape;
    c.current_shape = b.shape;
    c.op_name = b.op_name.empty() ? a.op_name : b.op_name;
    c.source = SourceOf(b).empty() ? SourceOf(a) : SourceOf(b);
    changes->push_back(std::move(c));
  }
}

// A module's peak time and schedule length (-1: unknown).
struct ScheduleTimes {
  int64_t peak_time = -1;
  int64_t schedule_length = -1;
};
const ResultColumns<ScheduleTimes> kScheduleTimesColumns = {{"peak_time", &ScheduleTimes::peak_time},
                                                            {"schedule_length", &ScheduleTimes::schedule_length}};

void ReadSummary(StatementCache& statements, int64_t module_id, int64_t* peak_time, int64_t* schedule_length) {
  static const std::string kSql =
      "SELECT " + kScheduleTimesColumns.SelectList() + " FROM module_summary WHERE module_id = ?";
  SqlStatement& q = statements.Get(kSql.c_str());
  q.Bind(1, module_id);
  if (q.Step()) {
    const ScheduleTimes times = kScheduleTimesColumns.Read(q);
    *peak_time = times.peak_time;
    *schedule_length = times.schedule_length;
  }
  q.Reset();  // one row: done with it (no snapshot held)
}

}  // namespace

const char* AttributionScopeName(AttributionScope scope) {
  return scope == AttributionScope::kPeakBuffers ? "peak_buffers" : "values";
}

StatusOr<Attribution> AttributeChange(Database& db, int64_t baseline_module_id, int64_t current_module_id,
                                      AttributionScope scope, int64_t max_changes) {
  return CatchSqlErrors("attributing a module's change", [&]() -> StatusOr<Attribution> {
    Attribution result;
    result.scope = scope;
    StatementCache& statements = db.statements();
    ReadSummary(statements, baseline_module_id, &result.baseline_peak_time, &result.baseline_schedule_length);
    ReadSummary(statements, current_module_id, &result.current_peak_time, &result.current_schedule_length);
    std::vector<Buffer> base = ReadBuffers(statements, baseline_module_id, scope);
    std::vector<Buffer> cur = ReadBuffers(statements, current_module_id, scope);
    std::vector<BufferChange>& changes = result.changes;
    Pair(base, cur, [](const Buffer& b) -> std::optional<Key> { return Key(b.instruction, b.shape_index, "", "", 0); },
         "name", &changes);
    Pair(base, cur,
         [](const Buffer& b) -> std::optional<Key> {
           if (b.op_name.empty()) return std::nullopt;
           return Key(b.op_name, b.source_file, b.shape_index, ShapeWithoutLayout(b.shape), b.source_line);
         },
         "origin", &changes);
    auto lone = [&changes](const Buffer& b, bool current) {
      if (b.paired) return;
      BufferChange c;
      c.kind = current ? BufferChange::Kind::kAppeared : BufferChange::Kind::kDisappeared;
      (current ? c.instruction : c.baseline_instruction) = b.instruction;
      (current ? c.current_bytes : c.baseline_bytes) = b.size;
      (current ? c.current_shape : c.baseline_shape) = b.shape;
      c.shape_index = b.shape_index;
      c.op_name = b.op_name;
      c.source = SourceOf(b);
      changes.push_back(std::move(c));
    };
    for (const Buffer& b : base) lone(b, false);
    for (const Buffer& b : cur) lone(b, true);
    std::stable_sort(changes.begin(), changes.end(), [](const BufferChange& x, const BufferChange& y) {
      const int64_t dx = std::abs(x.delta()), dy = std::abs(y.delta());
      if (dx != dy) return dx > dy;
      return std::tie(x.instruction, x.baseline_instruction, x.shape_index) <
             std::tie(y.instruction, y.baseline_instruction, y.shape_index);
    });
    std::map<std::string, SourceLineChange> by_source;
    for (const BufferChange& c : changes) {
      SourceLineChange& s = by_source[c.source];
      s.source = c.source;
      s.delta += c.delta();
      ++s.buffers;
    }
    for (auto& [source, s] : by_source) result.by_source.push_back(std::move(s));
    std::stable_sort(result.by_source.begin(), result.by_source.end(),
                     [](const SourceLineChange& x, const SourceLineChange& y) {
                       return std::abs(x.delta) > std::abs(y.delta);
                     });
    result.change_count = static_cast<int64_t>(changes.size());
    if (max_changes >= 0 && result.change_count > max_changes) changes.resize(static_cast<size_t>(max_changes));
    return result;
  });
}

}  // namespace xladb::store
