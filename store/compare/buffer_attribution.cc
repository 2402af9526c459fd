#include "store/compare/buffer_attribution.h"


#include <algorithm>
#include <cstdlib>
#include <deque>
#include <map>
#include <optional>
#include <string_view>
#include <tuple>
#include <unordered_map>

#include "store/query/result_columns.h"
#include "store/query/rows_by_id.h"
#include "store/query/statement_text.h"
#include "store/facts/shape_text.h"

namespace xladb::store {
namespace {

// Sorts the ids and drops repeats.
void SortUnique(std::vector<int64_t>& ids) {
  std::sort(ids.begin(), ids.end());
  ids.erase(std::unique(ids.begin(), ids.end()), ids.end());
}

// The metadata of a buffer's defining instruction: ids into the interned tables (-1: none).
struct Origin {
  int64_t op_name_id = -1, source_file_id = -1, source_line = -1;
};

// A buffer with what identifies it across runs. Its shape, op_name and source file are ids into the interned
// tables, whose texts are read only where a pass or a listed change needs them, not joined into every row.
// shapes.text and source_files.path are UNIQUE (one id, one text), so source files compare by id; names
// may hold a text twice (two writers sharing a PostgreSQL store), so op_names compare by text.
struct Buffer : Origin {  // the Origin holds when origin_read; else InstructionOrigins reads it
  int64_t module_id = 0;
  std::string instruction, shape_index;
  int64_t size = -1;
  int64_t shape_id = -1;
  bool origin_read = false;  // its origin was read with it
  bool paired = false;
};

// A value of buffer_values v; a buffer of the peak list p (what the view peak_buffer_details shows: its padded
// value size, or the logical size XLA printed when the value is not resolved or has no size).
const ResultColumns<Buffer> kValueColumns = {
    {"v.module_id", &Buffer::module_id},
    {"v.instruction", &Buffer::instruction},
    {"v.shape_index", &Buffer::shape_index},
    {"v.size_bytes", &Buffer::size},
    {"v.shape_id", &Buffer::shape_id},
};
const ResultColumns<Buffer> kPeakBufferColumns = {
    {"p.module_id", &Buffer::module_id},
    {"p.instruction", &Buffer::instruction},
    {"p.shape_index", &Buffer::shape_index},
    {"COALESCE(v.size_bytes, p.logical_bytes)", &Buffer::size},
    {"v.shape_id", &Buffer::shape_id},
};
// The origin of instruction i, as columns of R (a struct derived from Origin): read with a buffer, alone, or
// with the instruction's key.
template <typename R>
ResultColumns<R> OriginColumns() {
  auto as_r = [](int64_t Origin::*member) { return static_cast<int64_t R::*>(member); };
  return {{"i.op_name_id", as_r(&Origin::op_name_id)},
          {"i.source_file_id", as_r(&Origin::source_file_id)},
          {"i.source_line", as_r(&Origin::source_line)}};
}
const ResultColumns<Buffer> kBufferOriginColumns = OriginColumns<Buffer>();

// An instruction's origin with its key, read by module.
struct KeyedOrigin : Origin {
  int64_t module_id = 0;
  std::string name;
};
const ResultColumns<KeyedOrigin> kKeyedOriginColumns =
    ResultColumns<KeyedOrigin>{{"i.module_id", &KeyedOrigin::module_id}, {"i.name", &KeyedOrigin::name}}.Then(
        OriginColumns<KeyedOrigin>());

// Gives every buffer of `buffers` the origin of its instruction (as a LEFT JOIN would: none where the module
// has no instruction of that name), from one read of the modules' instructions that have one: an instruction
// without metadata (a parameter, a tuple, a copy XLA added: most of a module's) gives a buffer what no
// instruction gives, so it is not sent.
void ReadOriginsOfModules(Database& db, const std::vector<int64_t>& module_ids,
                          std::unordered_map<int64_t, std::vector<Buffer>>& buffers) {
  static const RowsById kInstructions(
      "SELECT " + kKeyedOriginColumns.SelectList() + " FROM instructions i", "i.module_id",
      " AND (i.op_name_id IS NOT NULL OR i.source_file_id IS NOT NULL OR i.source_line IS NOT NULL)");
  // Per module, its buffers by instruction name (views of the buffers' names, which outlive this).
  std::unordered_map<int64_t, std::unordered_map<std::string_view, std::vector<Buffer*>>> wanted;
  for (auto& [module, list] : buffers) {
    for (Buffer& b : list) {
      wanted[module][b.instruction].push_back(&b);
      b.origin_read = true;
    }
  }
  kInstructions.ForEach(db, module_ids, [&](const SqlStatement& q) {
    const KeyedOrigin o = kKeyedOriginColumns.Read(q);
    const auto module = wanted.find(o.module_id);
    if (module == wanted.end()) return;
    const auto named = module->second.find(o.name);
    if (named == module->second.end()) return;
    for (Buffer* b : named->second) static_cast<Origin&>(*b) = o;
  });
}

// Every value of the modules, or the buffers of their peak lists, by module id, in value id (or printed)
// order.
//
// On PostgreSQL, where a statement is a round trip, the buffers come with their origins: a peak list's
// joined in (a few buffers a module); the values' from a second read of every instruction of their modules,
// matched here. Joined, a reshaped pair's values cost an index probe of the instructions' key each (a nested
// loop: 18,061 probes for the 22,821 values of 500 modules), more than reading the modules' instructions in
// key order. On SQLite, where a statement is a function call, that join cost more than the rest of the read
// while about half the buffers of a reshaped pair need their origin: InstructionOrigins reads those, one
// instruction at a time.
std::unordered_map<int64_t, std::vector<Buffer>> ReadBuffers(Database& db, const std::vector<int64_t>& module_ids,
                                                             AttributionScope scope) {
  // The values; a peak list's buffers; and those with their origins.
  static const ResultColumns<Buffer> kPeakWithOriginColumns = kPeakBufferColumns.Then(kBufferOriginColumns);
  static const std::string kPeakFrom =
      " FROM peak_buffers p LEFT JOIN buffer_values v ON v.module_id = p.module_id AND v.value_id = p.value_id";
  static const RowsById kValues("SELECT " + kValueColumns.SelectList() + " FROM buffer_values v", "v.module_id",
                                " ORDER BY v.module_id, v.value_id");
  static const RowsById kPeak("SELECT " + kPeakBufferColumns.SelectList() + kPeakFrom, "p.module_id",
                              " ORDER BY p.module_id, p.ordinal");
  static const RowsById kPeakWithOrigin(
      "SELECT " + kPeakWithOriginColumns.SelectList() + kPeakFrom +
          " LEFT JOIN instructions i ON i.module_id = p.module_id AND i.name = p.instruction",
      "p.module_id", " ORDER BY p.module_id, p.ordinal");
  const bool peak = scope == AttributionScope::kPeakBuffers;
  const bool join_origin = peak && !db.is_sqlite();
  const RowsById& rows = !peak ? kValues : join_origin ? kPeakWithOrigin : kPeak;
  const ResultColumns<Buffer>& columns =
      !peak ? kValueColumns : join_origin ? kPeakWithOriginColumns : kPeakBufferColumns;
  std::unordered_map<int64_t, std::vector<Buffer>> buffers;
  // Rows come module by module: a module's list is looked up once, not once a row.
  std::vector<Buffer>* list = nullptr;
  rows.ForEach(db, module_ids, [&](const SqlStatement& q) {
    Buffer b = columns.Read(q);
    b.origin_read = join_origin;
    if (list == nullptr || list->front().module_id != b.module_id) list = &buffers[b.module_id];
    list->push_back(std::move(b));
  });
  if (!peak && !db.is_sqlite()) ReadOriginsOfModules(db, module_ids, buffers);
  return buffers;
}

// The origins of buffers: read with them, or else here, once an instruction of a module, when a buffer first
// needs its own.
class InstructionOrigins {
 public:
  explicit InstructionOrigins(StatementCache& statements) : statements_(statements) {}

