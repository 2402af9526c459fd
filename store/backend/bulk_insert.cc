#include "store/backend/bulk_insert.h"

#include <algorithm>

namespace xladb::store {

BulkInsert::BulkInsert(std::string_view table, std::string_view columns, std::string_view conflict,
                       int key_columns)
    : table_(table), column_list_(columns), conflict_(conflict),
      columns_(static_cast<int>(std::count(columns.begin(), columns.end(), ',')) + 1), key_columns_(key_columns) {}

}  // namespace xladb::store
