// StatementCache: the writer's prepared statements, each prepared on first use and kept for the cache's life.
// Per-row statements run millions of times a file and per-file ones thousands of times a run, so preparing
// them once matters.
//
// Contract: Get(text) returns the statement for `text`, reset and unbound. `text` must be a string with static
// storage (a literal, or a string built once for the program's life): its address is the key, so finding a
// statement costs no hashing of its SQL. A SELECT that is not read to the end must be reset by its caller, so
// it holds no snapshot. Throws SqlError when `text` does not prepare. The connection must outlive
// the cache. Not thread-safe: one connection, one thread.
#ifndef XLADB_STORE_BACKEND_STATEMENT_CACHE_H_
#define XLADB_STORE_BACKEND_STATEMENT_CACHE_H_

#include "store/backend/sql_connection.h"

#include <memory>
#include <unordered_map>

namespace xladb::store {

class StatementCache {
 public:
  explicit StatementCache(SqlConnection& sql) : sql_(sql) {}
  StatementCache(const StatementCache&) = delete;
  StatementCache& operator=(const StatementCache&) = delete;

  SqlStatement& Get(const char* text) {
    std::unique_ptr<SqlStatement>& st = statements_[text];
    if (!st) {
      st = sql_.Prepare(text);
    } else {
      st->Reset();
      st->ClearBindings();
    }
    return *st;
  }

  SqlConnection& sql() { return sql_; }

 private:
  SqlConnection& sql_;
  std::unordered_map<const char*, std::unique_ptr<SqlStatement>> statements_;
};

}  // namespace xladb::store

#endif  // XLADB_STORE_BACKEND_STATEMENT_CACHE_H_
