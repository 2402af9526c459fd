#include "store/run_writer.h"

#include <xxhash.h>

#include <SQLiteCpp/SQLiteCpp.h>
#include <sqlite3.h>

#include <charconv>
#include <chrono>
#include <climits>
#include <cstdio>
#include <optional>
#include <set>
#include <span>
#include <string>
#include <string_view>
#include <tuple>
#include <unordered_map>

#include "ingest/arena_string_map.h"
#include "ingest/run_name.h"
#include "store/interned_texts.h"
#include "store/module_facts.h"
#include "store/row_tables.h"
#include "store/run_summary.h"
#include "store/shape_text.h"
#include "store/unix_time.h"
#include "store/value_key_index.h"

namespace xladb::store {

// The stored hash of a file that must be read again (its module was rebuilt): never a content hash, so the
// file is "changed"; replacing it then does not rebuild the module once more.
const std::string kRereadHashPrefix = "reread:";

using ingest::IssueRecord;

namespace {

constexpr size_t kMaxStoredIssuesPerFile = 1000;


const char* SeverityName(IssueRecord::Severity s) {
  switch (s) {
    case IssueRecord::Severity::kUnknownLine: return "unknown_line";
    case IssueRecord::Severity::kInvariant: return "invariant";
    case IssueRecord::Severity::kWarning: return "warning";
    case IssueRecord::Severity::kError: return "error";
  }
  return "warning";
}

// Appends `s` as a JSON string literal: runs of plain bytes are copied whole.
void AppendJsonString(std::string* out, std::string_view s) {
  out->push_back('"');
  size_t run = 0;
  for (size_t i = 0; i < s.size(); ++i) {
    const auto c = static_cast<unsigned char>(s[i]);
    if (c >= 0x20 && c != '"' && c != '\\') continue;
    out->append(s.data() + run, i - run);
    run = i + 1;
    if (c == '"') {
      out->append("\\\"");
    } else if (c == '\\') {
      out->append("\\\\");
    } else {
      char buf[8];
      std::snprintf(buf, sizeof buf, "\\u%04x", c);
      out->append(buf);
    }
  }
  out->append(s.data() + run, s.size() - run);
  out->push_back('"');
}

std::string FormatPercent(double p) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%g", p);
  return buf;
}

std::string HexU64(uint64_t v) {
  char buf[17];
  std::snprintf(buf, sizeof buf, "%016llx", static_cast<unsigned long long>(v));
  return buf;
}

// The columns of one buffer_values row a record knows; WriteValue merges it into the stored row (COALESCE),
// so a value's ` value:` line and Used-values block may arrive in different files. The texts are views of the
// record being handled (or of the writer's buffers); WriteValue copies them into its batch.
struct ValueRow {
  std::string_view instruction;
  std::string_view shape_index;
  bool is_phi = false;
  std::optional<int32_t> color, cross_color;
  std::optional<int64_t> allocation_index, offset, size, shape_id;
  std::optional<std::string_view> positions, uses;  // JSON
  const char* uses_state = nullptr;
};

// ` value:` lines waiting for their Used-values block, by value id, so that a value is written once,
// complete, when its block arrives (the block comes later in the file, in id order, while the value lines
// come in allocation order). Slots live in chunks of 65,536 ids, each freed once none of its values waits
// (blocks arrive in id order, so the chunks empty one after another), and names in a ByteArena: about 40
// bytes plus the name per value, and nothing is copied as it grows.
class PendingValues {
 public:
  struct Slot {
    int64_t offset = -1, size = -1;
    const char* name = nullptr;  // ByteArena record: {instruction size}, instruction + shape index
    int32_t allocation_index = -1, shape_id = -1;
    int8_t color = -1, cross_color = -1;
    bool present = false, is_phi = false;
  };

  // True when the values of a line fit a slot; otherwise the writer stores the line at once.
  static bool Fits(int64_t allocation_index, int64_t shape_id, int32_t color) {
    return allocation_index >= 0 && allocation_index <= INT32_MAX && shape_id >= 0 && shape_id <= INT32_MAX &&
           color >= -1 && color <= INT8_MAX;
  }

  // The slot of `id`, or nullptr when ids are too sparse to index (garbage input) or, unless `create`, when
  // its chunk holds no waiting value.
  Slot* Get(int64_t id, bool create) {
    if (id < 0 || id > 4 * count_ + (int64_t{1} << 20)) return nullptr;
    const auto chunk = static_cast<size_t>(id) >> kChunkBits;
    if (chunk >= chunks_.size()) {
      if (!create) return nullptr;
      chunks_.resize(chunk + 1);
      chunk_waiting_.resize(chunk + 1, 0);
    }
    if (!chunks_[chunk]) {
      if (!create) return nullptr;
      chunks_[chunk] = std::make_unique<Slot[]>(size_t{1} << kChunkBits);
    }
    return &chunks_[chunk][static_cast<size_t>(id) & ((size_t{1} << kChunkBits) - 1)];
  }

  void Fill(int64_t id, Slot* slot, const ingest::ValueRef& v) {
    slot->present = true;
    ++count_;
    ++waiting_;
    ++chunk_waiting_[static_cast<size_t>(id) >> kChunkBits];
    std::string& joined = scratch_;
    joined.assign(v.instruction).append(v.shape_index);
    slot->name = names_.Append({v.instruction.size()}, joined);
  }

  // The instruction and shape index of a filled slot (views into the arena, valid until Clear()).
  std::pair<std::string_view, std::string_view> Name(const Slot& slot) const {
    uint64_t instruction_size = 0;
    std::string_view joined = ingest::ByteArena::Read(slot.name, std::span<uint64_t>(&instruction_size, 1));
    return {joined.substr(0, instruction_size), joined.substr(instruction_size)};
  }

  // Marks the slot of `id` taken, freeing its chunk once no value of it waits, and everything once no
  // value waits at all.
  void Take(int64_t id, Slot* slot) {
    slot->present = false;
    const auto chunk = static_cast<size_t>(id) >> kChunkBits;
    if (--chunk_waiting_[chunk] == 0) chunks_[chunk].reset();
    if (--waiting_ == 0) Clear();
  }

  template <typename Fn>
  void ForEachWaiting(Fn&& fn) {
    for (size_t c = 0; c < chunks_.size(); ++c) {
      if (!chunks_[c]) continue;
      for (size_t i = 0; i < (size_t{1} << kChunkBits); ++i) {
        if (chunks_[c][i].present) fn(static_cast<int64_t>((c << kChunkBits) + i), chunks_[c][i]);
      }
    }
  }

  void Clear() {
    std::vector<std::unique_ptr<Slot[]>>().swap(chunks_);
    std::vector<uint32_t>().swap(chunk_waiting_);
    names_.Clear();
    waiting_ = 0;
  }
  void Reset() {
    Clear();
    count_ = 0;
  }

 private:
  static constexpr int kChunkBits = 10;  // 1,024 slots (40 KiB): a small module zeroes and scans one chunk, not 2.6 MB
  std::vector<std::unique_ptr<Slot[]>> chunks_;
  std::vector<uint32_t> chunk_waiting_;  // filled, not yet taken slots per chunk
  ingest::ByteArena names_;
  std::string scratch_;
  int64_t count_ = 0;    // slots filled in this file (bounds how sparse an id may be)
  int64_t waiting_ = 0;  // slots filled and not taken yet
};

// The columns of one instructions row; unset fields leave what another file wrote.
struct InstructionRow {
  std::optional<std::string> opcode, op_type, fusion_kind, custom_call_target;
  std::optional<int64_t> computation_id, shape_id, op_name_id, source_file_id, source_line, sequence_index, text_id;
  std::optional<bool> is_root;
};

// Binds text without copying it: `text` must stay valid until the statement is stepped.
void BindText(SQLite::Statement& st, int i, const std::string& text) { st.bindNoCopy(i, text); }

template <typename T>
void BindOpt(SQLite::Statement& st, int i, const std::optional<T>& v) {
  if (!v) {
    st.bind(i);
  } else if constexpr (std::is_same_v<T, std::string>) {
    st.bind(i, *v);  // copied: callers pass temporaries
  } else if constexpr (std::is_same_v<T, bool>) {
    st.bind(i, *v ? 1 : 0);
  } else {
    st.bind(i, static_cast<int64_t>(*v));
  }
}

template <typename T>
void Merge(std::optional<T>& into, std::optional<T>&& from) {
  if (from) into = std::move(from);
}

std::optional<std::string> NonEmpty(std::string&& s) {
  if (s.empty()) return std::nullopt;
  return std::move(s);
}

std::optional<int64_t> NonNegative(int64_t v) {
  if (v < 0) return std::nullopt;
  return v;
}

}  // namespace

// Rows of a table that a dump fills by the million (values, live ranges, the schedule), inserted
// kBatchRows at a time by one multi-row INSERT: SQLite's cost per statement (binding, stepping, setting up
// the program) is paid once per batch instead of once per row. Texts are copied in, so a row may be added
// from a record that is gone before the batch is written.
class RowBatch {
 public:
  static constexpr int kBatchRows = 64;
  static constexpr size_t kKeptTextBytes = 4096;

  // `head` is `INSERT INTO t(c1, …, cN) VALUES `, `tail` what follows the values (e.g. an ON CONFLICT
  // clause), `columns` is N.
  RowBatch(std::string head, std::string tail, int columns)
      : head_(std::move(head)), tail_(std::move(tail)), columns_(columns) {}