  const Origin& Of(const Buffer& b) {
    if (b.origin_read) return b;
    auto [it, added] = by_module_[b.module_id].try_emplace(b.instruction);
    if (added) {
      static const std::string kSql =
          "SELECT " + kBufferOriginColumns.SelectList() + " FROM instructions i WHERE i.module_id = ? AND i.name = ?";
      SqlStatement& q = statements_.Get(kSql.c_str());
      const ResetWhenDone reset(q);
      q.Bind(1, b.module_id);
      q.BindTextRef(2, b.instruction);  // the buffer outlives the step
      if (q.Step()) it->second = kBufferOriginColumns.Read(q);  // its Origin part
    }
    return it->second;
  }

 private:
  StatementCache& statements_;
  // By module, by instruction name (views of the buffers' names, which outlive this).
  std::unordered_map<int64_t, std::unordered_map<std::string_view, Origin>> by_module_;
};

// The texts behind the ids (shapes, op_names and source paths), each read once for a whole query: a group
// says which it wants, then reads them together (RowsById). A text not wanted first is read alone.
class InternedTextReader {
 public:
  enum Kind { kShape, kOpName, kSourceFile };

  explicit InternedTextReader(Database& db) : db_(db) {}

  void Want(Kind kind, int64_t id) {
    if (id >= 0 && !texts_[kind].contains(id)) wanted_[kind].push_back(id);
  }
  // Reads every text wanted since the last call.
  void ReadWanted() {
    for (int kind : {kShape, kOpName, kSourceFile}) {
      SortUnique(wanted_[kind]);
      Read(static_cast<Kind>(kind), wanted_[kind]);
      wanted_[kind].clear();
    }
  }

