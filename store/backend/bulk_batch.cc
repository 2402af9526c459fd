#include "store/backend/bulk_batch.h"

#include <algorithm>
#include <span>

namespace xladb::store {

void BulkBatch::Text(std::string_view v) {
  if (texts_used_ == texts_.size()) texts_.emplace_back();
  texts_[texts_used_].assign(v);  // reuses the string's buffer from earlier batches
  cells_.push_back({static_cast<int64_t>(texts_used_++), BulkCell::Kind::kText});
}

int64_t BulkBatch::Flush(SqlConnection& sql) {
  if (cells_.empty()) return 0;
  const bool vouched = rows_new_ * static_cast<size_t>(columns_) == cells_.size();  // every row held
  const BulkInsert& insert = vouched && insert_->for_new_keys() != nullptr ? *insert_->for_new_keys() : *insert_;
  const BulkRows rows{insert, cells_, std::span(texts_.data(), texts_used_)};
  int64_t changed = 0;
  if (held_ != nullptr) {
    if (!insert.every_row_changes()) {
      throw SqlError("rows of " + insert.table() + " that may change no row cannot be held (BulkBatch::HoldIn)");
    }
    if (TextsHoldable(sql)) {
      held_->Hold(insert, *insert_, cells_, std::span(texts_.data(), texts_used_));
      changed = static_cast<int64_t>(rows.rows());
      Clear();
      return changed;
    }
    held_->WrittenAtOnce(insert.table());
  }
  if (insert.every_row_changes()) {
    sql.AppendRowsLater(rows);  // not awaited: every row counts
    changed = static_cast<int64_t>(rows.rows());
  } else {
    changed = sql.AppendRows(rows);
  }
  Clear();
  return changed;
}

void BulkBatch::HoldIn(HeldBulkRows* held, std::initializer_list<std::string_view> indexed_texts) {
  held_ = held;
  indexed_text_.assign(static_cast<size_t>(columns_), false);
  const std::vector<std::string>& names = insert_->column_names();
  for (std::string_view name : indexed_texts) {
    const auto at = std::find(names.begin(), names.end(), name);
    if (at == names.end()) throw SqlError("HoldIn: " + insert_->table() + " has no column " + std::string(name));
    indexed_text_[static_cast<size_t>(at - names.begin())] = true;
  }
}

bool BulkBatch::TextsHoldable(const SqlConnection& sql) const {
  if (sql.dialect() != SqlDialect::kPostgresql) return true;
  for (size_t i = 0; i < cells_.size(); ++i) {
    if (cells_[i].kind != BulkCell::Kind::kText) continue;
    const std::string_view text = StoredText(texts_[static_cast<size_t>(cells_[i].value)]);
    const bool indexed = indexed_text_[i % static_cast<size_t>(columns_)];
    if ((indexed && text.size() > kMaxHeldTextBytes) || !IsValidUtf8(text)) return false;
  }
  return true;
}

void BulkBatch::Clear() {
  cells_.clear();
  rows_new_ = 0;
  // Buffers are kept for the next batch, except a rare big one (a value used thousands of times).
  for (size_t i = 0; i < texts_used_; ++i) {
    if (texts_[i].capacity() > kKeptTextBytes) std::string().swap(texts_[i]);
  }
  texts_used_ = 0;
}

}  // namespace xladb::store