  void Int(int64_t v) { cells_.push_back({v, Kind::kInt}); }
  void Null() { cells_.push_back({0, Kind::kNull}); }
  template <typename T>
  void Opt(const std::optional<T>& v) {
    if (v) Int(static_cast<int64_t>(*v)); else Null();
  }
  void Text(std::string_view v) {
    if (texts_used_ == texts_.size()) texts_.emplace_back();
    texts_[texts_used_].assign(v);  // reuses the string's buffer from earlier batches
    cells_.push_back({static_cast<int64_t>(texts_used_++), Kind::kText});
  }
  // Call after the row's `columns` values; writes a full batch. Returns the rows SQLite changed.
  int64_t EndRow(SQLite::Database& sql) {
    return cells_.size() >= static_cast<size_t>(kBatchRows * columns_) ? Flush(sql) : 0;
  }
  // Writes the rows held; returns the rows SQLite changed.
  int64_t Flush(SQLite::Database& sql) {
    const size_t rows = cells_.size() / static_cast<size_t>(columns_);
    int64_t changed = 0;
    size_t done = 0;
    while (done < rows) {
      const bool full = rows - done >= static_cast<size_t>(kBatchRows);
      SQLite::Statement& st = Statement(sql, full ? kBatchRows : 1);
      const size_t n = full ? kBatchRows : 1;
      for (size_t c = 0; c < n * static_cast<size_t>(columns_); ++c) {
        const Cell& cell = cells_[done * static_cast<size_t>(columns_) + c];
        const int index = static_cast<int>(c) + 1;
        switch (cell.kind) {
          case Kind::kInt: st.bind(index, cell.value); break;
          case Kind::kText: st.bindNoCopy(index, texts_[static_cast<size_t>(cell.value)]); break;
          case Kind::kNull: st.bind(index); break;
        }
      }
      changed += st.exec();
      st.reset();
      done += n;
    }
    Clear();
    return changed;
  }
  void Clear() {
    cells_.clear();
    // Buffers are kept for the next batch, except a rare big one (a value used thousands of times).
    for (size_t i = 0; i < texts_used_; ++i) {
      if (texts_[i].capacity() > kKeptTextBytes) std::string().swap(texts_[i]);
    }
    texts_used_ = 0;
  }

 private:
  enum class Kind : uint8_t { kInt, kText, kNull };
  struct Cell {
    int64_t value;  // the integer, or the text's index in texts_
    Kind kind;
  };

  SQLite::Statement& Statement(SQLite::Database& sql, int rows) {
    std::unique_ptr<SQLite::Statement>& st = rows == 1 ? one_ : batch_;
    if (!st) {
      std::string text = head_;
      std::string tuple = "(?";
      for (int c = 1; c < columns_; ++c) tuple += ",?";
      tuple += ")";
      for (int r = 0; r < rows; ++r) text += (r ? "," : "") + tuple;
      st = std::make_unique<SQLite::Statement>(sql, text + tail_);
    }
    return *st;
  }

  std::string head_, tail_;
  int columns_;
  std::vector<Cell> cells_;
  std::vector<std::string> texts_;
  size_t texts_used_ = 0;
  std::unique_ptr<SQLite::Statement> one_, batch_;
};

// "DELETE FROM <table> WHERE <key> = ?" for each table (store/row_tables.h).
std::vector<std::string> DeleteTexts(std::span<const char* const> tables, const char* key) {
  std::vector<std::string> texts;
  for (const char* t : tables) texts.push_back(std::string("DELETE FROM ") + t + " WHERE " + key + " = ?");
  return texts;
}

// The statements that remove a module's parsed rows with what was derived from them, and a file's rows with
// its dump_files row (last: the others name it). Built once: the strings live for the program, so Impl::Cached (keyed by the text's
// address) prepares each statement once.
const std::vector<std::string>& ModuleRowDeletes() {
  static const std::vector<std::string> texts = [] {
    std::vector<std::string> all = DeleteTexts(kModuleRowTables, "module_id");
    for (std::string& t : DeleteTexts(kModuleDerivedTables, "module_id")) all.push_back(std::move(t));
    return all;
  }();
  return texts;
}
const std::vector<std::string>& FileRowDeletes() {
  static const std::vector<std::string> texts = [] {
    std::vector<std::string> all = DeleteTexts(kModuleRowTables, "file_id");
    for (std::string& t : DeleteTexts(kFileRowTables, "file_id")) all.push_back(std::move(t));
    all.push_back("DELETE FROM dump_files WHERE file_id = ?");
    return all;
  }();
  return texts;
}

struct RunWriter::Impl {
  explicit Impl(Database* database) : db(database), sql(database->sql()), derived_facts(database->sql()) {}

  Database* db;
  SQLite::Database& sql;
  DerivedModuleFacts derived_facts;  // recomputed when a file changed what they are computed from

  RowBatch value_rows{"INSERT INTO buffer_values(module_id, value_id, instruction, shape_index, is_phi, color, "
                      "allocation_index, offset_bytes, size_bytes, shape_id, positions, uses, uses_state, "
                      "cross_color, file_id) VALUES ",
                      " ON CONFLICT(module_id, value_id) DO UPDATE SET "
                      "is_phi = MAX(is_phi, excluded.is_phi), color = COALESCE(excluded.color, color), "
                      "allocation_index = COALESCE(excluded.allocation_index, allocation_index), "
                      "offset_bytes = COALESCE(excluded.offset_bytes, offset_bytes), "
                      "size_bytes = COALESCE(excluded.size_bytes, size_bytes), "
                      "shape_id = COALESCE(excluded.shape_id, shape_id), "
                      "positions = COALESCE(excluded.positions, positions), "
                      "uses = COALESCE(excluded.uses, uses), uses_state = COALESCE(excluded.uses_state, uses_state), "
                      "cross_color = COALESCE(excluded.cross_color, cross_color)",
                      15};
  RowBatch live_range_rows{"INSERT INTO buffer_live_ranges(module_id, value_id, live_start, live_end, file_id) VALUES ",
                           " ON CONFLICT(module_id, value_id) DO UPDATE SET live_start = excluded.live_start, "
                           "live_end = excluded.live_end, file_id = excluded.file_id",
                           5};
  RowBatch schedule_rows{"INSERT INTO schedule(module_id, time, instruction, file_id) VALUES ",
                         " ON CONFLICT(module_id, time) DO UPDATE SET instruction = excluded.instruction, "
                         "file_id = excluded.file_id",
                         4};

  // The statement for `text`, prepared on first use and kept for the writer's life (per-row statements run
  // millions of times a file, per-file ones thousands of times a run), returned reset and unbound. `text`
  // must be a string literal: its address is the key, so finding a statement costs no hashing of its SQL.
  // A SELECT that is not read to the end must be reset by its caller, so it holds no snapshot.
  SQLite::Statement& Cached(const char* text) {
    auto& st = cached_statements[text];
    if (!st) {
      st = std::make_unique<SQLite::Statement>(sql, text);
    } else {
      st->tryReset();
      st->clearBindings();
    }
    return *st;
  }
  std::unordered_map<const char*, std::unique_ptr<SQLite::Statement>> cached_statements;

  // Caches that outlive a file; entries added inside an aborted transaction are dropped again.
  InternedTexts shapes{"shapes", "shape_id", "text", InternedTexts::Key::kText};
  InternedTexts source_files{"source_files", "source_file_id", "path", InternedTexts::Key::kText};
  InternedTexts names{"names", "name_id", "text", InternedTexts::Key::kHash};
  // What a file's end, its abort, a group's commit and its rollback mean for every cache of interned ids.
  void ForEachInterned(void (InternedTexts::*step)()) {
    for (InternedTexts* cache : {&shapes, &source_files, &names}) (cache->*step)();
  }

  // Per-file state.
  bool in_file = false;

  // Group commit: files share one transaction until kGroupSeconds or kGroupBytes of files have gone by, each
  // file inside a savepoint of its own (rolled back alone when it fails). A crash loses the open group only,
  // whole files all of them, and a rerun ingests them again.
  std::vector<int64_t> rebuilt_modules;  // modules RebuildModuleIfShared cleared in this run
  GroupCommit group;
  bool in_group = false;
  std::chrono::steady_clock::time_point group_started;
  int64_t group_bytes = 0, group_files = 0;
  std::string group_failure;  // set when a group's COMMIT failed: its files are gone; the run must stop
  std::set<int64_t> group_runs;  // runs with files in the open group: their summaries are recounted at COMMIT

