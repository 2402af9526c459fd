#include "store/compare/buffer_attribution.h"


#include <algorithm>
#include <cstdlib>
#include <map>
#include <optional>
#include <string_view>
#include <tuple>
#include <unordered_map>

#include "store/query/result_columns.h"
#include "store/query/statement_text.h"
#include "store/facts/shape_text.h"

namespace xladb::store {
namespace {

// The metadata of a buffer's defining instruction: ids into the interned tables (-1: none).
struct Origin {
  int64_t op_name_id = -1, source_file_id = -1, source_line = -1;
};

// A buffer with what identifies it across runs. Its shape, op_name and source file are ids into the interned
// tables, whose texts are read only where a pass or a listed change needs them, not joined into every row.
// shapes.text and source_files.path are UNIQUE (one id, one text), so source files compare by id; names
// may hold a text twice (two writers sharing a PostgreSQL store), so op_names compare by text.
struct Buffer : Origin {  // the Origin holds when origin_read; else InstructionOrigins reads it
  std::string instruction, shape_index;
  int64_t size = -1;
  int64_t shape_id = -1;
  bool current = false;      // of the current module (else the baseline's)
  bool origin_read = false;  // its origin was read with it
  bool paired = false;
};

// A value of buffer_values v; a buffer of the peak list p (what the view peak_buffer_details shows: its padded
// value size, or the logical size XLA printed when the value is not resolved or has no size).
const ResultColumns<Buffer> kValueColumns = {
    {"v.instruction", &Buffer::instruction},
    {"v.shape_index", &Buffer::shape_index},
    {"v.size_bytes", &Buffer::size},
    {"v.shape_id", &Buffer::shape_id},
};
const ResultColumns<Buffer> kPeakBufferColumns = {
    {"p.instruction", &Buffer::instruction},
    {"p.shape_index", &Buffer::shape_index},
    {"COALESCE(v.size_bytes, p.logical_bytes)", &Buffer::size},
    {"v.shape_id", &Buffer::shape_id},
};
// The origin of instruction i, read with a buffer or alone.
constexpr int64_t Buffer::*OriginMember(int64_t Origin::*member) { return static_cast<int64_t Buffer::*>(member); }
const ResultColumns<Buffer> kBufferOriginColumns = {
    {"i.op_name_id", OriginMember(&Origin::op_name_id)},
    {"i.source_file_id", OriginMember(&Origin::source_file_id)},
    {"i.source_line", OriginMember(&Origin::source_line)},
};

// Every value of the module, or the buffers of its peak list. The statements' texts are built once: their
// addresses key the connection's statement cache, so a gate over 500 reshaped pairs prepares them once.
//
// On PostgreSQL, where a statement is a round trip, each buffer's origin is joined in. On SQLite, where a
// statement is a function call, that join cost more than the rest of the read (a probe of the instructions'
// key and a row for every buffer) while about half the buffers of a reshaped pair need their origin:
// InstructionOrigins reads those, one instruction at a time.
std::vector<Buffer> ReadBuffers(Database& db, int64_t module_id, AttributionScope scope, bool current) {
  auto sql = [](bool peak, bool with_origin) {
    const ResultColumns<Buffer>& columns = peak ? kPeakBufferColumns : kValueColumns;
    const std::string from = peak ? "p" : "v";
    return "SELECT " + (with_origin ? columns.Then(kBufferOriginColumns) : columns).SelectList() +
           (peak ? " FROM peak_buffers p LEFT JOIN buffer_values v ON v.module_id = p.module_id AND "
                   "v.value_id = p.value_id"
                 : " FROM buffer_values v") +
           (with_origin ? " LEFT JOIN instructions i ON i.module_id = " + from + ".module_id AND i.name = " + from +
                              ".instruction"
                        : "") +
           " WHERE " + from + ".module_id = ? ORDER BY " + (peak ? "p.ordinal" : "v.value_id");
  };
  static const std::string kSql[2][2] = {{sql(false, false), sql(false, true)}, {sql(true, false), sql(true, true)}};
  static const ResultColumns<Buffer> kColumns[2][2] = {
      {kValueColumns, kValueColumns.Then(kBufferOriginColumns)},
      {kPeakBufferColumns, kPeakBufferColumns.Then(kBufferOriginColumns)}};
  const int peak = scope == AttributionScope::kPeakBuffers;
  const int with_origin = !db.is_sqlite();
  SqlStatement& q = db.statements().Get(kSql[peak][with_origin].c_str());
  q.Bind(1, module_id);
  std::vector<Buffer> buffers;
  while (q.Step()) {
    buffers.push_back(kColumns[peak][with_origin].Read(q));
    buffers.back().current = current;
    buffers.back().origin_read = with_origin;
  }
  return buffers;
}

// The origins of the two modules' buffers: read with them, or else here, once an instruction, when a buffer
// first needs its own.
class InstructionOrigins {
 public:
  InstructionOrigins(StatementCache& statements, int64_t baseline_module_id, int64_t current_module_id)
      : statements_(statements), module_ids_{baseline_module_id, current_module_id} {}

