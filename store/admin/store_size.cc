#include "store/admin/store_size.h"

#include <filesystem>
#include <system_error>

#include "store/query/statement_text.h"

namespace xladb::store {

int64_t StoreBytes(SqlConnection& sql) {
  auto q = sql.Prepare(sql.dialect() == SqlDialect::kSqlite
                           ? "SELECT page_count * page_size FROM pragma_page_count(), pragma_page_size()"
                           : "SELECT pg_database_size(current_database())");
  return q->Step() ? q->Int(0) : 0;
}

StatusOr<StoreSize> MeasureStore(Database& db) {
  return CatchSqlErrors("measuring the store", [&]() -> StatusOr<StoreSize> {
    SqlConnection& sql = db.connection();
    StoreSize size;
    auto counts = sql.Prepare("SELECT (SELECT COUNT(*) FROM runs), (SELECT COUNT(*) FROM modules)");
    if (counts->Step()) {
      size.runs = counts->Int(0);
      size.modules = counts->Int(1);
    }
    if (!db.is_sqlite()) {
      size.bytes = StoreBytes(sql);
      return size;
    }
    for (const std::string& file : {db.path(), db.path() + "-wal"}) {  // a WAL that is not there weighs nothing
      std::error_code ec;
      const auto bytes = std::filesystem::file_size(file, ec);
      if (!ec) size.bytes += static_cast<int64_t>(bytes);
    }
    return size;
  });
}

}  // namespace xladb::store