  void OpenGroup() {
    if (in_group) return;
    sql.exec("BEGIN IMMEDIATE");
    in_group = true;
    group_started = std::chrono::steady_clock::now();
    group_bytes = group_files = 0;
  }
  // Commits the open group; on failure rolls it back and remembers why (group_failure).
  Status CloseGroup() {
    if (!in_group) return Status::Ok();
    in_group = false;
    try {
      for (int64_t run_id : group_runs) UpdateRunSummary(sql, run_id);
      group_runs.clear();
      sql.exec("COMMIT");
      ForEachInterned(&InternedTexts::GroupCommitted);
      return Status::Ok();
    } catch (const std::exception& e) {
      RollBackGroup();
      group_failure = "committing the last " + std::to_string(group_files) +
                      " files failed, so they are not stored (a rerun ingests them): " + e.what();
      return Status::IoError(group_failure);
    }
  }
  // Abandons the open group: its files are gone, and with them the run summaries and interned ids it held.
  void RollBackGroup() {
    try {
      sql.exec("ROLLBACK");
    } catch (...) {
    }
    in_group = false;
    group_runs.clear();
    ForEachInterned(&InternedTexts::GroupAborted);
  }
  Status CloseGroupIfDue(int64_t file_bytes) {
    group_bytes += file_bytes;
    ++group_files;
    const double open_for =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - group_started).count();
    return open_for >= group.max_seconds || group_bytes >= group.max_bytes ? CloseGroup() : Status::Ok();
  }
  FileSpec spec;
  int64_t file_id = 0;
  int64_t module_id = 0;  // 0: none
  Status error;  // first database error inside a callback
  int64_t rows = 0;
  std::vector<IssueRecord> issues;
  int64_t issue_total = 0;
  bool module_is_new = false;  // created by this file: no rows of it are stored yet
  ValueKeyIndex value_keys;     // this file's values (and, once needed, the module's stored ones)
  bool value_keys_loaded = false;
  PendingValues pending;
  std::string positions_json, uses_json;  // reused buffers
  std::vector<ingest::PeakBufferRecord> peak_buffers;
  std::vector<ingest::LiveRangeRecord> unmatched_live_ranges;
  std::optional<int64_t> total_bytes, schedule_length, peak_time, stack_peak;
  std::optional<uint64_t> hlo_fingerprint;
  uint64_t value_fingerprint = 0;  // order-independent sum of per-value hashes
  bool saw_allocated_values = false;
  bool saw_utilization_counters = false;
  // The file added or replaced rows the derived facts are computed from (store/module_facts.h): allocations,
  // values, live ranges, or a new module.
  bool derived_facts_stale = false;

  void ResetFile() {
    in_file = false;
    file_id = 0;
    module_id = 0;
    error = Status::Ok();
    rows = 0;
    issues.clear();
    issue_total = 0;
    module_is_new = false;
    value_rows.Clear();
    live_range_rows.Clear();
    schedule_rows.Clear();
    value_keys.Clear();
    value_keys_loaded = false;
    pending.Reset();
    peak_buffers.clear();
    unmatched_live_ranges.clear();
    total_bytes.reset();
    schedule_length.reset();
    peak_time.reset();
    stack_peak.reset();
    hlo_fingerprint.reset();
    value_fingerprint = 0;
    saw_allocated_values = false;
    saw_utilization_counters = false;
    derived_facts_stale = false;
    ForEachInterned(&InternedTexts::FileDone);
  }

  // Runs `fn`, turning an exception from SQLiteCpp into the remembered error.
  template <typename Fn>
  void Guard(Fn&& fn) {
    if (!error.ok()) return;
    try {
      fn();
    } catch (const std::exception& e) {
      error = Status::IoError(std::string("database write failed: ") + e.what());
    }
  }

  void AddIssue(IssueRecord::Severity severity, int64_t line, std::string reason) {
    IssueRecord r;
    r.severity = severity;
    r.line = line;
    r.reason = std::move(reason);
    ++issue_total;
    if (issues.size() < kMaxStoredIssuesPerFile) issues.push_back(std::move(r));
  }

  int64_t ShapeId(const std::string& text) { return shapes.Id(sql, text); }
  int64_t SourceFileId(const std::string& path) { return source_files.Id(sql, path); }
  int64_t NameId(const std::string& name) { return names.Id(sql, name); }

  // Stores `text` once (found by its hash) and returns its text_id.
  int64_t TextId(const std::string& text) {
    const int64_t hash = TextHash(text);
    auto& ins = Cached("INSERT INTO long_texts(hash, text) VALUES (?, ?) ON CONFLICT DO NOTHING");
    ins.bind(1, hash);
    BindText(ins, 2, text);
    const int inserted = ins.exec();
    ins.reset();
    if (inserted > 0) {
      ++rows;
      return sql.getLastInsertRowid();
    }
    auto& find = Cached("SELECT text_id FROM long_texts WHERE hash = ?");  // stored by another file
    find.bind(1, hash);
    find.executeStep();
    const int64_t id = find.getColumn(0).getInt64();
    find.reset();
    return id;
  }

  // Finds the value id for (instruction, shape_index): first among this file's values, then (for split
  // files) among the module's stored values.
  std::optional<int64_t> FindValue(std::string_view instruction, std::string_view shape_index) {
    const uint64_t key = ValueKeyIndex::Key(instruction, shape_index);
    if (auto id = value_keys.Find(key)) return id;
    if (!value_keys_loaded && !module_is_new && module_id != 0) {
      value_keys_loaded = true;
      SQLite::Statement q(sql, "SELECT value_id, instruction, shape_index FROM buffer_values WHERE module_id = ?");
      q.bind(1, module_id);
      while (q.executeStep()) {
        value_keys.Add(q.getColumn(0).getInt64(),
                       ValueKeyIndex::Key(q.getColumn(1).getString(), q.getColumn(2).getString()));
      }
      return value_keys.Find(key);
    }
    return std::nullopt;
  }

  void FindOrCreateModule() {
    const ModuleKey& key = spec.module;
    SQLite::Statement& find =
        Cached("SELECT module_id, backend FROM modules WHERE run_id = ? AND name = ? AND stage = ? "
               "AND xla_module_id IS ? AND folder = ?");
    find.bind(1, spec.run_id);
    find.bind(2, key.name);
    find.bind(3, key.stage);
    if (key.xla_module_id >= 0) find.bind(4, key.xla_module_id); else find.bind(4);
    find.bind(5, key.folder);
    if (find.executeStep()) {
      module_id = find.getColumn(0).getInt64();
      const bool backend_unknown = find.getColumn(1).getString().empty();
      find.reset();
      if (backend_unknown && !key.backend.empty()) {
        SQLite::Statement& up = Cached("UPDATE modules SET backend = ? WHERE module_id = ?");
        up.bind(1, key.backend);
        up.bind(2, module_id);
        up.exec();
      }
      return;
    }
    find.reset();
    SQLite::Statement& ins =
        Cached("INSERT INTO modules(run_id, xla_module_id, name, stage, backend, folder) VALUES (?, ?, ?, ?, ?, ?)");
    ins.bind(1, spec.run_id);
    if (key.xla_module_id >= 0) ins.bind(2, key.xla_module_id); else ins.bind(2);
    ins.bind(3, key.name);
    ins.bind(4, key.stage);
    ins.bind(5, key.backend);
    ins.bind(6, key.folder);
    ins.exec();
    module_id = sql.getLastInsertRowid();
    module_is_new = true;
    SQLite::Statement& sum = Cached("INSERT INTO module_summary(module_id) VALUES (?)");
    sum.bind(1, module_id);
    sum.exec();
  }

  // A module other files also wrote to: its merged rows carry one file id each, so they all go, and the
  // other files are marked (their hash prefixed) to be read again in the driver's second pass. False when
  // the replaced file is the module's only one.
  bool RebuildModuleIfShared(int64_t module, int64_t replaced_file_id) {
    SQLite::Statement& siblings = Cached("SELECT COUNT(*) FROM dump_files WHERE module_id = ? AND file_id <> ?");
    siblings.bind(1, module);
    siblings.bind(2, replaced_file_id);
    const bool shared = siblings.executeStep() && siblings.getColumn(0).getInt64() > 0;
    siblings.reset();
    if (!shared) return false;
    ClearModuleRows(module);
    SQLite::Statement& mark = Cached("UPDATE dump_files SET content_hash = 'reread:' || content_hash "
                                     "WHERE module_id = ? AND file_id <> ?");
    mark.bind(1, module);
    mark.bind(2, replaced_file_id);
    mark.exec();
    rebuilt_modules.push_back(module);
    return true;
  }

  // Merges are last-writer-wins, so a module is rebuilt right only when its files are read in walk order.
  // Siblings the walk met after the replaced file were read again in that order already; a module with a
  // sibling still marked (the walk had passed it) is cleared again and all its files marked, for the driver's
  // second pass to read them all in order. True when that pass is needed.
  bool ScheduleSecondPass() {
    bool needed = false;
    for (int64_t module : rebuilt_modules) {
      SQLite::Statement& left = Cached("SELECT COUNT(*) FROM dump_files WHERE module_id = ? "
                                       "AND content_hash LIKE 'reread:%'");
      left.bind(1, module);
      const bool pending = left.executeStep() && left.getColumn(0).getInt64() > 0;
      left.reset();
      if (!pending) continue;
      ClearModuleRows(module);
      SQLite::Statement& mark = Cached("UPDATE dump_files SET content_hash = 'reread:' || content_hash "
                                       "WHERE module_id = ? AND content_hash NOT LIKE 'reread:%'");
      mark.bind(1, module);
      mark.exec();
      needed = true;
    }
    rebuilt_modules.clear();
    return needed;
  }

  // Removes the stored version of the file at `s`'s path, if any, with every row it wrote. A module it shared
  // with other files is cleared for a rebuild (RebuildModuleIfShared); one it wrote alone goes too when
  // `drop_lone_module`. A file being read again (its hash marked) has had its module cleared already. Returns
  // the stored version's kind, nullopt when there was none.
  std::optional<std::string> RemoveStoredVersion(const FileSpec& s, bool drop_lone_module) {
    SQLite::Statement& old =
        Cached("SELECT file_id, kind, module_id, content_hash FROM dump_files WHERE run_id = ? AND path = ?");
    old.bind(1, s.run_id);
    old.bind(2, s.path);
    if (!old.executeStep()) {
      old.reset();
      return std::nullopt;
    }
    const int64_t old_file_id = old.getColumn(0).getInt64();
    std::string kind = old.getColumn(1).getString();
    const int64_t old_module = old.getColumn(2).isNull() ? 0 : old.getColumn(2).getInt64();  // 0: none
    const bool rereading = old.getColumn(3).getString().rfind(kRereadHashPrefix, 0) == 0;
    old.reset();
    const bool owned = old_module != 0 && !rereading;
    const bool shared = owned && RebuildModuleIfShared(old_module, old_file_id);
    DeleteFileRows(old_file_id);
    if (owned && !shared && drop_lone_module) DropModule(old_module);
    return kind;
  }

  // Runs a statement whose one `?` is the module.
  void ExecForModule(const char* text, int64_t module) {
    SQLite::Statement& st = Cached(text);
    st.bind(1, module);
    st.exec();
  }

  // Clears a module for a rebuild from its files: its rows, and what was computed from them or printed in
  // them (summary, memory spaces, spill summary, fingerprint), which the files read again write anew.
  void ClearModuleRows(int64_t module) {
    for (const std::string& text : ModuleRowDeletes()) ExecForModule(text.c_str(), module);
    ExecForModule("INSERT INTO module_summary(module_id) VALUES (?)", module);
    ExecForModule("UPDATE modules SET fingerprint = NULL, fingerprint_source = NULL WHERE module_id = ?", module);
  }

  // Removes a module that no stored file writes to any more (its only file was replaced by one that could not
  // be read): its rows, derived rows and the module itself, as if it had never been ingested.
  void DropModule(int64_t module) {
    for (const std::string& text : ModuleRowDeletes()) ExecForModule(text.c_str(), module);
    ExecForModule("DELETE FROM modules WHERE module_id = ?", module);
  }

  void DeleteFileRows(int64_t old_file_id) {
    for (const std::string& text : FileRowDeletes()) {
      SQLite::Statement& del = Cached(text.c_str());
      del.bind(1, old_file_id);
      del.exec();
    }
  }

  int64_t InsertFileRow(const FileSpec& s, const FileOutcome& outcome, std::optional<int64_t> module) {
    SQLite::Statement& ins =
        Cached("INSERT INTO dump_files(run_id, path, kind, verdict, reason, size_bytes, content_hash, "
               "mtime_us, module_id, line_count, unknown_lines, issue_count, rows_written, "
               "ingested_at_us) VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?,?)");
    ins.bind(1, s.run_id);
    ins.bind(2, s.path);
    ins.bind(3, s.kind);
    ins.bind(4, outcome.verdict);
    if (outcome.reason.empty()) ins.bind(5); else ins.bind(5, outcome.reason);
    ins.bind(6, s.size_bytes);
    ins.bind(7, s.content_hash);
    if (s.mtime_us >= 0) ins.bind(8, s.mtime_us); else ins.bind(8);
    BindOpt(ins, 9, module);
    ins.bind(10, outcome.line_count);
    ins.bind(11, outcome.unknown_lines);
    ins.bind(12, issue_total);
    ins.bind(13, rows);
    ins.bind(14, UnixMicrosNow());
    ins.exec();
    return sql.getLastInsertRowid();
  }

  void WriteIssues(int64_t fid) {
    auto& st = Cached("INSERT INTO ingest_issues(file_id, line, severity, reason) VALUES (?,?,?,?)");
    for (const auto& issue : issues) {
      st.bind(1, fid);
      st.bind(2, issue.line);
      st.bind(3, SeverityName(issue.severity));
      st.bind(4, issue.reason);
      st.exec();
      st.reset();
    }
  }

  // Writes one value row (merging into a row another file wrote).
  void WriteValue(int64_t id, const ValueRow& v) {
    RowBatch& b = value_rows;
    b.Int(module_id);
    b.Int(id);
    b.Text(v.instruction);
    b.Text(v.shape_index);
    b.Int(v.is_phi ? 1 : 0);
    b.Opt(v.color);
    b.Opt(v.allocation_index);
    b.Opt(v.offset);
    b.Opt(v.size);
    b.Opt(v.shape_id);
    if (v.positions) b.Text(*v.positions); else b.Null();
    if (v.uses) b.Text(*v.uses); else b.Null();
    if (v.uses_state) b.Text(v.uses_state); else b.Null();
    b.Opt(v.cross_color);
    b.Int(file_id);
    rows += b.EndRow(sql);
  }

  // Writes (or replaces) the live range of value `id`.
  void WriteLiveRange(int64_t id, int64_t start, int64_t end) {
    live_range_rows.Int(module_id);
    live_range_rows.Int(id);
    live_range_rows.Int(start);
    live_range_rows.Int(end);
    live_range_rows.Int(file_id);
    rows += live_range_rows.EndRow(sql);
  }

  // Folds the pending ` value:` line of `slot` into `v`.
  void FoldPending(const PendingValues::Slot& slot, ValueRow* v) {
    v->allocation_index = slot.allocation_index;
    v->offset = slot.offset;
    v->size = slot.size;
    v->shape_id = slot.shape_id;
    if (slot.cross_color >= 0) v->cross_color = slot.cross_color;
    if (!v->color && slot.color >= 0) v->color = slot.color;
    v->is_phi = v->is_phi || slot.is_phi;
  }

  // Values still pending at the end of the file (no Used-values block in it), and live ranges of values
  // stored by an earlier file (the split format).
  void FlushValues() {
    pending.ForEachWaiting([&](int64_t id, const PendingValues::Slot& slot) {
      ValueRow v;
      std::tie(v.instruction, v.shape_index) = pending.Name(slot);
      FoldPending(slot, &v);
      WriteValue(id, v);
    });
    pending.Clear();
    for (const auto& lr : unmatched_live_ranges) {
      auto id = FindValue(lr.instruction, lr.shape_index);
      if (!id) {
        AddIssue(IssueRecord::Severity::kWarning, 0,
                 "live range for " + lr.instruction + lr.shape_index + " matches no buffer value of the module");
        continue;
      }
      WriteLiveRange(*id, lr.start, lr.end);
    }
  }

  // Writes (or merges into) one instruction row at once: nothing about instructions is held per file.
  void UpsertInstruction(const std::string& name, const InstructionRow& in) {
    auto& st = Cached("INSERT INTO instructions(module_id, name, computation_id, opcode, shape_id, op_type, "
                      "op_name_id, source_file_id, source_line, fusion_kind, custom_call_target, is_root, "
                      "sequence_index, text_id, file_id) VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?,?,?) "
                      "ON CONFLICT(module_id, name) DO UPDATE SET "
                      "computation_id = COALESCE(excluded.computation_id, computation_id), "
                      "opcode = COALESCE(excluded.opcode, opcode), shape_id = COALESCE(excluded.shape_id, shape_id), "
                      "op_type = COALESCE(excluded.op_type, op_type), "
                      "op_name_id = COALESCE(excluded.op_name_id, op_name_id), "
                      "source_file_id = COALESCE(excluded.source_file_id, source_file_id), "
                      "source_line = COALESCE(excluded.source_line, source_line), "
                      "fusion_kind = COALESCE(excluded.fusion_kind, fusion_kind), "
                      "custom_call_target = COALESCE(excluded.custom_call_target, custom_call_target), "
                      "is_root = COALESCE(excluded.is_root, is_root), "
                      "sequence_index = COALESCE(excluded.sequence_index, sequence_index), "
                      "text_id = COALESCE(excluded.text_id, text_id)");
    st.bind(1, module_id);
    BindText(st, 2, name);
    BindOpt(st, 3, in.computation_id);
    BindOpt(st, 4, in.opcode);
    BindOpt(st, 5, in.shape_id);
    BindOpt(st, 6, in.op_type);
    BindOpt(st, 7, in.op_name_id);
    BindOpt(st, 8, in.source_file_id);
    BindOpt(st, 9, in.source_line);
    BindOpt(st, 10, in.fusion_kind);
    BindOpt(st, 11, in.custom_call_target);
    BindOpt(st, 12, in.is_root);
    BindOpt(st, 13, in.sequence_index);
    BindOpt(st, 14, in.text_id);
    st.bind(15, file_id);
    st.exec();
    st.reset();
    ++rows;
  }

  void WriteScheduleEntry(int64_t time, const std::string& instruction) {
    schedule_rows.Int(module_id);
    schedule_rows.Int(time);
    schedule_rows.Text(instruction);
    schedule_rows.Int(file_id);
    rows += schedule_rows.EndRow(sql);
  }

  // Writes the rows still held in batches; before anything reads their tables, and at commit.
  void FlushBatches() {
    rows += value_rows.Flush(sql);
    rows += live_range_rows.Flush(sql);
    rows += schedule_rows.Flush(sql);
  }

  void FlushPeakBuffers() {
    auto& st = Cached("INSERT INTO peak_buffers(module_id, ordinal, instruction, shape_index, logical_bytes, "
                      "cumulative_bytes, value_id, file_id) VALUES (?,?,?,?,?,?,?,?) "
                      "ON CONFLICT(module_id, ordinal) DO UPDATE SET instruction = excluded.instruction, "
                      "shape_index = excluded.shape_index, logical_bytes = excluded.logical_bytes, "
                      "cumulative_bytes = excluded.cumulative_bytes, value_id = excluded.value_id, "
                      "file_id = excluded.file_id");
    for (const auto& p : peak_buffers) {
      st.bind(1, module_id);
      st.bind(2, p.ordinal);
      st.bind(3, p.instruction);
      st.bind(4, p.shape_index);
      st.bind(5, p.logical_bytes);
      if (p.cumulative_bytes >= 0) st.bind(6, p.cumulative_bytes); else st.bind(6);
      BindOpt(st, 7, FindValue(p.instruction, p.shape_index));
      st.bind(8, file_id);
      st.exec();
      st.reset();
      ++rows;
    }
  }

  // Recomputes the module's kernel_spill_summary rows from its counter lines (all of its reports).
  void UpdateKernelSpills() {
    SQLite::Statement& del = Cached("DELETE FROM kernel_spill_summary WHERE module_id = ?");
    del.bind(1, module_id);
    del.exec();
    SQLite::Statement& ins = Cached(R"sql(
      INSERT INTO kernel_spill_summary(module_id, kernel, run_id, vmem_spills, vmem_fills, smem_spills, smem_fills,
                                       bundles, vmem_spill_rate, vmem_fill_rate, smem_spill_rate, smem_fill_rate)
      SELECT :m, kernel, :run, vs, vf, ss, sf, vs_den,
             COALESCE(1.0 * vs / NULLIF(vs_den, 0), 0), COALESCE(1.0 * vf / NULLIF(vf_den, 0), 0),
             COALESCE(1.0 * ss / NULLIF(ss_den, 0), 0), COALESCE(1.0 * sf / NULLIF(sf_den, 0), 0)
      FROM (SELECT kernel,
                   SUM(CASE WHEN counter = 'VMEM_SPILL_COUNT' THEN numerator ELSE 0 END) AS vs,
                   SUM(CASE WHEN counter = 'VMEM_FILL_COUNT' THEN numerator ELSE 0 END) AS vf,
                   SUM(CASE WHEN counter = 'SMEM_SPILL_COUNT' THEN numerator ELSE 0 END) AS ss,
                   SUM(CASE WHEN counter = 'SMEM_FILL_COUNT' THEN numerator ELSE 0 END) AS sf,
                   SUM(CASE WHEN counter = 'VMEM_SPILL_COUNT' THEN denominator ELSE 0 END) AS vs_den,
                   SUM(CASE WHEN counter = 'VMEM_FILL_COUNT' THEN denominator ELSE 0 END) AS vf_den,
                   SUM(CASE WHEN counter = 'SMEM_SPILL_COUNT' THEN denominator ELSE 0 END) AS ss_den,
                   SUM(CASE WHEN counter = 'SMEM_FILL_COUNT' THEN denominator ELSE 0 END) AS sf_den
            FROM utilization_counters
            WHERE module_id = :m
              AND counter IN ('VMEM_SPILL_COUNT', 'VMEM_FILL_COUNT', 'SMEM_SPILL_COUNT', 'SMEM_FILL_COUNT')
            GROUP BY kernel))sql");
    ins.bind(":m", module_id);
    ins.bind(":run", spec.run_id);
    ins.exec();
  }

  void UpdateModuleFacts() {
    if (module_id == 0) return;
    if (saw_utilization_counters) UpdateKernelSpills();
    SQLite::Statement& up = Cached(
        "UPDATE module_summary SET total_bytes = COALESCE(?, total_bytes), "
        "schedule_length = COALESCE(?, schedule_length), peak_time = COALESCE(?, peak_time), "
        "stack_trace_peak_bytes = COALESCE(?, stack_trace_peak_bytes) WHERE module_id = ?");
    BindOpt(up, 1, total_bytes);
    BindOpt(up, 2, schedule_length);
    BindOpt(up, 3, peak_time);
    BindOpt(up, 4, stack_peak);
    up.bind(5, module_id);
    up.exec();
    // Aggregates, recomputed from the module's rows (a module can span several files).
    SQLite::Statement& agg = Cached(R"sql(
      UPDATE module_summary SET
        allocation_bytes   = (SELECT SUM(size_bytes) FROM allocations WHERE module_id = :m),
        parameter_bytes    = (SELECT COALESCE(SUM(size_bytes), 0) FROM allocations WHERE module_id = :m AND is_parameter = 1),
        output_bytes       = (SELECT COALESCE(SUM(size_bytes), 0) FROM allocations WHERE module_id = :m AND is_maybe_live_out = 1),
        temp_bytes         = (SELECT COALESCE(SUM(size_bytes), 0) FROM allocations WHERE module_id = :m AND is_preallocated_temp = 1),
        constant_bytes     = (SELECT COALESCE(SUM(size_bytes), 0) FROM allocations WHERE module_id = :m AND is_constant = 1),
        thread_local_bytes = (SELECT COALESCE(SUM(size_bytes), 0) FROM allocations WHERE module_id = :m AND is_thread_local = 1),
        allocation_count   = (SELECT COUNT(*) FROM allocations WHERE module_id = :m),
        value_count        = (SELECT COUNT(*) FROM buffer_values WHERE module_id = :m),
        live_range_count   = (SELECT COUNT(*) FROM buffer_live_ranges WHERE module_id = :m),
        peak_bytes         = (SELECT COALESCE(MAX(cumulative_bytes), SUM(logical_bytes)) FROM peak_buffers WHERE module_id = :m),
        peak_buffer_count  = (SELECT COUNT(*) FROM peak_buffers WHERE module_id = :m),
        instruction_count  = (SELECT COUNT(*) FROM instructions WHERE module_id = :m)
      WHERE module_id = :m)sql");
    agg.bind(":m", module_id);
    agg.exec();
    // Fingerprint: the HLO text's when we have it, else one from the buffer assignment's values.
    if (hlo_fingerprint) {
      SQLite::Statement& fp =
          Cached("UPDATE modules SET fingerprint = ?, fingerprint_source = 'hlo_text' WHERE module_id = ?");
      fp.bind(1, HexU64(*hlo_fingerprint));
      fp.bind(2, module_id);
      fp.exec();
    } else if (saw_allocated_values) {
      SQLite::Statement& fp = Cached(
          "UPDATE modules SET fingerprint = ?, fingerprint_source = 'buffer_assignment' "
          "WHERE module_id = ? AND (fingerprint_source IS NULL OR fingerprint_source = 'buffer_assignment')");
      fp.bind(1, HexU64(value_fingerprint));
      fp.bind(2, module_id);
      fp.exec();
    }
    if (derived_facts_stale || saw_allocated_values || module_is_new) derived_facts.Update(module_id);
  }
};

