#include "store/facts/run_labels.h"

#include "store/backend/row_binding.h"

namespace xladb::store {

void PutRunLabels(SqlConnection& sql, int64_t run_id, const std::vector<std::pair<std::string, std::string>>& labels) {
  auto put = sql.Prepare("INSERT INTO run_labels(run_id, key, value) VALUES (?, ?, ?) "
                         "ON CONFLICT(run_id, key) DO UPDATE SET value = excluded.value");
  for (const auto& [key, value] : labels) {
    BindRow(*put, run_id, key, value);
    put->Execute();
  }
}

}  // namespace xladb::store
