#include "store/backend/bulk_insert.h"

#include <cctype>

#include "store/backend/sql_connection.h"

namespace xladb::store {
namespace {

std::vector<std::string> ColumnNames(std::string_view list) {
  std::vector<std::string> names;
  while (true) {
    const size_t comma = list.find(',');
    std::string_view name = list.substr(0, comma);
    while (!name.empty() && name.front() == ' ') name.remove_prefix(1);
    while (!name.empty() && name.back() == ' ') name.remove_suffix(1);
    names.emplace_back(name);
    if (comma == std::string_view::npos) return names;
    list.remove_prefix(comma + 1);
  }
}

// No conflict clause, or DO UPDATE without a WHERE (words matched whatever their case and the space around).
bool EveryRowChanges(std::string_view conflict) {
  std::string words;
  for (const char c : conflict) {
    const bool space = c == ' ' || c == '\n' || c == '\t' || c == '\r';
    if (space && (words.empty() || words.back() == ' ')) continue;
    words += space ? ' ' : static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
  }
  words = " " + words + " ";
  return words == "  " ||
         (words.find(" DO UPDATE ") != std::string::npos && words.find(" WHERE ") == std::string::npos);
}

}  // namespace

BulkInsert::BulkInsert(std::string_view table, std::string_view columns, std::string_view conflict,
                       int key_columns, std::string_view returning)
    : table_(table), column_list_(columns), conflict_(conflict), returning_(returning),
      column_names_(ColumnNames(columns)), key_columns_(key_columns),
      returned_columns_(returning.empty() ? 0 : static_cast<int>(ColumnNames(returning).size())),
      every_row_changes_(EveryRowChanges(conflict)),
      for_new_keys_(conflict.empty() || !returning.empty()
                        ? nullptr
                        : std::make_unique<const BulkInsert>(table, columns, "", /*key_columns=*/0)) {}

void RequireReturning(const BulkInsert& insert) {
  if (insert.returned_columns() == 0) {
    throw SqlError("AppendRowsReturning into " + insert.table() + ": its BulkInsert returns nothing");
  }
}

bool IsValidUtf8(std::string_view text) {
  const auto* p = reinterpret_cast<const unsigned char*>(text.data());
  const auto* end = p + text.size();
  while (p < end) {
    const unsigned char c = *p;
    if (c < 0x80) {
      ++p;
      continue;
    }
    size_t n = 0;
    unsigned char lo = 0x80, hi = 0xBF;  // the second byte's range
    if (c >= 0xC2 && c <= 0xDF) {
      n = 1;
    } else if (c >= 0xE0 && c <= 0xEF) {
      n = 2;
      if (c == 0xE0) lo = 0xA0;  // not overlong
      if (c == 0xED) hi = 0x9F;  // not a surrogate
    } else if (c >= 0xF0 && c <= 0xF4) {
      n = 3;
      if (c == 0xF0) lo = 0x90;  // not overlong
      if (c == 0xF4) hi = 0x8F;  // not past U+10FFFF
    } else {
      return false;
    }
    if (end - p <= static_cast<ptrdiff_t>(n) || p[1] < lo || p[1] > hi) return false;
    for (size_t i = 2; i <= n; ++i) {
      if (p[i] < 0x80 || p[i] > 0xBF) return false;
    }
    p += n + 1;
  }
  return true;
}

}  // namespace xladb::store
