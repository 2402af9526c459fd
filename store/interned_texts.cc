#include "store/interned_texts.h"

#include <xxhash.h>

#include <string>
#include <utility>
#include <vector>

namespace xladb::store {

int64_t TextHash(std::string_view text) { return static_cast<int64_t>(XXH3_64bits(text.data(), text.size())); }

InternedTexts::InternedTexts(const char* table, const char* id_column, const char* text_column, Key key)
    : key_(key),
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

int64_t InternedTexts::Id(SqlConnection& sql, const std::string& text, bool* inserted) {
  const bool cached = key_ != Key::kUniqueHash;
  if (cached) {
    auto it = ids_.find(text);
    if (it != ids_.end()) return it->second;
  }
  const int64_t hash = key_ == Key::kText ? 0 : TextHash(text);
  int64_t id = cached ? Find(sql, text, hash) : 0;
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
      if (inserted != nullptr) *inserted = true;
    } else {
      id = Find(sql, text, hash);  // stored before, or by another writer (committed now)
      if (id == 0) throw SqlError(std::string("a text could not be stored: ") + insert_sql_ + " (a hash collision?)");
    }
  }
  if (!cached) return id;
  if (ids_.size() >= kMaxCachedTexts) ids_.clear();  // a cache only: the table answers what it forgot
  ids_.emplace(text, id);
  return id;
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

void HashAllNames(SqlConnection& sql) {
  std::vector<std::pair<int64_t, std::string>> names;
  {
    auto q = sql.Prepare("SELECT name_id, text FROM names");
    while (q->Step()) names.emplace_back(q->Int(0), q->Text(1));
  }
  auto update = sql.Prepare("UPDATE names SET hash = ? WHERE name_id = ?");
  for (const auto& [id, text] : names) {
    update->Bind(1, TextHash(text));
    update->Bind(2, id);
    update->Execute();
  }
}

}  // namespace xladb::store