RunWriter::RunWriter(Database* db, GroupCommit group) : impl_(std::make_unique<Impl>(db)) {
  impl_->group = group;
  // The WAL is checkpointed when a run is finished (FinishRun), not in the middle of one.
  try {
    impl_->sql.exec("PRAGMA wal_autocheckpoint = 0");
  } catch (...) {
  }
}
RunWriter::~RunWriter() {
  Impl& d = *impl_;
  try {
    if (d.in_file) d.sql.exec("ROLLBACK TO file; RELEASE file");
    (void)d.CloseGroup();  // the group's whole files were acknowledged: keep them
    d.sql.exec("PRAGMA wal_autocheckpoint = 1000");
  } catch (...) {
  }
}

namespace {

// Why `spec` may not add to the existing run whose source and content digest are given, or "" when it may:
// runs do not merge by accident. The same source again (a re-ingest, a watched folder that grew) is fine;
// another source path, or an upload of other content, needs RunSpec::append.
// Whether two recorded sources are the same one: equal, the same folder spelled another way (a run recorded
// before sources were made canonical: `./x`, a symlink), or an upload into a run that a version before 3
// recorded as plain "upload" (its content decides then, and it recorded none).
bool SameSource(const std::string& recorded, const std::string& incoming) {
  if (recorded == incoming) return true;
  if (recorded == "upload") return incoming.rfind("upload:", 0) == 0;
  if (recorded.empty() || recorded.front() != '/' || incoming.empty() || incoming.front() != '/') return false;
  return ingest::CanonicalSourcePath(recorded) == ingest::CanonicalSourcePath(incoming);
}

std::string RefuseMerge(const RunSpec& spec, const std::string& source, const std::string& digest) {
  if (spec.append) return "";
  if (!SameSource(source, spec.source_path)) {
    return "run '" + spec.name + "' already holds " + source + "; adding " + spec.source_path +
           " to it needs --append (or name another run with --run)";
  }
  if (!digest.empty() && !spec.content_digest.empty() && digest != spec.content_digest) {
    return "run '" + spec.name + "' was uploaded from " + source +
           " before, with other content; adding this upload to it needs --append (or name another run with --run)";
  }
  return "";
}

}  // namespace