  const Origin& Of(const Buffer& b) {
    if (b.origin_read) return b;
    auto [it, added] = by_name_[b.current].try_emplace(b.instruction);
    if (added) {
      static const std::string kSql =
          "SELECT " + kBufferOriginColumns.SelectList() + " FROM instructions i WHERE i.module_id = ? AND i.name = ?";
      SqlStatement& q = statements_.Get(kSql.c_str());
      q.Bind(1, module_ids_[b.current]);
      q.Bind(2, b.instruction);
      if (q.Step()) it->second = kBufferOriginColumns.Read(q);  // its Origin part
      q.Reset();
    }
    return it->second;
  }

 private:
  StatementCache& statements_;
  int64_t module_ids_[2];
  std::unordered_map<std::string_view, Origin> by_name_[2];  // views of the buffers' names, which outlive this
};

// The texts behind a pair's ids, each read once (shapes, op_names and source paths repeat within a module).
class InternedTextReader {
 public:
  explicit InternedTextReader(StatementCache& statements) : statements_(statements) {}

  const std::string& Shape(int64_t id) { return Read(shapes_, "SELECT text FROM shapes WHERE shape_id = ?", id); }
  const std::string& OpName(int64_t id) { return Read(names_, "SELECT text FROM names WHERE name_id = ?", id); }
  const std::string& SourceFile(int64_t id) {
    return Read(source_files_, "SELECT path FROM source_files WHERE source_file_id = ?", id);
  }
  const std::string& ShapeWithoutLayoutOf(int64_t id) {
    auto [it, added] = shapes_without_layout_.try_emplace(id);
    if (added) it->second = ShapeWithoutLayout(Shape(id));
    return it->second;
  }
  // "file:line" (or "file"), "" when the buffer's instruction has no source file.
  std::string SourceOf(const Origin& o) {
    const std::string& file = SourceFile(o.source_file_id);
    if (file.empty()) return {};
    return o.source_line >= 0 ? file + ":" + std::to_string(o.source_line) : file;
  }

 private:
  const std::string& Read(std::unordered_map<int64_t, std::string>& cache, const char* sql, int64_t id) {
    auto [it, added] = cache.try_emplace(id);
    if (added && id >= 0) {
      SqlStatement& q = statements_.Get(sql);
      q.Bind(1, id);
      if (q.Step()) it->second = q.Text(0);
      q.Reset();
    }
    return it->second;
  }

