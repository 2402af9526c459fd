#include "store/row_batch.h"

namespace xladb::store {

BatchedInsert::BatchedInsert(std::string_view head, std::string_view tail, int columns) : columns_(columns) {
  std::string tuple = "(?";
  for (int c = 1; c < columns; ++c) tuple += ",?";
  tuple += ")";
  one_row_.assign(head).append(tuple).append(tail);
  full_batch_.assign(head);
  for (int r = 0; r < kBatchRows; ++r) full_batch_.append(r ? "," : "").append(tuple);
  full_batch_.append(tail);
}

void RowBatch::Text(std::string_view v) {
  if (texts_used_ == texts_.size()) texts_.emplace_back();
  texts_[texts_used_].assign(v);  // reuses the string's buffer from earlier batches
  cells_.push_back({static_cast<int64_t>(texts_used_++), Kind::kText});
}

int64_t RowBatch::Flush(StatementCache& statements) {
  const size_t rows = cells_.size() / static_cast<size_t>(columns_);
  int64_t changed = 0;
  size_t done = 0;
  while (done < rows) {
    const bool full = rows - done >= static_cast<size_t>(kBatchRows);
    SqlStatement& st = statements.Get(full ? insert_->full_batch() : insert_->one_row());
    const size_t n = full ? kBatchRows : 1;
    for (size_t c = 0; c < n * static_cast<size_t>(columns_); ++c) {
      const Cell& cell = cells_[done * static_cast<size_t>(columns_) + c];
      const int index = static_cast<int>(c) + 1;
      switch (cell.kind) {
        case Kind::kInt: st.Bind(index, cell.value); break;
        case Kind::kText: st.BindTextRef(index, texts_[static_cast<size_t>(cell.value)]); break;
        case Kind::kNull: st.BindNull(index); break;
      }
    }
    changed += st.Execute();
    st.Reset();
    done += n;
  }
  Clear();
  return changed;
}

void RowBatch::Clear() {
  cells_.clear();
  // Buffers are kept for the next batch, except a rare big one (a value used thousands of times).
  for (size_t i = 0; i < texts_used_; ++i) {
    if (texts_[i].capacity() > kKeptTextBytes) std::string().swap(texts_[i]);
  }
  texts_used_ = 0;
}

}  // namespace xladb::store