  const std::string& Shape(int64_t id) { return Text(kShape, id); }
  const std::string& OpName(int64_t id) { return Text(kOpName, id); }
  const std::string& SourceFile(int64_t id) { return Text(kSourceFile, id); }
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
  void Read(Kind kind, const std::vector<int64_t>& ids) {
    static const RowsById kRows[3] = {{"SELECT shape_id, text FROM shapes", "shape_id", ""},
                                      {"SELECT name_id, text FROM names", "name_id", ""},
                                      {"SELECT source_file_id, path FROM source_files", "source_file_id", ""}};
    kRows[kind].ForEach(db_, ids, [&](const SqlStatement& q) { texts_[kind][q.Int(0)] = q.Text(1); });
    for (int64_t id : ids) texts_[kind].try_emplace(id);  // an id without a row: ""
  }
  // A text not wanted before is read alone.
  const std::string& Text(Kind kind, int64_t id) {
    auto it = texts_[kind].find(id);
    if (it != texts_[kind].end()) return it->second;
    if (id >= 0) Read(kind, {id});
    return texts_[kind][id];
  }

  Database& db_;
  std::unordered_map<int64_t, std::string> texts_[3];
  std::vector<int64_t> wanted_[3];
  std::unordered_map<int64_t, std::string> shapes_without_layout_;
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

// A module's peak time, schedule length (-1: unknown) and value count (what its buffers weigh in a group).
struct ModuleFigures {
  int64_t module_id = 0;
  int64_t peak_time = -1;
  int64_t schedule_length = -1;
  int64_t value_count = 0;
};
const ResultColumns<ModuleFigures> kModuleFiguresColumns = {{"module_id", &ModuleFigures::module_id},
                                                            {"peak_time", &ModuleFigures::peak_time},
                                                            {"schedule_length", &ModuleFigures::schedule_length},
                                                            {"value_count", &ModuleFigures::value_count}};

std::unordered_map<int64_t, ModuleFigures> ReadFigures(Database& db, const std::vector<int64_t>& module_ids) {
  static const RowsById kRows("SELECT " + kModuleFiguresColumns.SelectList() + " FROM module_summary", "module_id", "");
  std::unordered_map<int64_t, ModuleFigures> figures;
  kRows.ForEach(db, module_ids, [&](const SqlStatement& q) {
    ModuleFigures f = kModuleFiguresColumns.Read(q);
    figures[f.module_id] = f;
  });
  return figures;
}

// One pair's attribution, computed in stages so that a group's pairs read their texts together: every stage
// of every pair says which texts it will need (Want), the group reads them, then the next stage runs.
class PairAttribution {
 public:
  PairAttribution(const AttributionPair& request, std::vector<Buffer> base, std::vector<Buffer> cur,
                  StatementCache& statements)
      : request_(request),
        base_(std::move(base)),
        cur_(std::move(cur)),
        origins_(statements) {
    result_.scope = request.scope;
  }
  // Made in place (AttributeGroup's deque) and never copied: found_ points into base_ and cur_.
  PairAttribution(const PairAttribution&) = delete;
  PairAttribution& operator=(const PairAttribution&) = delete;

  void SetFigures(const ModuleFigures* baseline, const ModuleFigures* current) {
    if (baseline) {
      result_.baseline_peak_time = baseline->peak_time;
      result_.baseline_schedule_length = baseline->schedule_length;
    }
    if (current) {
      result_.current_peak_time = current->peak_time;
      result_.current_schedule_length = current->schedule_length;
    }
  }