StatusOr<int64_t> RunWriter::BeginRun(const RunSpec& spec) {
  auto& sql = impl_->sql;
  if (Status closed = impl_->CloseGroup(); !closed.ok()) return closed;
  impl_->group_failure.clear();  // a failed group ended its own run; this one starts afresh
  impl_->rebuilt_modules.clear();
  try {
    sql.exec("BEGIN IMMEDIATE");
    int64_t run_id = 0;
    int64_t now = UnixMicrosNow();
    // A time label (time=, date=, commit_time=…) sets the run time when --time was not given.
    int64_t time_us = spec.time_us;
    std::string time_source = time_us >= 0 ? "flag" : "";
    {
      SQLite::Statement find(sql, "SELECT run_id, IFNULL(source_path, ''), IFNULL(content_digest, ''), "
                                  "detail_pruned_at_us FROM runs WHERE name = ?");
      find.bind(1, spec.name);
      if (find.executeStep()) {
        run_id = find.getColumn(0).getInt64();
        if (!find.getColumn(3).isNull()) {  // its modules lack the rows new files would merge with
          find.reset();
          sql.exec("ROLLBACK");
          return Status::FailedPrecondition("run '" + spec.name + "' was pruned (xladb prune kept only its "
                                            "summaries); `xladb delete` it to ingest it again");
        }
        std::string refused = RefuseMerge(spec, find.getColumn(1).getString(), find.getColumn(2).getString());
        if (!refused.empty()) {
          find.reset();
          sql.exec("ROLLBACK");
          return Status::FailedPrecondition(refused);
        }
      }
    }
    if (run_id == 0) {
      SQLite::Statement ins(sql,
                            "INSERT INTO runs(name, source_path, run_time_us, run_time_source, created_at_us, "
                            "updated_at_us, content_digest) VALUES (?, ?, ?, ?, ?, ?, ?)");
      ins.bind(1, spec.name);
      ins.bind(2, spec.source_path);
      ins.bind(3, time_us >= 0 ? time_us : now);
      ins.bind(4, time_us >= 0 ? time_source : std::string("ingest_time"));
      ins.bind(5, now);
      ins.bind(6, now);
      if (spec.content_digest.empty()) ins.bind(7); else ins.bind(7, spec.content_digest);
      ins.exec();
      run_id = sql.getLastInsertRowid();
    } else if (time_us >= 0) {
      SQLite::Statement up(sql, "UPDATE runs SET run_time_us = ?, run_time_source = 'flag' WHERE run_id = ?");
      up.bind(1, time_us);
      up.bind(2, run_id);
      up.exec();
    }
    for (const auto& [key, value] : spec.labels) {
      SQLite::Statement lab(sql,
                            "INSERT INTO run_labels(run_id, key, value) VALUES (?, ?, ?) "
                            "ON CONFLICT(run_id, key) DO UPDATE SET value = excluded.value");
      lab.bind(1, run_id);
      lab.bind(2, key);
      lab.bind(3, value);
      lab.exec();
    }
    sql.exec("COMMIT");
    return run_id;
  } catch (const std::exception& e) {
    try {
      sql.exec("ROLLBACK");
    } catch (...) {
    }
    return Status::IoError(std::string("recording run: ") + e.what());
  }
}

