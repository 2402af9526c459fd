#include "store/facts/interned_texts.h"

#include <xxhash.h>

#include <algorithm>
#include <string>
#include <unordered_map>
#include <utility>
#include <vector>

#include "store/backend/bulk_insert.h"
#include "store/backend/row_binding.h"

namespace xladb::store {

namespace {

// Whether the bulk insert of new texts answers their ids (RETURNING hash, id), or they are read back by hash
// after it. On PostgreSQL the insert answers: a batch of new texts is one round trip, and the server reads
// nothing back. On SQLite the read: it runs in process, and SQLite's RETURNING goes through an ephemeral table,
// which made the 200 MiB buffer assignment's ingest 6% slower (2026-11-27).
bool IdsFromTheInsert(const SqlConnection& sql) { return sql.dialect() == SqlDialect::kPostgresql; }

// The bulk insert of long_texts rows (LongText), with or without RETURNING (IdsFromTheInsert); each one for the
// program's life (backends key statements by its address).
const BulkInsert& LongTextInsert(bool returning) {
  static constexpr char kColumns[] = "hash, text, shape_id, op_name_id, source_file_id";
  static const BulkInsert plain("long_texts", kColumns, "ON CONFLICT DO NOTHING", 1);
  static const BulkInsert with_ids("long_texts", kColumns, "ON CONFLICT DO NOTHING", 1, "hash, text_id");
  return returning ? with_ids : plain;
}

// The bulk insert of names rows (hash, text), as LongTextInsert: a text may be stored twice (two writers at
// once), so no conflict.
const BulkInsert& NameInsert(bool returning) {
  static const BulkInsert plain("names", "hash, text", "", 1);
  static const BulkInsert with_ids("names", "hash, text", "", 1, "hash, name_id");
  return returning ? with_ids : plain;
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

// The hashes' IN-list parameters of `find` (FindHashes), padded with the last.
void BindHashes(SqlStatement& find, size_t width, const std::vector<int64_t>& hashes) {
  for (size_t i = 0; i < width; ++i) find.Bind(static_cast<int>(i) + 1, hashes[std::min(i, hashes.size() - 1)]);
}

size_t InListWidth(size_t n) {
  size_t width = 8;
  while (width < n) width *= 2;
  return width;
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
                            ") VALUES (?, ?) ON CONFLICT DO NOTHING RETURNING " + id_column) {}

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

int64_t InternedTexts::Id(SqlConnection& sql, const std::string& text) {
  if (key_ == Key::kUniqueHash) throw SqlError("InternedTexts::Id on " + table_ + ": its texts are interned by Ids");
  auto it = ids_.find(text);
  if (it != ids_.end()) return it->second;
  const int64_t hash = key_ == Key::kText ? 0 : TextHash(text);
  int64_t id = Find(sql, text, hash);
  if (id == 0) {
    if (!insert_) insert_ = sql.Prepare(insert_sql_);
    if (key_ == Key::kText) {
      insert_->Bind(1, text);
    } else {
      insert_->Bind(1, hash);
      insert_->BindTextRef(2, text);
    }
    const bool stored = insert_->Step();
    id = stored ? insert_->Int(0) : 0;
    insert_->Reset();
    if (stored) {
      added_in_file_ = true;
    } else {
      id = Find(sql, text, hash);  // stored by another writer (committed now)
      if (id == 0) throw SqlError(std::string("a text could not be stored: ") + insert_sql_);
    }
  }
  if (ids_.size() >= kMaxCachedTexts) ids_.clear();  // a cache only: the table answers what it forgot
  ids_.emplace(text, id);
  return id;
}

SqlStatement& InternedTexts::FindHashes(SqlConnection& sql, size_t width) {
  std::unique_ptr<SqlStatement>& find = find_hashes_[width];
  if (!find) {
    std::string sql_text = "SELECT hash, " + id_column_ + ", " + text_column_ +
                           (key_ == Key::kUniqueHash ? ", shape_id, op_name_id, source_file_id" : "") + " FROM " +
                           table_ + " WHERE hash IN (?";
    for (size_t i = 1; i < width; ++i) sql_text += ",?";
    find = sql.Prepare(sql_text + ")");
  }
  return *find;
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
    const size_t width = InListWidth(hashes.size());
    SqlStatement& find = FindHashes(sql, width);
    BindHashes(find, width, hashes);
    while (find.Step()) {
      auto it = found.find(find.Text(2));
      if (it != found.end() && (it->second == 0 || find.Int(1) < it->second)) it->second = find.Int(1);
    }
    find.Reset();
  };
  look_up();
  // The texts not stored (rows: hash, index into `wanted`).
  std::vector<BulkCell> missing;
  for (size_t i = 0; i < wanted.size(); ++i) {
    if (found.at(wanted[i]) != 0) continue;
    missing.push_back({hashes[i], BulkCell::Kind::kInt});
    missing.push_back({static_cast<int64_t>(i), BulkCell::Kind::kText});
  }
  if (!missing.empty()) {
    // Their ids from the insert itself where it answers them (IdsFromTheInsert), by hash; else, or when two
    // new texts share a hash (a collision), they are read back.
    const BulkRows rows{NameInsert(IdsFromTheInsert(sql)), missing, wanted};
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
  // Insert every row (one that is stored already, or twice in the batch, is left alone), and take the ids of
  // those stored now from the insert itself where it answers them (IdsFromTheInsert). Each text goes to the
  // insert as it is stored (StoredText; a text with cut parts has no NUL: store/facts/long_text.h), moved, and
  // back after it.
  std::vector<std::string> stored_texts;
  stored_texts.reserve(texts.size());
  std::vector<BulkCell> cells;
  cells.reserve(texts.size() * 5);
  std::vector<int64_t> hashes(texts.size());
  for (size_t i = 0; i < texts.size(); ++i) {
    LongText& t = texts[i];
    t.text.resize(StoredText(t.text).size());
    hashes[i] = LongTextHash(t);
    cells.push_back({hashes[i], BulkCell::Kind::kInt});
    cells.push_back({static_cast<int64_t>(i), BulkCell::Kind::kText});
    cells.push_back(IdCell(t.shape_id));
    cells.push_back(IdCell(t.op_name_id));
    cells.push_back(IdCell(t.source_file_id));
    stored_texts.push_back(std::move(t.text));
  }
  const StoredNow now = AppendTexts(sql, BulkRows{LongTextInsert(IdsFromTheInsert(sql)), cells, stored_texts});
  const int64_t inserted = now.rows;
  if (inserted > 0) added_in_file_ = true;
  for (size_t i = 0; i < texts.size(); ++i) texts[i].text = std::move(stored_texts[i]);
  const std::unordered_map<int64_t, int64_t>& new_ids = now.id_of_hash;  // a hash is unique: never repeated
  // A row inserted now is the batch's first with its hash (rows go in in order); a later text under that hash
  // must be the same. The other hashes (stored before, or their ids not answered) are read back, and each
  // compared.
  auto collision = [&](int64_t hash, bool found) {
    return SqlError("a text could not be stored in " + table_ + ": its hash " + std::to_string(hash) +
                    (found ? " is another text's (a collision)" : " is not found after its insert"));
  };
  std::unordered_map<int64_t, size_t> first_with;  // hash → the index of the batch's first text with it
  std::vector<int64_t> stored_before;
  for (size_t i = 0; i < texts.size(); ++i) {
    const auto [first, is_first] = first_with.emplace(hashes[i], i);
    const auto id = new_ids.find(hashes[i]);
    if (id != new_ids.end()) {
      if (!is_first && texts[i] != texts[first->second]) throw collision(hashes[i], true);
      ids[i] = id->second;
    } else if (is_first) {
      stored_before.push_back(hashes[i]);
    }
  }
  if (stored_before.empty()) return inserted;
  // An IN list whose length is the next power of two (so a few statements serve every batch), padded with the
  // last hash.
  const size_t width = InListWidth(stored_before.size());
  SqlStatement& find = FindHashes(sql, width);
  BindHashes(find, width, stored_before);
  std::unordered_map<int64_t, std::pair<int64_t, LongText>> stored;
  while (find.Step()) {
    stored.emplace(find.Int(0), std::pair(find.Int(1), LongText{find.Text(2), find.IntOr(3, -1), find.IntOr(4, -1),
                                                                find.IntOr(5, -1)}));
  }
  find.Reset();
  for (size_t i = 0; i < texts.size(); ++i) {
    if (new_ids.contains(hashes[i])) continue;
    auto it = stored.find(hashes[i]);
    if (it == stored.end() || it->second.second != texts[i]) throw collision(hashes[i], it != stored.end());
    ids[i] = it->second.first;
  }
  return inserted;
}

void InternedTexts::FileDone() {
  added_in_group_ = added_in_group_ || added_in_file_;
  added_in_file_ = false;
}

void InternedTexts::FileAborted() {
  if (added_in_file_) ids_.clear();
  added_in_file_ = false;
}

void InternedTexts::GroupCommitted() { added_in_group_ = false; }

void InternedTexts::GroupAborted() {
  if (added_in_file_ || added_in_group_) ids_.clear();
  added_in_file_ = added_in_group_ = false;
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
  auto drop = connection->Prepare(
      "DELETE FROM long_texts WHERE text_id = ? AND NOT EXISTS (SELECT 1 FROM instructions WHERE text_id = ?)");
  for (int64_t id : replaced) {
    BindRow(*drop, id, id);
    drop->Execute();
  }
  drop.reset();
  tx.Commit();
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