  // 1. The name pass; the texts the origin pass compares for the buffers it left.
  void PairByName(InternedTextReader& texts) {
    Pair(base_, cur_, [](const Buffer& b) -> std::optional<Key> { return Key(b.instruction, b.shape_index, "", -1, 0); },
         "name", &found_);
    for (const std::vector<Buffer>* side : {&base_, &cur_}) {
      for (const Buffer& b : *side) {
        if (b.paired) continue;
        const int64_t op_name_id = origins_.Of(b).op_name_id;
        if (op_name_id < 0) continue;  // without an op_name, no origin key
        texts.Want(InternedTextReader::kOpName, op_name_id);
        texts.Want(InternedTextReader::kShape, b.shape_id);
      }
    }
  }

  // 2. The origin pass, the buffers left unpaired, the changes in order; the source files they name.
  void PairByOrigin(InternedTextReader& texts) {
    Pair(base_, cur_,
         [&](const Buffer& b) -> std::optional<Key> {
           const Origin& o = origins_.Of(b);
           const std::string& op_name = texts.OpName(o.op_name_id);
           if (op_name.empty()) return std::nullopt;
           return Key(op_name, b.shape_index, texts.ShapeWithoutLayoutOf(b.shape_id), o.source_file_id, o.source_line);
         },
         "origin", &found_);
    for (const Buffer& b : base_) {
      if (!b.paired) found_.push_back({BufferChange::Kind::kDisappeared, "", &b, nullptr});
    }
    for (const Buffer& b : cur_) {
      if (!b.paired) found_.push_back({BufferChange::Kind::kAppeared, "", nullptr, &b});
    }
    std::stable_sort(found_.begin(), found_.end(), [](const FoundChange& x, const FoundChange& y) {
      const int64_t dx = std::abs(x.delta()), dy = std::abs(y.delta());
      if (dx != dy) return dx > dy;
      return std::tuple(x.instruction(), x.baseline_instruction(), x.shape_index()) <
             std::tuple(y.instruction(), y.baseline_instruction(), y.shape_index());
    });
    for (const FoundChange& f : found_) {
      WantCurrentElseBaseline(f, texts, InternedTextReader::kSourceFile, &Origin::source_file_id);
    }
  }

  // 3. Every change by source line; the texts of the changes listed.
  void SumBySource(InternedTextReader& texts) {
    std::map<std::string, SourceLineChange> by_source;
    for (FoundChange& f : found_) {
      f.source = CurrentElseBaseline(f, [&](const Buffer& b) { return texts.SourceOf(origins_.Of(b)); });
      SourceLineChange& s = by_source[f.source];
      s.source = f.source;
      s.delta += f.delta();
      ++s.buffers;
    }
    for (auto& [source, s] : by_source) result_.by_source.push_back(std::move(s));
    std::stable_sort(result_.by_source.begin(), result_.by_source.end(),
                     [](const SourceLineChange& x, const SourceLineChange& y) {
                       return std::abs(x.delta) > std::abs(y.delta);
                     });
    result_.change_count = static_cast<int64_t>(found_.size());
    listed_ = request_.max_changes >= 0 ? std::min(found_.size(), static_cast<size_t>(request_.max_changes))
                                        : found_.size();
    for (size_t i = 0; i < listed_; ++i) {
      for (const Buffer* b : {found_[i].cur, found_[i].base}) {
        if (b) texts.Want(InternedTextReader::kShape, b->shape_id);
      }
      WantCurrentElseBaseline(found_[i], texts, InternedTextReader::kOpName, &Origin::op_name_id);
    }
  }

  // 4. The listed changes, described; the attribution is done.
  Attribution List(InternedTextReader& texts) {
    result_.changes.reserve(listed_);
    for (size_t i = 0; i < listed_; ++i) result_.changes.push_back(Describe(found_[i], texts, origins_));
    return std::move(result_);
  }

 private:
  // The text CurrentElseBaseline will read: the current side's, and the baseline's where the current side has
  // none (an id of -1). (A text that reads "" under an id is read alone, then.)
  void WantCurrentElseBaseline(const FoundChange& f, InternedTextReader& texts, InternedTextReader::Kind kind,
                               int64_t Origin::*id) {
    const int64_t current = f.cur ? origins_.Of(*f.cur).*id : -1;
    texts.Want(kind, current >= 0 || !f.base ? current : origins_.Of(*f.base).*id);
  }