StatusOr<RunWriter::FileState> RunWriter::CheckFile(int64_t run_id, const std::string& path,
                                                    const std::string& content_hash) {
  try {
    SQLite::Statement& q =
        impl_->Cached("SELECT content_hash, verdict FROM dump_files WHERE run_id = ? AND path = ?");
    q.bind(1, run_id);
    q.bind(2, path);
    FileState state = FileState::kNew;
    if (q.executeStep()) {
      const std::string stored = q.getColumn(0).getString();
      state = stored == content_hash                         ? FileState::kUnchanged
              : stored == kRereadHashPrefix + content_hash ? FileState::kReread
                                                             : FileState::kChanged;
    }
    q.reset();  // no snapshot held between files
    return state;
  } catch (const std::exception& e) {
    return Status::IoError(std::string("checking file: ") + e.what());
  }
}

Status RunWriter::BeginFile(const FileSpec& spec) {
  Impl& d = *impl_;
  if (d.in_file) return Status::Internal("BeginFile called twice without CommitFile/AbortFile");
  if (!d.group_failure.empty()) return Status::IoError(d.group_failure);
  d.ResetFile();
  d.spec = spec;
  try {
    d.OpenGroup();
    d.group_runs.insert(spec.run_id);
    d.sql.exec("SAVEPOINT file");
    d.in_file = true;
    // The new version writes into the module again, so a module the old one wrote alone stays.
    if (std::optional<std::string> old_kind = d.RemoveStoredVersion(spec, /*drop_lone_module=*/false)) {
      // A replaced utilization report's counters go with it: recompute the module's spill summary.
      if (old_kind->rfind("tpu_", 0) == 0) d.saw_utilization_counters = true;
      d.derived_facts_stale = true;  // the old file's rows go
    }
    if (spec.has_module) d.FindOrCreateModule();
    // Reserve the file id now so rows can reference it; the row is completed at commit.
    FileOutcome pending{"ingesting", "", 0, 0};
    d.file_id = d.InsertFileRow(spec, pending, spec.has_module ? std::optional<int64_t>(d.module_id) : std::nullopt);
    return Status::Ok();
  } catch (const std::exception& e) {
    if (d.in_file) {
      try {
        d.sql.exec("ROLLBACK TO file; RELEASE file");
      } catch (...) {
      }
      d.in_file = false;
    }
    return Status::IoError(std::string("starting file ") + spec.path + ": " + e.what());
  }
}

StatusOr<FileWriteStats> RunWriter::CommitFile(const FileOutcome& outcome) {
  Impl& d = *impl_;
  if (!d.in_file) return Status::Internal("CommitFile without BeginFile");
  d.Guard([&] {
    if (d.module_id != 0) {
      d.FlushValues();
      d.FlushBatches();
      d.FlushPeakBuffers();
      d.UpdateModuleFacts();
    }
    d.WriteIssues(d.file_id);
    SQLite::Statement& up =
        d.Cached("UPDATE dump_files SET verdict = ?, reason = ?, line_count = ?, unknown_lines = ?, "
                 "issue_count = ?, rows_written = ? WHERE file_id = ?");
    up.bind(1, outcome.verdict);
    if (outcome.reason.empty()) up.bind(2); else up.bind(2, outcome.reason);
    up.bind(3, outcome.line_count);
    up.bind(4, outcome.unknown_lines);
    up.bind(5, d.issue_total);
    up.bind(6, d.rows);
    up.bind(7, d.file_id);
    up.exec();
    SQLite::Statement& run = d.Cached("UPDATE runs SET updated_at_us = ? WHERE run_id = ?");
    run.bind(1, UnixMicrosNow());
    run.bind(2, d.spec.run_id);
    run.exec();
    d.sql.exec("RELEASE file");
    d.in_file = false;
  });
  if (!d.error.ok()) {
    // Roll back this file's rows only; the driver records the error verdict with AbortFile (the issues seen
    // so far are kept for it).
    Status err = d.error;
    if (d.in_file) {
      try {
        d.sql.exec("ROLLBACK TO file; RELEASE file");
      } catch (...) {
      }
      d.in_file = false;
    }
    d.error = Status::Ok();
    return err;
  }
  FileWriteStats stats{d.rows, d.issue_total};
  const int64_t file_bytes = d.spec.size_bytes;
  d.ResetFile();
  if (Status closed = d.CloseGroupIfDue(file_bytes); !closed.ok()) return closed;
  return stats;
}

Status RunWriter::AbortFile(const FileOutcome& outcome) {
  Impl& d = *impl_;
  if (d.in_file) {
    try {
      d.sql.exec("ROLLBACK TO file; RELEASE file");
    } catch (...) {
    }
    d.in_file = false;
  }
  if (!d.group_failure.empty()) return Status::IoError(d.group_failure);  // nothing can be recorded now
  d.ForEachInterned(&InternedTexts::FileAborted);
  // Keep the issues seen (they explain the error), drop the rows.
  std::vector<IssueRecord> issues = std::move(d.issues);
  int64_t issue_total = d.issue_total;
  FileSpec spec = d.spec;
  d.ResetFile();
  d.issues = std::move(issues);
  d.issue_total = issue_total;
  Status st = RecordFileWithoutRows(spec, outcome);
  d.ResetFile();
  return st;
}

Status RunWriter::RecordFileWithoutRows(const FileSpec& spec, const FileOutcome& outcome) {
  Impl& d = *impl_;
  if (!d.group_failure.empty()) return Status::IoError(d.group_failure);
  bool in_savepoint = false;
  try {
    d.OpenGroup();
    d.group_runs.insert(spec.run_id);
    d.sql.exec("SAVEPOINT file");
    in_savepoint = true;
    // When the stored version was its module's only file (a dump replaced by an unreadable one), the module
    // goes too, so no summary outlives its rows.
    (void)d.RemoveStoredVersion(spec, /*drop_lone_module=*/true);
    int64_t fid = d.InsertFileRow(spec, outcome, std::nullopt);
    d.WriteIssues(fid);
    d.sql.exec("RELEASE file");
    in_savepoint = false;
  } catch (const std::exception& e) {
    if (in_savepoint) {
      try {
        d.sql.exec("ROLLBACK TO file; RELEASE file");
      } catch (...) {
      }
    }
    return Status::IoError(std::string("recording file ") + spec.path + ": " + e.what());
  }
  return d.CloseGroupIfDue(0);
}

Status RunWriter::FinishRun(int64_t run_id, int64_t newest_mtime_us) {
  if (Status closed = impl_->CloseGroup(); !closed.ok()) return closed;
  if (!impl_->group_failure.empty()) return Status::IoError(impl_->group_failure);
  try {
    SQLite::Statement up(impl_->sql,
                         "UPDATE runs SET run_time_us = ?, run_time_source = 'newest_file_mtime' "
                         "WHERE run_id = ? AND run_time_source IN ('ingest_time', 'newest_file_mtime')");
    up.bind(1, newest_mtime_us);
    up.bind(2, run_id);
    if (newest_mtime_us >= 0) up.exec();
    // The WAL's pages go to the database now, once per run (wal_autocheckpoint is off while writing).
    // PASSIVE: readers are not waited for; what they still use is copied at the next run's end.
    impl_->sql.exec("PRAGMA wal_checkpoint(PASSIVE)");
    return Status::Ok();
  } catch (const std::exception& e) {
    return Status::IoError(std::string("finishing run: ") + e.what());
  }
}

bool RunWriter::TakeRereadRequest() {
  Impl& d = *impl_;
  if (d.rebuilt_modules.empty() || !d.group_failure.empty()) return false;
  try {
    d.OpenGroup();
    return d.ScheduleSecondPass();
  } catch (const std::exception& e) {
    // Like a failed group commit: the open group is rolled back, and the run ends saying why (FinishRun).
    d.RollBackGroup();
    d.group_failure = std::string("rebuilding a module whose file was replaced failed, so the last ") +
                      std::to_string(d.group_files) + " files are not stored (a rerun ingests them): " + e.what();
    return false;
  }
}

Status RunWriter::ApplyRunMetadata(int64_t run_id, const std::vector<std::pair<std::string, std::string>>& labels,
                                   int64_t time_us) {
  Impl& d = *impl_;
  if (!d.group_failure.empty()) return Status::IoError(d.group_failure);
  bool in_savepoint = false;
  try {
    d.OpenGroup();
    d.sql.exec("SAVEPOINT meta");
    in_savepoint = true;
    SQLite::Statement put(d.sql,
                          "INSERT INTO run_labels(run_id, key, value) VALUES (?, ?, ?) "
                          "ON CONFLICT(run_id, key) DO UPDATE SET value = excluded.value");
    for (const auto& [key, value] : labels) {
      put.bind(1, run_id);
      put.bind(2, key);
      put.bind(3, value);
      put.exec();
      put.reset();
    }
    if (time_us >= 0) {
      SQLite::Statement up(d.sql,
                           "UPDATE runs SET run_time_us = ?, run_time_source = 'run_file' "
                           "WHERE run_id = ? AND run_time_source <> 'flag'");
      up.bind(1, time_us);
      up.bind(2, run_id);
      up.exec();
    }
    d.sql.exec("RELEASE meta");
    return Status::Ok();
  } catch (const std::exception& e) {
    if (in_savepoint) {
      try {
        d.sql.exec("ROLLBACK TO meta; RELEASE meta");
      } catch (...) {
      }
    }
    return Status::IoError(std::string("applying the run metadata file: ") + e.what());
  }
}

