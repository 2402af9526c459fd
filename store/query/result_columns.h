// ResultColumns<R>: the columns of a query's result struct R, declared once as a list of {SQL expression,
// member of R}. The list is both the SELECT list a statement is written with (SelectList) and the reader of its
// rows (Read), so a column's place in the row is its place in the list and no caller numbers a column.
// Internal to store/, like statement_text.h.
//
// Contract
//   * A column's value lands in its member: INTEGER in an int64_t, REAL in a double, TEXT in a std::string,
//     INTEGER in a bool (nonzero is true). A NULL leaves the member as it is: R's default member initializers
//     say what NULL means (-1 for "unknown", 0, ""), and Read starts from a default-constructed R.
//   * ReadInto(q, out, first) reads columns first … first + size() - 1 of q's current row and returns the
//     column after them, so lists compose: a statement may select one list's columns after another's (of the
//     same struct or another).
//   * A member of a base of R is a member of R: AddModuleMetrics adds a column `<table>.<metric>` for every
//     metric of store/facts/module_metrics.h, into R's ModuleMetricValues.
//   * Built once (a namespace-scope const or a function-local static) and then only read: thread-safe.
#ifndef XLADB_STORE_QUERY_RESULT_COLUMNS_H_
#define XLADB_STORE_QUERY_RESULT_COLUMNS_H_

#include <concepts>
#include <cstdint>
#include <initializer_list>
#include <string>
#include <string_view>
#include <utility>
#include <variant>
#include <vector>

#include "store/backend/sql_connection.h"
#include "store/facts/module_metrics.h"

namespace xladb::store {

template <typename R>
class ResultColumns {
 public:
  // One column: `{"s.total_bytes", &R::total_bytes}`. The member is an int64_t, double, std::string or bool.
  class Column {
   public:
    template <typename T>
    Column(std::string expression, T R::*member)
        : expression_(std::move(expression)), member_(member), read_(&ReadMember<T>) {}

    const std::string& expression() const { return expression_; }
    // Column `column` of q's current row into its member of *out (a NULL leaves it).
    void Read(const SqlStatement& q, int column, R* out) const {
      if (!q.IsNull(column)) read_(q, column, member_, out);
    }

   private:
    using Member = std::variant<int64_t R::*, double R::*, std::string R::*, bool R::*>;
    // Chosen by the member's type when the column is made, so a row is read without a visit over every type.
    template <typename T>
    static void ReadMember(const SqlStatement& q, int column, const Member& member, R* out) {
      T& to = out->*std::get<T R::*>(member);
      if constexpr (std::same_as<T, int64_t>) to = q.Int(column);
      if constexpr (std::same_as<T, double>) to = q.Real(column);
      if constexpr (std::same_as<T, std::string>) to = q.Text(column);
      if constexpr (std::same_as<T, bool>) to = q.Int(column) != 0;
    }

    std::string expression_;
    Member member_;
    void (*read_)(const SqlStatement&, int, const Member&, R*);
  };

  ResultColumns(std::initializer_list<Column> columns) : columns_(columns) {}

  // This list, then `more`'s columns.
  ResultColumns Then(const ResultColumns& more) const {
    ResultColumns both = *this;
    both.columns_.insert(both.columns_.end(), more.columns_.begin(), more.columns_.end());
    return both;
  }

  // This list, then `<table>.<name>` for every kModuleMetrics metric, into R's ModuleMetricValues.
  ResultColumns WithModuleMetrics(std::string_view table) const
    requires std::derived_from<R, ModuleMetricValues>
  {
    ResultColumns with = *this;
    for (const ModuleMetric& m : kModuleMetrics) {
      with.columns_.emplace_back(std::string(table) + "." + std::string(m.name), static_cast<int64_t R::*>(m.value));
    }
    return with;
  }

  // "a, b, c": the expressions, in order.
  std::string SelectList() const {
    std::string list;
    for (const Column& c : columns_) list += (list.empty() ? "" : ", ") + c.expression();
    return list;
  }

  int size() const { return static_cast<int>(columns_.size()); }

  // Reads this list's columns of q's current row, from column `first`, into *out; returns the next column.
  int ReadInto(const SqlStatement& q, R* out, int first = 0) const {
    int column = first;
    for (const Column& c : columns_) c.Read(q, column++, out);
    return column;
  }

  // The row's columns, from the first, as an R.
  R Read(const SqlStatement& q) const {
    R out;
    ReadInto(q, &out);
    return out;
  }

 private:
  std::vector<Column> columns_;
};

}  // namespace xladb::store

#endif  // XLADB_STORE_QUERY_RESULT_COLUMNS_H_