  StatementCache& statements_;
  std::unordered_map<int64_t, std::string> shapes_, names_, source_files_, shapes_without_layout_;
};

// A change found by pairing: its two buffers (nullptr: the side is absent); its texts are read when it is listed.
struct FoundChange {
  BufferChange::Kind kind;
  const char* matched_by;  // "name", "origin" or ""
  const Buffer* base;
  const Buffer* cur;
  std::string source = {};  // "file:line" of the current side, else of the baseline's (set after sorting)
  int64_t delta() const {
    auto bytes = [](const Buffer* b) { return b && b->size > 0 ? b->size : 0; };
    return bytes(cur) - bytes(base);
  }
  // The ordering names of BufferChange: the current instruction, the baseline's, the shape index.
  std::string_view instruction() const { return cur ? std::string_view(cur->instruction) : std::string_view(); }
  std::string_view baseline_instruction() const { return base ? std::string_view(base->instruction) : ""; }
  std::string_view shape_index() const { return cur ? cur->shape_index : base->shape_index; }
};

// A buffer's identity for one pass: (instruction, shape index) by name; (op_name, shape index, shape without
// layout, source file, source line) by origin. Views into the buffers and the text reader, which outlive it.
using Key = std::tuple<std::string_view, std::string_view, std::string_view, int64_t, int64_t>;

struct KeyHash {
  size_t operator()(const Key& k) const {
    size_t h = std::hash<std::string_view>()(std::get<0>(k));
    h = h * 31 + std::hash<std::string_view>()(std::get<1>(k));
    h = h * 31 + std::hash<std::string_view>()(std::get<2>(k));
    h = h * 31 + std::hash<int64_t>()(std::get<3>(k));
    return h * 31 + std::hash<int64_t>()(std::get<4>(k));
  }
};

// Pairs buffers by `key` (first come, first paired, in order) among those still unpaired, and records the
// pairs whose sizes differ. Each key's unpaired current buffers wait in index order behind a cursor, so a
// pairing is O(1): thousands of buffers of one origin (a renamed loop body) pair in linear time.
template <typename KeyFn>
void Pair(std::vector<Buffer>& base, std::vector<Buffer>& cur, KeyFn key, const char* matched_by,
          std::vector<FoundChange>* changes) {
  struct Waiting {
    size_t first = 0;                // the first current buffer of the key
    std::vector<size_t> more;        // the others, ascending (most keys have one buffer)
    size_t next = 0;                 // how many are paired
    size_t at(size_t i) const { return i == 0 ? first : more[i - 1]; }
    size_t size() const { return 1 + more.size(); }
  };
  std::unordered_map<Key, Waiting, KeyHash> cur_by_key;
  cur_by_key.reserve(cur.size());
  for (size_t j = 0; j < cur.size(); ++j) {
    if (cur[j].paired) continue;
    if (auto k = key(cur[j]); k) {
      auto [it, added] = cur_by_key.try_emplace(*k);
      if (added) it->second.first = j; else it->second.more.push_back(j);
    }
  }
  for (Buffer& a : base) {
    if (a.paired) continue;
    auto k = key(a);
    if (!k) continue;
    auto found = cur_by_key.find(*k);
    if (found == cur_by_key.end() || found->second.next == found->second.size()) continue;
    Buffer& b = cur[found->second.at(found->second.next++)];
    a.paired = b.paired = true;
    if (a.size < 0 || b.size < 0 || a.size == b.size) continue;
    changes->push_back({b.size > a.size ? BufferChange::Kind::kGrew : BufferChange::Kind::kShrank, matched_by, &a, &b});
  }
}

// The current side's text, else the baseline's: a grown buffer keeps the op_name and source its current
// instruction has, one that disappeared has only the baseline's.
template <typename TextOf>
std::string CurrentElseBaseline(const FoundChange& f, TextOf text_of) {
  std::string text = f.cur ? std::string(text_of(*f.cur)) : std::string();
  if (text.empty() && f.base) text = text_of(*f.base);
  return text;
}

// The listed change, its texts read.
BufferChange Describe(const FoundChange& f, InternedTextReader& texts, InstructionOrigins& origins) {
  BufferChange c;
  c.kind = f.kind;
  c.matched_by = f.matched_by;
  c.shape_index = std::string(f.shape_index());
  if (f.cur) {
    c.instruction = f.cur->instruction;
    c.current_bytes = f.cur->size;
    c.current_shape = texts.Shape(f.cur->shape_id);
  }
  if (f.base) {
    c.baseline_instruction = f.base->instruction;
    c.baseline_bytes = f.base->size;
    c.baseline_shape = texts.Shape(f.base->shape_id);
  }
  c.op_name = CurrentElseBaseline(
      f, [&](const Buffer& b) -> const std::string& { return texts.OpName(origins.Of(b).op_name_id); });
  c.source = f.source;
  return c;
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
    std::vector<Buffer> base = ReadBuffers(db, baseline_module_id, scope, false);
    std::vector<Buffer> cur = ReadBuffers(db, current_module_id, scope, true);
    InternedTextReader texts(statements);
    InstructionOrigins origins(statements, baseline_module_id, current_module_id);
    std::vector<FoundChange> found;
    Pair(base, cur, [](const Buffer& b) -> std::optional<Key> { return Key(b.instruction, b.shape_index, "", -1, 0); },
         "name", &found);
    Pair(base, cur,
         [&](const Buffer& b) -> std::optional<Key> {
           const Origin& o = origins.Of(b);
           const std::string& op_name = texts.OpName(o.op_name_id);
           if (op_name.empty()) return std::nullopt;
           return Key(op_name, b.shape_index, texts.ShapeWithoutLayoutOf(b.shape_id), o.source_file_id, o.source_line);
         },
         "origin", &found);
    for (const Buffer& b : base) {
      if (!b.paired) found.push_back({BufferChange::Kind::kDisappeared, "", &b, nullptr});
    }
    for (const Buffer& b : cur) {
      if (!b.paired) found.push_back({BufferChange::Kind::kAppeared, "", nullptr, &b});
    }
    std::stable_sort(found.begin(), found.end(), [](const FoundChange& x, const FoundChange& y) {
      const int64_t dx = std::abs(x.delta()), dy = std::abs(y.delta());
      if (dx != dy) return dx > dy;
      return std::tuple(x.instruction(), x.baseline_instruction(), x.shape_index()) <
             std::tuple(y.instruction(), y.baseline_instruction(), y.shape_index());
    });
    std::map<std::string, SourceLineChange> by_source;
    for (FoundChange& f : found) {
      f.source = CurrentElseBaseline(f, [&](const Buffer& b) { return texts.SourceOf(origins.Of(b)); });
      SourceLineChange& s = by_source[f.source];
      s.source = f.source;
      s.delta += f.delta();
      ++s.buffers;
    }
    for (auto& [source, s] : by_source) result.by_source.push_back(std::move(s));
    std::stable_sort(result.by_source.begin(), result.by_source.end(),
                     [](const SourceLineChange& x, const SourceLineChange& y) {
                       return std::abs(x.delta) > std::abs(y.delta);
                     });
    result.change_count = static_cast<int64_t>(found.size());
    const size_t listed = max_changes >= 0 ? std::min(found.size(), static_cast<size_t>(max_changes)) : found.size();
    result.changes.reserve(listed);
    for (size_t i = 0; i < listed; ++i) result.changes.push_back(Describe(found[i], texts, origins));
    return result;
  });
}

}  // namespace xladb::store
