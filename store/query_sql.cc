#include "store/query_sql.h"

namespace xladb::store {

std::string Conditions::Joined(std::string_view lead) const {
  std::string sql;
  for (size_t i = 0; i < terms_.size(); ++i) {
    sql += i == 0 ? lead : std::string_view(" AND ");
    sql += terms_[i];
  }
  return sql;
}

int BindArgs(SQLite::Statement& q, const std::vector<SqlArg>& args, int first) {
  int index = first;
  for (const SqlArg& arg : args) {
    if (const auto* i = std::get_if<int64_t>(&arg)) {
      q.bind(index++, *i);
    } else if (const auto* d = std::get_if<double>(&arg)) {
      q.bind(index++, *d);
    } else {
      q.bind(index++, std::get<std::string>(arg));
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
  where->Add(std::string(column) + " GLOB ?", name);
  return Status::Ok();
}

void AddLabelMatch(Conditions* where, std::string_view run_id_column, const Labels& labels) {
  for (const auto& [key, value] : labels) {
    where->Add("EXISTS (SELECT 1 FROM run_labels l WHERE l.run_id = " + std::string(run_id_column) +
                   " AND l.key = ? AND l.value = ?)",
               key, value);
  }
}

int64_t IntOr(const SQLite::Column& c, int64_t if_null) { return c.isNull() ? if_null : c.getInt64(); }
double RealOr(const SQLite::Column& c, double if_null) { return c.isNull() ? if_null : c.getDouble(); }
std::string TextOf(const SQLite::Column& c) { return c.isNull() ? std::string() : c.getString(); }

StatusOr<int64_t> FindRunId(SQLite::Database& db, const std::string& run_name) {
  SQLite::Statement q(db, "SELECT run_id FROM runs WHERE name = ?");
  q.bind(1, run_name);
  if (!q.executeStep()) return Status::NotFound("run '" + run_name + "' not found");
  return q.getColumn(0).getInt64();
}

}  // namespace xladb::store
