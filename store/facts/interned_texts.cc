#include "store/facts/interned_texts.h"

#include <xxhash.h>

#include <algorithm>
#include <string>
#include <unordered_map>
#include <utility>
#include <vector>

#include "store/backend/bulk_insert.h"
#include "store/backend/in_list_read.h"
#include "store/backend/row_binding.h"
#include "store/facts/interned_removals.h"

namespace xladb::store {

namespace {

// Whether the bulk insert of new texts answers their ids (RETURNING hash, id), or they are read back by hash
// after it. On PostgreSQL the insert answers: the texts a lookup did not find are stored and their ids known
// in one round trip. On SQLite the read: it runs in process, and SQLite's RETURNING goes through an ephemeral
// table, which made the 200 MiB buffer assignment's ingest 6% slower (2026-11-27).
bool IdsFromTheInsert(const SqlConnection& sql) { return sql.dialect() == SqlDialect::kPostgresql; }

// Whether the writer gives new texts their ids itself, the largest id stored plus one for each (LargestId), so
// that nothing is read back after the insert: where no other connection can insert meanwhile (WritesAlone:
// SQLite inside the writer's transaction). On the 100 MiB buffer assignment the read-backs were about 10% of
// the ingest's time (perf, 2026-11-28).
bool IdsGivenByTheWriter(const SqlConnection& sql) { return sql.WritesAlone(); }

// How a batch of new texts learns its ids: given by the writer (IdsGivenByTheWriter: the id is the insert's
// first column), answered by the insert (IdsFromTheInsert: RETURNING hash and id), or read back after it.
enum class NewIds { kGiven, kReturned, kReadBack };

NewIds NewIdsOf(const SqlConnection& sql) {
  if (IdsGivenByTheWriter(sql)) return NewIds::kGiven;
  return IdsFromTheInsert(sql) ? NewIds::kReturned : NewIds::kReadBack;
}

// The bulk insert of long_texts rows (LongText) for each NewIds; each one for the program's life (backends key
// statements by its address). A text stored before is left alone; where the writer gives ids or the insert
// answers them, it inserts only texts it looked up and did not find (where the writer gives them no row
// conflicts: one that did would be an error; where the insert answers, another writer's text stored since
// the lookup may).
const BulkInsert& LongTextInsert(NewIds how) {
  static constexpr char kColumns[] = "hash, text, shape_id, op_name_id, source_file_id";
  static const BulkInsert read_back("long_texts", kColumns, "ON CONFLICT DO NOTHING", 1);
  static const BulkInsert returned("long_texts", kColumns, "ON CONFLICT DO NOTHING", 1, "hash, text_id");
  static const BulkInsert given("long_texts", std::string("text_id, ") + kColumns, "", 1);
  return how == NewIds::kGiven ? given : how == NewIds::kReturned ? returned : read_back;
}

// The bulk insert of names rows (hash, text), as LongTextInsert: a text may be stored twice (two writers at
// once), so no conflict clause.
const BulkInsert& NameInsert(NewIds how) {
  static const BulkInsert read_back("names", "hash, text", "", 1);
  static const BulkInsert returned("names", "hash, text", "", 1, "hash, name_id");
  static const BulkInsert given("names", "name_id, hash, text", "", 1);
  return how == NewIds::kGiven ? given : how == NewIds::kReturned ? returned : read_back;
}

// What an append of texts stored: how many rows, and where the insert answers them (a BulkInsert returning
// hash and id: IdsFromTheInsert) their ids by hash; `repeated` when it returned one hash twice (two new texts
// under one hash, a collision: told apart by reading them back).
struct StoredNow {
  int64_t rows = 0;
  std::unordered_map<int64_t, int64_t> id_of_hash;
  bool repeated = false;
};

StoredNow AppendTexts(SqlConnection& sql, const BulkRows& rows) {
  StoredNow now;
  if (rows.insert.returned_columns() == 0) {
    now.rows = sql.AppendRows(rows);
    return now;
  }
  std::vector<int64_t> returned;  // hash, id of each row stored
  now.rows = sql.AppendRowsReturning(rows, returned);
  for (size_t r = 0; r + 1 < returned.size(); r += 2) {
    now.repeated |= !now.id_of_hash.emplace(returned[r], returned[r + 1]).second;
  }
  return now;
}

// An id column of long_texts: -1 (not cut) is NULL.
BulkCell IdCell(int64_t id) { return id < 0 ? BulkCell{0, BulkCell::Kind::kNull} : BulkCell{id, BulkCell::Kind::kInt}; }

}  // namespace

int64_t TextHash(std::string_view text) { return static_cast<int64_t>(XXH3_64bits(text.data(), text.size())); }

InternedTexts::InternedTexts(const char* table, const char* id_column, const char* text_column, Key key)
    : key_(key), table_(table), id_column_(id_column), text_column_(text_column),
      find_sql_(key == Key::kText ? std::string("SELECT ") + id_column + " FROM " + table + " WHERE " +
                                        text_column + " = ?"
                                  : std::string("SELECT ") + id_column + ", " + text_column + " FROM " + table +
                                        " WHERE hash = ?"),
      insert_sql_(key == Key::kText
                      ? std::string("INSERT INTO ") + table + "(" + text_column +
                            ") VALUES (?) ON CONFLICT DO NOTHING RETURNING " + id_column
                      : std::string("INSERT INTO ") + table + "(hash, " + text_column +
                            ") VALUES (?, ?) ON CONFLICT DO NOTHING RETURNING " + id_column),
      // kText: (text, text); kHash: (hash, text, hash, text), the smallest id of the text's rows (a text two
      // writers stored at once has two).
      find_or_insert_sql_(key == Key::kText
                              ? std::string("WITH found AS (SELECT ") + id_column + " FROM " + table + " WHERE " +
                                    text_column + " = ?), stored AS (INSERT INTO " + table + "(" + text_column +
                                    ") SELECT CAST(? AS TEXT) WHERE NOT EXISTS (SELECT 1 FROM found) ON CONFLICT "
                                    "DO NOTHING RETURNING " + id_column + ") SELECT " + id_column +
                                    ", 0 FROM found UNION ALL SELECT " + id_column + ", 1 FROM stored"
                          : key == Key::kHash
                              ? std::string("WITH found AS (SELECT ") + id_column + " FROM " + table +
                                    " WHERE hash = ? AND " + text_column + " = ? ORDER BY " + id_column +
                                    " LIMIT 1), stored AS (INSERT INTO " + table + "(hash, " + text_column +
                                    ") SELECT CAST(? AS BIGINT), CAST(? AS TEXT) WHERE NOT EXISTS (SELECT 1 FROM "
                                    "found) RETURNING " + id_column + ") SELECT " + id_column +
                                    ", 0 FROM found UNION ALL SELECT " + id_column + ", 1 FROM stored"
                              : ""),
      find_hashes_(std::string("SELECT hash, ") + id_column + ", " + text_column +
                   (key == Key::kUniqueHash ? ", shape_id, op_name_id, source_file_id" : "") + " FROM " + table +
                   " WHERE hash IN ({ids})") {}

int64_t InternedTexts::Find(SqlConnection& sql, const std::string& text, int64_t hash) {
  if (!find_) find_ = sql.Prepare(find_sql_);
  int64_t id = 0;
  if (key_ == Key::kText) {
    find_->Bind(1, text);
    if (find_->Step()) id = find_->Int(0);
  } else {
    find_->Bind(1, hash);
    while (id == 0 && find_->Step()) {
      if (find_->Text(1) == text) {
        id = find_->Int(0);
      }
    }
  }
  find_->Reset();
  return id;
}

// One round trip instead of two for a text not stored yet (a fresh store's shapes and computation names: 625
// and 250 of the real run folder's round trips on PostgreSQL), and still one for a text stored before. The
// lookup reads the statement's snapshot (a row committed before it); the insert runs only when the lookup found
// nothing, so a stored text takes no id from the table's sequence (an insert that meets a conflict would). A
// text another writer inserts at the same moment meets the insert's conflict once that writer commits (key
// kText), and is in neither part's answer (0: the caller looks it up again, in a new snapshot); names have no
// unique key, so both rows stay (the smaller id is found later).
int64_t InternedTexts::FindOrInsert(SqlConnection& sql, const std::string& text, int64_t hash) {
  if (!find_or_insert_) find_or_insert_ = sql.Prepare(find_or_insert_sql_);
  if (key_ == Key::kText) {
    BindRow(*find_or_insert_, text, text);
  } else {
    BindRow(*find_or_insert_, hash, text, hash, text);
  }
  int64_t id = 0;
  if (find_or_insert_->Step()) {
    id = find_or_insert_->Int(0);
    if (find_or_insert_->Int(1) == 1) added_in_file_ = true;
  }
  find_or_insert_->Reset();
  return id;
}

int64_t InternedTexts::Id(SqlConnection& sql, const std::string& text) {
  if (key_ == Key::kUniqueHash) throw SqlError("InternedTexts::Id on " + table_ + ": its texts are interned by Ids");
  auto it = ids_.find(text);
  if (it != ids_.end()) return it->second;
  const int64_t hash = key_ == Key::kText ? 0 : TextHash(text);
  const bool one_statement = sql.dialect() == SqlDialect::kPostgresql;
  int64_t id = one_statement ? FindOrInsert(sql, text, hash) : Find(sql, text, hash);
  if (id == 0 && !one_statement) {
    if (!insert_) insert_ = sql.Prepare(insert_sql_);
    if (key_ == Key::kText) {
      insert_->Bind(1, text);
    } else {
      insert_->Bind(1, hash);
      insert_->BindTextRef(2, text);
    }
    if (insert_->Step()) {
      id = insert_->Int(0);
      added_in_file_ = true;
    }
    insert_->Reset();
  }
  if (id == 0) {
    id = Find(sql, text, hash);  // stored by another writer (committed now), which the insert met
    if (id == 0) {
      throw SqlError(std::string("a text could not be stored: ") + (one_statement ? find_or_insert_sql_ : insert_sql_));
    }
  }
  if (ids_.size() >= kMaxCachedTexts) ids_.clear();  // a cache only: the table answers what it forgot
  ids_.emplace(text, id);
  return id;
}

void InternedTexts::Ids(SqlConnection& sql, std::span<const std::string> texts, std::span<int64_t> ids) {
  if (key_ != Key::kHash) throw SqlError("InternedTexts::Ids(texts) on " + table_ + ": not interned by hash");
  // The texts the cache does not know, each once, as they are stored (StoredText, as long texts are).
  std::unordered_map<std::string_view, int64_t> found;
  std::vector<std::string> wanted;
  for (size_t i = 0; i < texts.size(); ++i) {
    auto cached = ids_.find(texts[i]);
    ids[i] = cached == ids_.end() ? 0 : cached->second;
    if (ids[i] == 0 && found.emplace(StoredText(texts[i]), 0).second) wanted.emplace_back(StoredText(texts[i]));
  }
  if (wanted.empty()) return;
  std::vector<int64_t> hashes(wanted.size());
  for (size_t i = 0; i < wanted.size(); ++i) hashes[i] = TextHash(wanted[i]);
  // Reads the stored rows of the wanted hashes into `found` (the smallest id of a text stored twice).
  auto look_up = [&] {
    SqlStatement& find = find_hashes_.For(sql, hashes);
    while (find.Step()) {
      auto it = found.find(find.Text(2));
      if (it != found.end() && (it->second == 0 || find.Int(1) < it->second)) it->second = find.Int(1);
    }
    find.Reset();
  };
  look_up();
  // The texts not stored (rows: [name_id,] hash, index into `wanted`), their ids given by the writer
  // (IdsGivenByTheWriter) or answered by the insert (IdsFromTheInsert, by hash); else, or when two new texts
  // share a hash (a collision), read back.
  const NewIds how = NewIdsOf(sql);
  std::vector<BulkCell> missing;
  int64_t next_id = 0;  // the next id the writer gives (read at the first text missing)
  for (size_t i = 0; i < wanted.size(); ++i) {
    if (found.at(wanted[i]) != 0) continue;
    if (how == NewIds::kGiven) {
      if (next_id == 0) next_id = LargestId(sql) + 1;
      found.at(wanted[i]) = next_id;
      missing.push_back({next_id++, BulkCell::Kind::kInt});
    }
    missing.push_back({hashes[i], BulkCell::Kind::kInt});
    missing.push_back({static_cast<int64_t>(i), BulkCell::Kind::kText});
  }
  if (!missing.empty()) {
    const BulkRows rows{NameInsert(how), missing, wanted};
    if (how == NewIds::kGiven) {
      if (sql.AppendRows(rows) > 0) added_in_file_ = true;
    } else {
      const StoredNow now = AppendTexts(sql, rows);
      if (now.rows > 0) added_in_file_ = true;
      bool answered = !now.repeated && now.id_of_hash.size() == rows.rows();
      for (size_t m = 0; m < missing.size() && answered; m += 2) {
        const auto id = now.id_of_hash.find(missing[m].value);
        answered = id != now.id_of_hash.end();
        if (answered) found.at(wanted[static_cast<size_t>(missing[m + 1].value)]) = id->second;
      }
      if (!answered) look_up();
    }
  }
  for (size_t i = 0; i < texts.size(); ++i) {
    if (ids[i] != 0) continue;
    ids[i] = found.at(StoredText(texts[i]));
    if (ids[i] == 0) throw SqlError("a text could not be stored in " + table_ + ": not found after its insert");
    if (ids_.size() >= kMaxCachedTexts) ids_.clear();
    ids_.emplace(texts[i], ids[i]);
  }
}

int64_t InternedTexts::Ids(SqlConnection& sql, std::vector<LongText> texts, std::span<int64_t> ids) {
  if (key_ != Key::kUniqueHash) throw SqlError("InternedTexts::Ids on " + table_ + ": its texts are interned by Id");
  if (texts.empty()) return 0;
  auto collision = [&](int64_t hash, bool found) {
    return SqlError("a text could not be stored in " + table_ + ": its hash " + std::to_string(hash) +
                    (found ? " is another text's (a collision)" : " is not found after its insert"));
  };
  // Each text as it is stored (StoredText; a text with cut parts has no NUL: store/facts/long_text.h) and its
  // hash. A hash is unique: a later text of the batch under a hash must be the first's (`first_with`).
  std::vector<int64_t> hashes(texts.size());
  std::vector<size_t> distinct;  // the batch's first text of each hash
  std::unordered_map<int64_t, size_t> first_with;  // hash → the index of the batch's first text with it
  for (size_t i = 0; i < texts.size(); ++i) {
    LongText& t = texts[i];
    t.text.resize(StoredText(t.text).size());
    hashes[i] = LongTextHash(t);
    const auto [first, is_first] = first_with.emplace(hashes[i], i);
    if (is_first) {
      distinct.push_back(i);
    } else if (texts[i] != texts[first->second]) {
      throw collision(hashes[i], true);
    }
  }
  // The texts the group met before (group_texts_) have their ids; the others (`unknown`) are looked up or
  // stored below. A text met before under the same hash must be the same text.
  std::vector<size_t> unknown;
  for (size_t i : distinct) {
    const auto met = group_texts_.find(hashes[i]);
    if (met == group_texts_.end()) {
      unknown.push_back(i);
    } else if (met->second.second != texts[i]) {
      throw collision(hashes[i], true);
    } else {
      ids[i] = met->second.first;
    }
  }
  // Reads the stored rows of `wanted_hashes` (of distinct texts of the batch) and sets their texts' ids, each
  // row compared with the text asked for; `must_find`: a hash not stored is an error.
  auto read_back = [&](const std::vector<int64_t>& wanted_hashes, bool must_find) {
    SqlStatement& find = find_hashes_.For(sql, wanted_hashes);
    std::unordered_map<int64_t, std::pair<int64_t, LongText>> stored;
    while (find.Step()) {
      stored.emplace(find.Int(0), std::pair(find.Int(1), LongText{find.Text(2), find.IntOr(3, -1),
                                                                  find.IntOr(4, -1), find.IntOr(5, -1)}));
    }
    find.Reset();
    for (int64_t hash : wanted_hashes) {
      const size_t i = first_with.at(hash);
      auto it = stored.find(hash);
      if (it == stored.end()) {
        if (must_find) throw collision(hash, false);
        continue;
      }
      if (it->second.second != texts[i]) throw collision(hash, true);
      ids[i] = it->second.first;
    }
  };
  // The texts to insert: where the writer gives ids, those not found by a first lookup (so none conflicts);
  // where the insert answers ids (PostgreSQL), those not found either: a run of a program the store has seen
  // (a nightly campaign) then costs one statement a batch, not an insert that meets a conflict a text and a
  // read-back after it (two round trips a batch, and an id of the table's sequence taken by each conflict:
  // 24,022 ids for the real run folder's 7,142 texts, 2026-11-29); a fresh store pays a lookup that finds
  // little. Where the ids are read back, all the distinct texts (one stored before is left alone).
  const NewIds how = NewIdsOf(sql);
  std::vector<size_t> to_insert;
  if (unknown.empty()) {
    // Every text was met before in this group: no statement.
  } else if (how != NewIds::kReadBack) {
    std::vector<int64_t> unknown_hashes;
    for (size_t i : unknown) {
      ids[i] = 0;  // not found
      unknown_hashes.push_back(hashes[i]);
    }
    read_back(unknown_hashes, false);
    for (size_t i : unknown) {
      if (ids[i] == 0) to_insert.push_back(i);
    }
    // In hash order where another writer may insert the same texts at once (PostgreSQL): a row one insert
    // holds and the other wants is then always the first they share, so neither holds one the other waits
    // for first (in batch order two writers could each wait on the other: a deadlock, and a failed group).
    if (how == NewIds::kReturned) {
      std::sort(to_insert.begin(), to_insert.end(), [&](size_t a, size_t b) { return hashes[a] < hashes[b]; });
    }
  } else {
    to_insert = unknown;
  }
  // Each text moved to the insert and back after it.
  int64_t next_id = how == NewIds::kGiven && !to_insert.empty() ? LargestId(sql) + 1 : 0;
  std::vector<std::string> stored_texts;
  stored_texts.reserve(to_insert.size());
  std::vector<BulkCell> cells;
  cells.reserve(to_insert.size() * 6);
  for (size_t i : to_insert) {
    LongText& t = texts[i];
    if (how == NewIds::kGiven) {
      ids[i] = next_id++;
      cells.push_back({ids[i], BulkCell::Kind::kInt});
    }
    cells.push_back({hashes[i], BulkCell::Kind::kInt});
    cells.push_back({static_cast<int64_t>(stored_texts.size()), BulkCell::Kind::kText});
    cells.push_back(IdCell(t.shape_id));
    cells.push_back(IdCell(t.op_name_id));
    cells.push_back(IdCell(t.source_file_id));
    stored_texts.push_back(std::move(t.text));
  }
  int64_t inserted = 0;
  if (!to_insert.empty()) {
    const StoredNow now = AppendTexts(sql, BulkRows{LongTextInsert(how), cells, stored_texts});
    inserted = now.rows;
    if (inserted > 0) added_in_file_ = true;
    for (size_t k = 0; k < to_insert.size(); ++k) texts[to_insert[k]].text = std::move(stored_texts[k]);
    if (how != NewIds::kGiven) {
      // The ids the insert answered (RETURNING); the other texts were stored before (where ids are read back)
      // or by another writer since the lookup, and are read back.
      std::vector<int64_t> stored_before;
      for (size_t i : to_insert) {
        const auto id = now.id_of_hash.find(hashes[i]);
        if (id != now.id_of_hash.end()) {
          ids[i] = id->second;
        } else {
          stored_before.push_back(hashes[i]);
        }
      }
      if (!stored_before.empty()) read_back(stored_before, true);
    }
  }
  for (size_t i : unknown) {
    if (group_text_bytes_ >= kMaxGroupTextBytes) break;
    if (group_texts_.try_emplace(hashes[i], ids[i], texts[i]).second) group_text_bytes_ += texts[i].text.size();
  }
  for (size_t i = 0; i < texts.size(); ++i) ids[i] = ids[first_with.at(hashes[i])];
  return inserted;
}

int64_t InternedTexts::LargestId(SqlConnection& sql) {
  if (!largest_id_) largest_id_ = sql.Prepare("SELECT coalesce(max(" + id_column_ + "), 0) FROM " + table_);
  const int64_t id = largest_id_->Step() ? largest_id_->Int(0) : 0;
  largest_id_->Reset();
  return id;
}

void InternedTexts::FileDone() {
  added_in_group_ = added_in_group_ || added_in_file_;
  added_in_file_ = false;
}

void InternedTexts::FileAborted() {
  if (added_in_file_) ids_.clear();
  added_in_file_ = false;
  ForgetGroupTexts();  // on SQLite the file's new texts went with it
}

void InternedTexts::GroupCommitted() {
  added_in_group_ = false;
  ForgetGroupTexts();
}

void InternedTexts::GroupAborted() {
  if (added_in_file_ || added_in_group_) ids_.clear();
  added_in_file_ = added_in_group_ = false;
  ForgetGroupTexts();
}

void InternedTexts::ForgetGroupTexts() {
  group_texts_.clear();
  group_text_bytes_ = 0;
}

void InternedTextCaches::FileDone() {
  ForEach(&InternedTexts::FileDone);
  replaced_in_group_.insert(replaced_in_group_.end(), replaced_in_file_.begin(), replaced_in_file_.end());
  replaced_in_file_.clear();
}

void InternedTextCaches::FileAborted() {
  ForEach(&InternedTexts::FileAborted);
  replaced_in_file_.clear();
}

void InternedTextCaches::GroupCommitted() {
  ForEach(&InternedTexts::GroupCommitted);
  replaced_in_run_.insert(replaced_in_run_.end(), replaced_in_group_.begin(), replaced_in_group_.end());
  replaced_in_group_.clear();
}

void InternedTextCaches::SweepReplacedTexts() {
  std::vector<int64_t> replaced;
  replaced.swap(replaced_in_run_);
  std::sort(replaced.begin(), replaced.end());
  replaced.erase(std::unique(replaced.begin(), replaced.end()), replaced.end());
  if (replaced.empty()) return;
  WriteTransaction tx(*connection);  // one commit for them all
  LockInternedRowsForRemoval(*connection);
  auto drop = connection->Prepare(
      "DELETE FROM long_texts WHERE text_id = ? AND NOT EXISTS (SELECT 1 FROM instructions WHERE text_id = ?)");
  for (int64_t id : replaced) {
    BindRow(*drop, id, id);
    drop->Execute();
  }
  drop.reset();
  // Not counted (CountInternedRemoval): it removes whole texts only, whose ids no writer keeps past the
  // group that looked them up (InternedTexts::Ids keeps them until its group ends), so no writer need forget
  // the shapes, names and source paths it keeps.
  tx.Commit();
}

void InternedTextCaches::BeginTransaction(SqlConnection& sql, StatementCache& statements) {
  const int64_t removals = HoldInternedRows(sql, statements);
  if (removals != removals_seen_) ForEach(&InternedTexts::ForgetIds);
  removals_seen_ = removals;
}

void InternedTextCaches::GroupAborted() {
  ForEach(&InternedTexts::GroupAborted);
  replaced_in_file_.clear();
  replaced_in_group_.clear();
}

void HashAllNames(SqlConnection& sql) {
  std::vector<std::pair<int64_t, std::string>> names;
  {
    auto q = sql.Prepare("SELECT name_id, text FROM names");
    while (q->Step()) names.emplace_back(q->Int(0), q->Text(1));
  }
  auto update = sql.Prepare("UPDATE names SET hash = ? WHERE name_id = ?");
  for (const auto& [id, text] : names) {
    BindRow(*update, TextHash(text), id);
    update->Execute();
  }
}

}  // namespace xladb::store
