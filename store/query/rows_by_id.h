// RowsById: a read of rows by a list of ids, in as few round trips as the engine needs. Internal to store/
// (the gate's and the diff's bulk reads, store/compare/buffer_attribution.cc; a page's run labels,
// store/query/queries.cc).
//
// `SELECT … FROM … WHERE <id column> = ? <tail>` runs once an id where a statement is a function call
// (SQLite: prepared once, from the connection's statement cache); `… WHERE <id column> IN (?, …) <tail>` once
// for every kIdsPerStatement ids where a statement is a round trip (PostgreSQL), so a read of a thousand ids
// takes two (a full chunk's text kept for the connection, StatementCache::ByText; the rest's, whose length
// varies, prepared for its one use). Rows come id after id in the order given on SQLite; on PostgreSQL in the order `tail` asks (say
// ORDER BY the id column first where the order matters).
//
// Contract: only placeholders go into the SQL text (ids are bound); errors throw SqlError, as the statements
// do (callers run it inside CatchSqlErrors). Built once (a function-local static), then only read: one may
// serve many connections at once, each on its own thread.
#ifndef XLADB_STORE_QUERY_ROWS_BY_ID_H_
#define XLADB_STORE_QUERY_ROWS_BY_ID_H_

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "store/backend/database.h"
#include "store/query/statement_text.h"

namespace xladb::store {

class RowsById {
 public:
  static constexpr size_t kIdsPerStatement = 500;

  RowsById(std::string select_from, std::string id_column, std::string tail)
      : select_from_(std::move(select_from)),
        id_column_(std::move(id_column)),
        tail_(std::move(tail)),
        one_(select_from_ + " WHERE " + id_column_ + " = ?" + tail_) {}

  // Calls row(q) on each row of the ids (in the order said above).
  template <typename RowFn>
  void ForEach(Database& db, const std::vector<int64_t>& ids, RowFn&& row) const {
    if (db.is_sqlite()) {
      SqlStatement& q = db.statements().Get(one_.c_str());
      const ResetWhenDone reset(q);  // also when `row` throws
      for (int64_t id : ids) {
        q.Bind(1, id);
        while (q.Step()) row(q);
        q.Reset();
      }
      return;
    }
    for (size_t at = 0; at < ids.size(); at += kIdsPerStatement) {
      const auto begin = ids.begin() + static_cast<std::ptrdiff_t>(at);
      Conditions where;
      where.AddIn(id_column_, std::vector<int64_t>(begin, begin + static_cast<std::ptrdiff_t>(std::min(
                                                                      kIdsPerStatement, ids.size() - at))));
      const std::string sql = select_from_ + where.Where() + tail_;
      auto read = [&](SqlStatement& q) {
        BindArgs(q, where.args());
        while (q.Step()) row(q);
      };
      if (at + kIdsPerStatement <= ids.size()) {
        read(*db.statements().ByText(sql));  // a full chunk's text, the same every time: kept
      } else {
        read(*db.connection().Prepare(sql));  // the rest's: its length varies
      }
    }
  }

 private:
  std::string select_from_, id_column_, tail_;
  std::string one_;  // the statement of one id; its address keys the statement cache
};

}  // namespace xladb::store

#endif  // XLADB_STORE_QUERY_ROWS_BY_ID_H_