  const AttributionPair& request_;
  std::vector<Buffer> base_, cur_;
  InstructionOrigins origins_;
  std::vector<FoundChange> found_;
  size_t listed_ = 0;
  Attribution result_;
};

// Attributes pairs[first, last): their buffers, a statement for all of a scope, then the stages in step.
void AttributeGroup(Database& db, const std::vector<AttributionPair>& pairs, size_t first, size_t last,
                    const std::unordered_map<int64_t, ModuleFigures>& figures, InternedTextReader& texts,
                    std::vector<Attribution>* out) {
  // By scope (values, peak buffers): the modules to read, and how many pairs use each. Each pair marks its
  // own buffers: a module's go to its last pair, copies to the others.
  auto scope_of = [&](size_t i) { return pairs[i].scope == AttributionScope::kPeakBuffers ? 1 : 0; };
  std::vector<int64_t> ids[2];
  std::unordered_map<int64_t, int> uses[2];
  for (size_t i = first; i < last; ++i) {
    for (int64_t id : {pairs[i].baseline_module_id, pairs[i].current_module_id}) {
      ids[scope_of(i)].push_back(id);
      ++uses[scope_of(i)][id];
    }
  }
  std::unordered_map<int64_t, std::vector<Buffer>> buffers[2];
  for (int scope : {0, 1}) {
    SortUnique(ids[scope]);
    buffers[scope] = ReadBuffers(db, ids[scope], scope ? AttributionScope::kPeakBuffers : AttributionScope::kValues);
  }
  auto buffers_of = [&](int scope, int64_t id) {
    auto it = buffers[scope].find(id);
    if (it == buffers[scope].end()) return std::vector<Buffer>();
    return --uses[scope][id] == 0 ? std::move(it->second) : it->second;
  };
  auto figures_of = [&](int64_t id) -> const ModuleFigures* {
    auto it = figures.find(id);
    return it == figures.end() ? nullptr : &it->second;
  };
  std::deque<PairAttribution> group;  // a deque: its elements stay where they are made
  for (size_t i = first; i < last; ++i) {
    group.emplace_back(pairs[i], buffers_of(scope_of(i), pairs[i].baseline_module_id),
                       buffers_of(scope_of(i), pairs[i].current_module_id), db.statements());
    group.back().SetFigures(figures_of(pairs[i].baseline_module_id), figures_of(pairs[i].current_module_id));
  }
  for (PairAttribution& p : group) p.PairByName(texts);
  texts.ReadWanted();
  for (PairAttribution& p : group) p.PairByOrigin(texts);
  texts.ReadWanted();
  for (PairAttribution& p : group) p.SumBySource(texts);
  texts.ReadWanted();
  for (PairAttribution& p : group) out->push_back(p.List(texts));
}

}  // namespace

const char* AttributionScopeName(AttributionScope scope) {
  return scope == AttributionScope::kPeakBuffers ? "peak_buffers" : "values";
}

StatusOr<std::vector<Attribution>> AttributeChanges(Database& db, const std::vector<AttributionPair>& pairs,
                                                    int64_t values_per_group) {
  return CatchSqlErrors("attributing modules' changes", [&]() -> StatusOr<std::vector<Attribution>> {
    std::vector<int64_t> module_ids;
    for (const AttributionPair& p : pairs) {
      module_ids.push_back(p.baseline_module_id);
      module_ids.push_back(p.current_module_id);
    }
    SortUnique(module_ids);
    const std::unordered_map<int64_t, ModuleFigures> figures = ReadFigures(db, module_ids);
    // A module's weight in a group: its values (a module without a summary row has none).
    auto values_of = [&](int64_t id) -> int64_t {
      auto it = figures.find(id);
      return it == figures.end() ? 0 : std::max<int64_t>(0, it->second.value_count);
    };
    InternedTextReader texts(db);
    std::vector<Attribution> out;
    out.reserve(pairs.size());
    for (size_t first = 0; first < pairs.size();) {
      size_t last = first;
      int64_t values = 0;
      while (last < pairs.size()) {
        const int64_t more = values_of(pairs[last].baseline_module_id) + values_of(pairs[last].current_module_id);
        if (last > first && values + more > values_per_group) break;
        values += more;
        ++last;
      }
      AttributeGroup(db, pairs, first, last, figures, texts, &out);
      first = last;
    }
    return out;
  });
}

StatusOr<Attribution> AttributeChange(Database& db, int64_t baseline_module_id, int64_t current_module_id,
                                      AttributionScope scope, int64_t max_changes) {
  auto attributions = AttributeChanges(db, {{baseline_module_id, current_module_id, scope, max_changes}});
  if (!attributions.ok()) return attributions.status();
  return std::move(attributions->front());
}

}  // namespace xladb::store
