#include "store/query/statement_text.h"

namespace xladb::store {

std::string Conditions::Joined(std::string_view lead) const {
  std::string sql;
  for (size_t i = 0; i < terms_.size(); ++i) {
    sql += i == 0 ? lead : std::string_view(" AND ");
    sql += terms_[i];
  }
  return sql;
}

int BindArgs(SqlStatement& q, const std::vector<SqlArg>& args, int first) {
  int index = first;
  for (const SqlArg& arg : args) {
    if (const auto* i = std::get_if<int64_t>(&arg)) {
      q.Bind(index++, *i);
    } else if (const auto* d = std::get_if<double>(&arg)) {
      q.Bind(index++, *d);
    } else {
      q.Bind(index++, std::get<std::string>(arg));
    }
  }
  return index;
}

Status AddNameMatch(Conditions* where, std::string_view column, const std::string& name, std::string_view what) {
  if (name.empty()) return Status::Ok();
  if (!IsGlobPattern(name)) {
    where->Add(std::string(column) + " = ?", name);
    return Status::Ok();
  }
  Status st = CheckGlobPattern(name, what);
  if (!st.ok()) return st;
  where->Add("glob(?, " + std::string(column) + ")", name);
  return Status::Ok();
}

void AddLabelMatch(Conditions* where, std::string_view run_id_column, const Labels& labels) {
  for (const auto& [key, value] : labels) {
    where->Add("EXISTS (SELECT 1 FROM run_labels l WHERE l.run_id = " + std::string(run_id_column) +
                   " AND l.key = ? AND l.value = ?)",
               key, value);
  }
}


StatusOr<int64_t> FindRunId(SqlConnection& db, const std::string& run_name) {
  auto q = db.Prepare("SELECT run_id FROM runs WHERE name = ?");
  q->Bind(1, run_name);
  if (!q->Step()) return Status::NotFound("run '" + run_name + "' not found");
  return q->Int(0);
}

}  // namespace xladb::store
