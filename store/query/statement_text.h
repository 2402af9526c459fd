// Building the store's read statements: optional filters as AND-ed conditions with bound arguments, name
// patterns, label filters, and turning the backend's exceptions into Status. Internal to store/ (the queries,
// trend, diff and gate files); callers outside store/ use their typed functions instead.
//
// Only placeholders go into SQL text; every value that came from a caller is bound.
// Not thread-safe objects; one per statement being built.
#ifndef XLADB_STORE_QUERY_STATEMENT_TEXT_H_
#define XLADB_STORE_QUERY_STATEMENT_TEXT_H_

#include <cstdint>
#include <string>
#include <string_view>
#include <utility>
#include <variant>
#include <vector>

#include "base/status.h"
#include "store/query/name_pattern.h"
#include "store/backend/sql_connection.h"

namespace xladb::store {

using Labels = std::vector<std::pair<std::string, std::string>>;
using SqlArg = std::variant<int64_t, double, std::string>;

class Conditions {
 public:
  // Adds `term` (its `?` placeholders filled by `args`, in order), AND-ed with the others.
  template <typename... Args>
  void Add(std::string_view term, Args&&... args) {
    terms_.emplace_back(term);
    (args_.emplace_back(std::forward<Args>(args)), ...);
  }
  // Adds `column IN (?, …)` over `values` (at least one).
  template <typename T>
  void AddIn(std::string_view column, const std::vector<T>& values) {
    std::string term = std::string(column) + " IN (";
    for (size_t i = 0; i < values.size(); ++i) {
      term += i == 0 ? "?" : ",?";
      args_.emplace_back(values[i]);
    }
    terms_.push_back(term + ")");
  }
  // " WHERE a AND b …", or "" when there is no term.
  std::string Where() const { return Joined(" WHERE "); }
  // " AND a AND b …", for a statement that has a WHERE of its own.
  std::string And() const { return Joined(" AND "); }
  const std::vector<SqlArg>& args() const { return args_; }

 private:
  std::string Joined(std::string_view lead) const;
  std::vector<std::string> terms_;
  std::vector<SqlArg> args_;
};

// Binds `args` from placeholder `first` on; returns the next free placeholder.
int BindArgs(SqlStatement& q, const std::vector<SqlArg>& args, int first = 1);

// Matches `column` against a name: nothing when empty, glob(pattern, column) when it contains * ? [ (SQLite's
// GLOB; PostgreSQL's schema defines the same function), else equality (which lets every engine use an index).
Status AddNameMatch(Conditions* where, std::string_view column, const std::string& name, std::string_view what);

// Every label must be present on the run with exactly that value.
void AddLabelMatch(Conditions* where, std::string_view run_id_column, const Labels& labels);

// The run's id; kNotFound "run 'NAME' not found".
StatusOr<int64_t> FindRunId(SqlConnection& db, const std::string& run_name);

// Runs `fn`, turning any SqlError (or other exception) into kIoError naming the query.
template <typename Fn>
auto CatchSqlErrors(std::string_view query, Fn&& fn) -> decltype(fn()) {
  try {
    return fn();
  } catch (const std::exception& e) {
    return Status::IoError(std::string(query) + ": " + e.what());
  }
}

}  // namespace xladb::store

#endif  // XLADB_STORE_QUERY_STATEMENT_TEXT_H_
