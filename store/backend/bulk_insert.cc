#include "store/backend/bulk_insert.h"

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

}  // namespace

BulkInsert::BulkInsert(std::string_view table, std::string_view columns, std::string_view conflict,
                       int key_columns)
    : table_(table), column_list_(columns), conflict_(conflict), column_names_(ColumnNames(columns)),
      key_columns_(key_columns),
      every_row_changes_(conflict.empty() || (conflict.find("DO UPDATE") != std::string_view::npos &&
                                              conflict.find(" WHERE ") == std::string_view::npos)) {}

}  // namespace xladb::store