// ---------------------------------------------------------------------------------------------------
// RecordSink

void RunWriter::OnAllocation(ingest::AllocationRecord&& r) {
  Impl& d = *impl_;
  if (d.module_id == 0) return;
  d.derived_facts_stale = true;
  d.Guard([&] {
    auto& st = d.Cached("INSERT INTO allocations(module_id, allocation_index, size_bytes, color, is_parameter, "
                        "parameter_number, parameter_shape, parameter_shape_index, is_output, output_shape, "
                        "is_constant, is_thread_local, is_maybe_live_out, is_preallocated_temp, address, file_id) "
                        "VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?)");
    st.bind(1, d.module_id);
    st.bind(2, r.index);
    st.bind(3, r.size_bytes);
    st.bind(4, r.color);
    st.bind(5, r.parameter_number >= 0 ? 1 : 0);
    BindOpt(st, 6, NonNegative(r.parameter_number));
    BindOpt(st, 7, NonEmpty(std::move(r.parameter_shape)));
    BindOpt(st, 8, NonEmpty(std::move(r.parameter_shape_index)));
    st.bind(9, r.is_output ? 1 : 0);
    BindOpt(st, 10, NonEmpty(std::move(r.output_shape)));
    st.bind(11, r.is_constant ? 1 : 0);
    st.bind(12, r.is_thread_local ? 1 : 0);
    st.bind(13, r.is_maybe_live_out ? 1 : 0);
    st.bind(14, r.is_preallocated_temp ? 1 : 0);
    BindOpt(st, 15, NonEmpty(std::move(r.address)));
    st.bind(16, d.file_id);
    try {
      st.exec();
      ++d.rows;
    } catch (const SQLite::Exception& e) {
      st.reset();
      if (e.getExtendedErrorCode() == SQLITE_CONSTRAINT_PRIMARYKEY) {
        d.AddIssue(IssueRecord::Severity::kWarning, 0,
                   "allocation " + std::to_string(r.index) + " printed twice; the first one is kept");
        return;
      }
      throw;
    }
    st.reset();
  });
}

// A ValueRow with what a value-short says.
static ValueRow RowOf(const ingest::ValueRef& ref) {
  ValueRow v;
  v.instruction = ref.instruction;
  v.shape_index = ref.shape_index;
  v.is_phi = ref.is_phi;
  if (ref.color >= 0) v.color = ref.color;
  return v;
}

void RunWriter::OnAllocatedValue(ingest::AllocatedValueRecord&& r) {
  Impl& d = *impl_;
  if (d.module_id == 0) return;
  d.Guard([&] {
    d.saw_allocated_values = true;
    const int64_t shape_id = d.ShapeId(r.shape);
    d.value_keys.Add(r.value.id, ValueKeyIndex::Key(r.value.instruction, r.value.shape_index));
    PendingValues::Slot* slot = PendingValues::Fits(r.allocation_index, shape_id, r.value.color)
                                    ? d.pending.Get(r.value.id, /*create=*/true)
                                    : nullptr;
    if (slot == nullptr || slot->present) {  // sparse ids, odd values, or printed twice: write it now
      ValueRow v = RowOf(r.value);
      v.allocation_index = r.allocation_index;
      v.offset = r.offset_bytes;
      v.size = r.size_bytes;
      v.shape_id = shape_id;
      d.WriteValue(r.value.id, v);
    } else {
      slot->allocation_index = static_cast<int32_t>(r.allocation_index);
      slot->offset = r.offset_bytes;
      slot->size = r.size_bytes;
      slot->shape_id = static_cast<int32_t>(shape_id);
      slot->color = static_cast<int8_t>(r.value.color);
      slot->is_phi = r.value.is_phi;
      d.pending.Fill(r.value.id, slot, r.value);
    }
    // Order-independent program fingerprint over (size, shape) of every value.
    uint64_t h = XXH3_64bits_withSeed(r.shape.data(), r.shape.size(), static_cast<uint64_t>(r.size_bytes));
    d.value_fingerprint += h;
  });
}

void RunWriter::OnCrossColorReuse(ingest::CrossColorReuseRecord&& r) {
  Impl& d = *impl_;
  if (d.module_id == 0) return;
  d.Guard([&] {
    PendingValues::Slot* slot = d.pending.Get(r.value.id, /*create=*/false);
    if (slot != nullptr && slot->present && r.color >= 0 && r.color <= INT8_MAX) {
      slot->cross_color = static_cast<int8_t>(r.color);
      return;
    }
    d.value_keys.Add(r.value.id, ValueKeyIndex::Key(r.value.instruction, r.value.shape_index));
    ValueRow v = RowOf(r.value);
    v.cross_color = r.color;
    d.WriteValue(r.value.id, v);
  });
}

void RunWriter::OnTotalBytes(ingest::TotalBytesRecord&& r) { impl_->total_bytes = r.total_bytes; }

void RunWriter::OnValueDetail(ingest::ValueDetailRecord&& r) {
  Impl& d = *impl_;
  if (d.module_id == 0) return;
  // Most values have one position, their own: it is left NULL (value_positions spells it out).
  const bool only_own_position = r.positions.size() == 1 && r.positions[0].instruction == r.value.instruction &&
                                 r.positions[0].shape_index == r.value.shape_index;
  std::string& positions = d.positions_json;
  if (!only_own_position) {
    positions.assign("[");
    for (size_t i = 0; i < r.positions.size(); ++i) {
      if (i) positions.push_back(',');
      positions.push_back('[');
      AppendJsonString(&positions, r.positions[i].instruction);
      positions.push_back(',');
      AppendJsonString(&positions, r.positions[i].shape_index);
      positions.push_back(']');
    }
    positions.push_back(']');
  }
  std::string& uses = d.uses_json;
  uses.assign("[");
  for (size_t i = 0; i < r.uses.size(); ++i) {
    if (i) uses.push_back(',');
    uses.push_back('[');
    AppendJsonString(&uses, r.uses[i].instruction);
    uses.push_back(',');
    char digits[24];
    auto [end, ec] = std::to_chars(digits, digits + sizeof digits, r.uses[i].operand);
    uses.append(digits, static_cast<size_t>(end - digits));
    uses.push_back(',');
    AppendJsonString(&uses, r.uses[i].shape_index);
    uses.push_back(']');
  }
  uses.push_back(']');
  ValueRow v = RowOf(r.value);
  if (!only_own_position) v.positions = positions;
  v.uses = uses;
  switch (r.uses_state) {
    case ingest::ValueDetailRecord::UsesState::kListed: v.uses_state = "listed"; break;
    case ingest::ValueDetailRecord::UsesState::kNone: v.uses_state = "none"; break;
    case ingest::ValueDetailRecord::UsesState::kNotInitialized: v.uses_state = "not_initialized"; break;
  }
  // One complete row: the ` value:` line and this block.
  PendingValues::Slot* slot = d.pending.Get(r.value.id, /*create=*/false);
  const bool was_pending = slot != nullptr && slot->present;
  if (was_pending) {
    d.FoldPending(*slot, &v);
  } else {
    d.value_keys.Add(r.value.id, ValueKeyIndex::Key(r.value.instruction, r.value.shape_index));
  }
  d.Guard([&] { d.WriteValue(r.value.id, v); });
  if (was_pending) d.pending.Take(r.value.id, slot);
}

void RunWriter::OnInstruction(ingest::InstructionRecord&& r) {
  Impl& d = *impl_;
  if (d.module_id == 0) return;
  d.Guard([&] {
    InstructionRow in;
    const bool from_module_text = !r.computation.empty();  // HLO text knows ROOT; other sources do not
    if (from_module_text) in.is_root = r.is_root;
    if (!r.computation.empty()) in.computation_id = d.NameId(r.computation);
    Merge(in.opcode, NonEmpty(std::move(r.opcode)));
    if (!r.shape.empty()) in.shape_id = d.ShapeId(r.shape);
    Merge(in.op_type, NonEmpty(std::move(r.op_type)));
    if (!r.op_name.empty()) in.op_name_id = d.NameId(r.op_name);
    if (!r.source_file.empty()) in.source_file_id = d.SourceFileId(r.source_file);
    Merge(in.source_line, NonNegative(r.source_line));
    Merge(in.fusion_kind, NonEmpty(std::move(r.fusion_kind)));
    Merge(in.custom_call_target, NonEmpty(std::move(r.custom_call_target)));
    Merge(in.sequence_index, NonNegative(r.sequence_index));
    if (!r.text.empty()) in.text_id = d.TextId(r.text);
    d.UpsertInstruction(r.name, in);
  });
}

void RunWriter::OnComputation(ingest::ComputationRecord&& r) {
  Impl& d = *impl_;
  if (d.module_id == 0) return;
  d.Guard([&] {
    auto& st = d.Cached("INSERT INTO computations(module_id, name, is_entry, instruction_count, execution_thread, "
                        "file_id) VALUES (?,?,?,?,?,?) ON CONFLICT(module_id, name) DO UPDATE SET "
                        "is_entry = excluded.is_entry, instruction_count = excluded.instruction_count, "
                        "execution_thread = excluded.execution_thread");
    st.bind(1, d.module_id);
    st.bind(2, r.name);
    st.bind(3, r.is_entry ? 1 : 0);
    st.bind(4, r.instruction_count);
    BindOpt(st, 5, NonEmpty(std::move(r.execution_thread)));
    st.bind(6, d.file_id);
    st.exec();
    st.reset();
    ++d.rows;
  });
}

