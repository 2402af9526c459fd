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
                      ? std::string("INSERT INTO ") + table + "(" + text_column + ") VALUES (?)"
                      : std::string("INSERT INTO ") + table + "(hash, " + text_column + ") VALUES (?, ?)") {}

int64_t InternedTexts::Find(SQLite::Database& sql, const std::string& text, int64_t hash) {
  if (!find_) find_ = std::make_unique<SQLite::Statement>(sql, find_sql_);
  int64_t id = 0;
  if (key_ == Key::kText) {
    find_->bind(1, text);
    if (find_->executeStep()) id = find_->getColumn(0).getInt64();
  } else {
    find_->bind(1, hash);
    while (id == 0 && find_->executeStep()) {
      const SQLite::Column stored = find_->getColumn(1);
      if (std::string_view(static_cast<const char*>(stored.getBlob()), static_cast<size_t>(stored.getBytes())) ==
          text) {
        id = find_->getColumn(0).getInt64();
      }
    }
  }
  find_->reset();
  return id;
}

int64_t InternedTexts::Id(SQLite::Database& sql, const std::string& text) {
  auto it = ids_.find(text);
  if (it != ids_.end()) return it->second;
  const int64_t hash = key_ == Key::kHash ? TextHash(text) : 0;
  int64_t id = Find(sql, text, hash);
  if (id == 0) {
    if (!insert_) insert_ = std::make_unique<SQLite::Statement>(sql, insert_sql_);
    if (key_ == Key::kText) {
      insert_->bind(1, text);
    } else {
      insert_->bind(1, hash);
      insert_->bind(2, text);
    }
    insert_->exec();
    insert_->reset();
    id = sql.getLastInsertRowid();
    added_in_file_ = true;
  }
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

void HashAllNames(SQLite::Database& sql) {
  std::vector<std::pair<int64_t, std::string>> names;
  {
    SQLite::Statement q(sql, "SELECT name_id, text FROM names");
    while (q.executeStep()) names.emplace_back(q.getColumn(0).getInt64(), q.getColumn(1).getString());
  }
  SQLite::Statement update(sql, "UPDATE names SET hash = ? WHERE name_id = ?");
  for (const auto& [id, text] : names) {
    update.bind(1, TextHash(text));
    update.bind(2, id);
    update.exec();
    update.reset();
  }
}

}  // namespace xladb::store
