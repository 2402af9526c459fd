#include "store/backend/held_bulk_rows.h"

#include <algorithm>

namespace xladb::store {

size_t HeldBulkRows::RunEnd(const Table& t, size_t r) {
  return r + 1 < t.runs.size() ? t.runs[r + 1].begin : t.cells.size();
}

HeldBulkRows::Table& HeldBulkRows::TableOf(const BulkInsert& insert) {
  for (Table& t : tables_) {
    if (t.name == insert.table()) return t;
  }
  tables_.push_back(Table{insert.table(), {}, {}, {}, false});
  return tables_.back();
}

void HeldBulkRows::Hold(const BulkInsert& insert, const BulkInsert& keyed, std::span<const BulkCell> cells,
                        std::span<const std::string> texts) {
  if (cells.empty()) return;
  Table& t = TableOf(insert);
  if (t.runs.empty() || t.runs.back().insert != &insert) t.runs.push_back({&insert, &keyed, t.cells.size()});
  const auto first_text = static_cast<int64_t>(t.texts.size());
  t.texts.insert(t.texts.end(), texts.begin(), texts.end());
  t.cells.reserve(t.cells.size() + cells.size());
  for (BulkCell c : cells) {
    if (c.kind == BulkCell::Kind::kText) c.value += first_text;
    t.cells.push_back(c);
  }
  rows_ += cells.size() / static_cast<size_t>(insert.columns());
}

void HeldBulkRows::WrittenAtOnce(std::string_view table) {
  for (Table& t : tables_) {
    if (t.name == table) t.written_at_once = true;
  }
}

HeldBulkRows::Mark HeldBulkRows::mark() const {
  Mark m;
  m.tables.reserve(tables_.size());
  for (const Table& t : tables_) m.tables.push_back({t.cells.size(), t.texts.size(), t.runs.size()});
  return m;
}

void HeldBulkRows::TruncateTo(const Mark& mark) {
  tables_.resize(std::min(tables_.size(), mark.tables.size()));  // tables first held since: gone
  rows_ = 0;
  for (size_t i = 0; i < tables_.size(); ++i) {
    Table& t = tables_[i];
    t.cells.resize(mark.tables[i].cells);
    t.texts.resize(mark.tables[i].texts);
    t.runs.resize(mark.tables[i].runs);
    for (size_t r = 0; r < t.runs.size(); ++r) {
      rows_ += (RunEnd(t, r) - t.runs[r].begin) / static_cast<size_t>(t.runs[r].insert->columns());
    }
  }
}

void HeldBulkRows::Write(SqlConnection& sql) {
  for (size_t i = 0; i < tables_.size(); ++i) {
    const Table& t = tables_[i];
    for (size_t r = 0; r < t.runs.size(); ++r) {
      const std::span<const BulkCell> cells(t.cells.data() + t.runs[r].begin, RunEnd(t, r) - t.runs[r].begin);
      const BulkRows rows{t.written_at_once ? *t.runs[r].keyed : *t.runs[r].insert, cells, t.texts};
      // The last waits, and with it for every answer before it (a failure is thrown here).
      if (i + 1 == tables_.size() && r + 1 == t.runs.size()) {
        (void)sql.AppendRows(rows);
      } else {
        sql.AppendRowsLater(rows);
      }
    }
  }
  Clear();
}

}  // namespace xladb::store
