// RowsById: a read of rows by a list of ids, in as few round trips as the engine needs. Internal to store/
// (the gate's and the diff's bulk reads, store/compare/buffer_attribution.cc; a page's run labels,
// store/query/queries.cc).
//
// `SELECT … FROM … WHERE <id column> = ? <tail>` runs once an id where a statement is a function call
// (SQLite: prepared once, from the connection's statement cache); `… WHERE <id column> = ANY(?) <tail>` once
// for all the ids where a statement is a round trip (PostgreSQL): the ids go as one bigint[]
// (SqlStatement::BindIntArray), so the text is the same for any count (prepared once,
// StatementCache::ByText), a custom plan hashes the array, a generic plan probes the index once an id, and the
// server runs one scan where lists of 500 ids ran one each (a gate over 1,000 modules read their instructions
// in two sequential scans of the table, 79 ms, where one takes 40). Rows come id after id in the order given
// on SQLite; on PostgreSQL in the order `tail` asks (say ORDER BY the id column first where the order
// matters).
//
// Contract: only placeholders go into the SQL text (ids are bound); errors throw SqlError, as the statements
// do (callers run it inside CatchSqlErrors). Built once (a function-local static), then only read: one may
// serve many connections at once, each on its own thread.
#ifndef XLADB_STORE_QUERY_ROWS_BY_ID_H_
#define XLADB_STORE_QUERY_ROWS_BY_ID_H_

#include <cstdint>
#include <string>
#include <vector>

#include "store/backend/database.h"

namespace xladb::store {

class RowsById {
 public:
  RowsById(const std::string& select_from, const std::string& id_column, const std::string& tail)
      : one_(select_from + " WHERE " + id_column + " = ?" + tail),
        any_(select_from + " WHERE " + id_column + " = ANY(?)" + tail) {}

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
    if (ids.empty()) return;
    auto q = db.statements().ByText(any_);  // the lease resets it however the scope ends
    q->BindIntArray(1, ids);
    while (q->Step()) row(*q);
  }

 private:
  std::string one_;  // the statement of one id; its address keys the statement cache
  std::string any_;  // the statement of an array of ids
};

}  // namespace xladb::store

#endif  // XLADB_STORE_QUERY_ROWS_BY_ID_H_