void RunWriter::OnHloModule(ingest::HloModuleRecord&& r) {
  Impl& d = *impl_;
  if (d.module_id == 0) return;
  if (r.program_fingerprint != 0) d.hlo_fingerprint = r.program_fingerprint;
  if (r.entry_computation_layout.empty()) return;
  // The entry signature as the HLO text prints it, without layouts: '(f32[8], s32[]) -> f32[8]'.
  std::string signature = ShapeWithoutLayout(r.entry_computation_layout);
  if (size_t arrow = signature.find("->"); arrow != std::string::npos) signature.replace(arrow, 2, " -> ");
  d.Guard([&] {
    SQLite::Statement& up = d.Cached("UPDATE modules SET hlo_entry_signature = ? WHERE module_id = ?");
    up.bind(1, signature);
    up.bind(2, d.module_id);
    up.exec();
  });
  d.derived_facts_stale = true;
}

void RunWriter::OnLiveRangeHeader(ingest::LiveRangeHeaderRecord&& r) {
  impl_->schedule_length = r.schedule_end_time;
}

void RunWriter::OnScheduleEntry(ingest::ScheduleEntryRecord&& r) {
  Impl& d = *impl_;
  if (d.module_id == 0) return;
  d.Guard([&] { d.WriteScheduleEntry(r.time, r.instruction); });
}

void RunWriter::OnLiveRange(ingest::LiveRangeRecord&& r) {
  Impl& d = *impl_;
  if (d.module_id == 0) return;
  d.derived_facts_stale = true;
  if (auto id = d.value_keys.Find(ValueKeyIndex::Key(r.instruction, r.shape_index))) {
    d.Guard([&] { d.WriteLiveRange(*id, r.start, r.end); });
    return;
  }
  d.unmatched_live_ranges.push_back(std::move(r));  // a value of an earlier file, or of none (FlushValues)
}

void RunWriter::OnPeakMoment(ingest::PeakMomentRecord&& r) { impl_->peak_time = r.time; }

void RunWriter::OnPeakBuffer(ingest::PeakBufferRecord&& r) {
  if (impl_->module_id == 0) return;
  impl_->peak_buffers.push_back(std::move(r));
}

void RunWriter::OnStackTraceHeader(ingest::StackTraceHeaderRecord&& r) { impl_->stack_peak = r.peak_bytes; }

void RunWriter::OnStackTraceNode(ingest::StackTraceNodeRecord&& r) {
  Impl& d = *impl_;
  if (d.module_id == 0) return;
  d.Guard([&] {
    auto& st = d.Cached("INSERT INTO stack_trace_nodes(module_id, ordinal, depth, name, percent, total_bytes, "
                        "current_bytes, remaining_bytes, file_id) VALUES (?,?,?,?,?,?,?,?,?) "
                        "ON CONFLICT(module_id, ordinal) DO NOTHING");
    st.bind(1, d.module_id);
    st.bind(2, r.ordinal);
    st.bind(3, r.depth);
    st.bind(4, r.name);
    st.bind(5, r.percent);
    st.bind(6, r.total_bytes);
    st.bind(7, r.current_bytes);
    st.bind(8, r.remaining_bytes);
    st.bind(9, d.file_id);
    d.rows += st.exec();
    st.reset();
  });
}

void RunWriter::OnMemoryReportTotal(ingest::MemoryReportTotalRecord&& r) {
  Impl& d = *impl_;
  d.Guard([&] {
    auto& st = d.Cached("INSERT INTO memory_report_totals(file_id, memory_space, module_id, total_bytes) "
                        "VALUES (?,?,?,?) ON CONFLICT(file_id, memory_space) DO NOTHING");
    st.bind(1, d.file_id);
    st.bind(2, r.memory_space);
    if (d.module_id) st.bind(3, d.module_id); else st.bind(3);
    st.bind(4, r.total_bytes);
    if (st.exec() == 0) {
      d.AddIssue(IssueRecord::Severity::kWarning, 0,
                 "memory space " + std::to_string(r.memory_space) + " total printed twice; the first is kept");
    } else {
      ++d.rows;
    }
    st.reset();
  });
}

void RunWriter::OnMemoryReportRow(ingest::MemoryReportRowRecord&& r) {
  Impl& d = *impl_;
  d.Guard([&] {
    auto& st = d.Cached("INSERT INTO memory_report_rows(file_id, ordinal, module_id, section, allocation_index, "
                        "memory_space, memory_space_name, table_ordinal, cumulative_bytes_approx, "
                        "cumulative_percent, remaining_bytes_approx, size_bytes_approx, offset_bytes, value_count, "
                        "shapes) VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?,?,?) ON CONFLICT(file_id, ordinal) DO NOTHING");
    const char* section = "allocations_by_size";
    if (r.section == ingest::MemoryReportRowRecord::Section::kAllocationValues) section = "allocation_values";
    if (r.section == ingest::MemoryReportRowRecord::Section::kMemorySpace) section = "memory_space";
    st.bind(1, d.file_id);
    st.bind(2, r.ordinal);
    if (d.module_id) st.bind(3, d.module_id); else st.bind(3);
    st.bind(4, section);
    BindOpt(st, 5, NonNegative(r.allocation_index));
    if (r.memory_space >= 0) st.bind(6, r.memory_space); else st.bind(6);
    BindOpt(st, 7, NonEmpty(std::move(r.memory_space_name)));
    BindOpt(st, 8, NonNegative(r.table_ordinal));
    st.bind(9, r.cumulative_bytes_approx);
    st.bind(10, r.cumulative_percent);
    BindOpt(st, 11, NonNegative(r.remaining_bytes_approx));
    st.bind(12, r.size_bytes_approx);
    BindOpt(st, 13, NonNegative(r.offset_bytes));
    BindOpt(st, 14, NonNegative(r.value_count));
    st.bind(15, r.shapes);
    d.rows += st.exec();
    st.reset();
  });
}

void RunWriter::OnMemoryReportOmitted(ingest::MemoryReportOmittedRecord&& r) {
  // Truncation notes are facts about the report, kept as warnings so analysts know rows are missing.
  impl_->AddIssue(IssueRecord::Severity::kWarning, 0,
                  "report omits " + std::to_string(r.omitted_count) + (r.values ? " values" : " allocations") +
                      " under " + FormatPercent(r.threshold_percent) + "% of the total (XLA's own truncation)");
}

void RunWriter::OnUtilizationBlock(ingest::UtilizationBlockRecord&&) {}

void RunWriter::OnUtilizationCounter(ingest::UtilizationCounterRecord&& r) {
  Impl& d = *impl_;
  d.saw_utilization_counters = true;
  d.Guard([&] {
    auto& st = d.Cached("INSERT INTO utilization_counters(file_id, block_ordinal, counter, module_id, kernel, "
                        "numerator, denominator, ratio, ratio_text) VALUES (?,?,?,?,?,?,?,?,?) "
                        "ON CONFLICT(file_id, block_ordinal, counter) DO NOTHING");
    st.bind(1, d.file_id);
    st.bind(2, r.block_ordinal);
    st.bind(3, r.counter);
    if (d.module_id) st.bind(4, d.module_id); else st.bind(4);
    st.bind(5, r.kernel);
    st.bind(6, r.numerator);
    st.bind(7, r.denominator);
    st.bind(8, r.ratio);
    st.bind(9, r.ratio_text);
    if (st.exec() == 0) {
      d.AddIssue(IssueRecord::Severity::kWarning, 0,
                 "counter " + r.counter + " printed twice in block " + std::to_string(r.block_ordinal) +
                     "; the first is kept");
    } else {
      ++d.rows;
    }
    st.reset();
  });
}

void RunWriter::OnOomStat(ingest::OomStatRecord&& r) {
  Impl& d = *impl_;
  d.Guard([&] {
    auto& st = d.Cached("INSERT INTO oom_stats(file_id, label, bytes_approx, bytes_text, percent) VALUES (?,?,?,?,?) "
                        "ON CONFLICT(file_id, label) DO NOTHING");
    st.bind(1, d.file_id);
    st.bind(2, r.label);
    st.bind(3, r.bytes_approx);
    st.bind(4, r.bytes_text);
    if (r.percent >= 0) st.bind(5, r.percent); else st.bind(5);
    d.rows += st.exec();
    st.reset();
  });
}

void RunWriter::OnOomBuffer(ingest::OomBufferRecord&& r) {
  Impl& d = *impl_;
  d.Guard([&] {
    auto& st = d.Cached("INSERT INTO oom_buffers(file_id, buffer_number, module_id, size_bytes_approx, size_text, "
                        "op_name, source_file, source_line, xla_label, shape, is_entry_parameter) "
                        "VALUES (?,?,?,?,?,?,?,?,?,?,?) ON CONFLICT(file_id, buffer_number) DO NOTHING");
    st.bind(1, d.file_id);
    st.bind(2, r.buffer_number);
    if (d.module_id) st.bind(3, d.module_id); else st.bind(3);
    st.bind(4, r.size_bytes_approx);
    st.bind(5, r.size_text);
    BindOpt(st, 6, NonEmpty(std::move(r.op_name)));
    BindOpt(st, 7, NonEmpty(std::move(r.source_file)));
    BindOpt(st, 8, NonNegative(r.source_line));
    BindOpt(st, 9, NonEmpty(std::move(r.xla_label)));
    BindOpt(st, 10, NonEmpty(std::move(r.shape)));
    st.bind(11, r.is_entry_parameter ? 1 : 0);
    d.rows += st.exec();
    st.reset();
  });
}

void RunWriter::OnIssue(ingest::IssueRecord&& r) {
  impl_->AddIssue(r.severity, r.line, std::move(r.reason));
}

}  // namespace xladb::store
