// StatementCache: the writer's prepared statements, each prepared on first use and kept for the cache's life.
// Per-row statements run millions of times a file and per-file ones thousands of times a run, so preparing
// them once matters.
//
// Contract: Get(text) returns the statement for `text`, reset and unbound. `text` must be a string with static
// storage (a literal, or a string built once for the program's life): its address is the key, so finding a
// statement costs no hashing of its SQL. A SELECT that is not read to the end must be reset by its caller, so
// it holds no snapshot. Throws SqlError when `text` does not prepare. The connection must outlive
// the cache. Not thread-safe: one connection, one thread.
//
// ByText(sql) serves SQL built at run time (a query whose text follows its filters, run again by the next
// request alike): keyed by the text itself, prepared at its first use and kept, so PostgreSQL parses it once
// and may keep its plan, and SQLite compiles it once. At most kMaxTexts texts are kept; past them, and while
// the kept statement of the same text is leased already, a lease gets a statement of its own. The lease
// resets the statement when it ends, read to the end or not.
#ifndef XLADB_STORE_BACKEND_STATEMENT_CACHE_H_
#define XLADB_STORE_BACKEND_STATEMENT_CACHE_H_

#include "store/backend/sql_connection.h"

#include <memory>
#include <string>
#include <unordered_map>
#include <utility>

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

  // A statement for one use, from ByText.
  class Lease {
   public:
    SqlStatement& operator*() const { return *statement_; }
    SqlStatement* operator->() const { return statement_; }
    ~Lease() {
      if (own_ != nullptr) return;  // dies with the lease
      statement_->Reset();
      *in_use_ = false;
    }
    Lease(const Lease&) = delete;
    Lease& operator=(const Lease&) = delete;

   private:
    friend class StatementCache;
    Lease(SqlStatement* kept, bool* in_use) : statement_(kept), in_use_(in_use) { *in_use_ = true; }
    explicit Lease(std::unique_ptr<SqlStatement> own) : own_(std::move(own)), statement_(own_.get()) {}

    std::unique_ptr<SqlStatement> own_;
    SqlStatement* statement_;
    bool* in_use_ = nullptr;
  };

  static constexpr size_t kMaxTexts = 128;

  Lease ByText(const std::string& sql) {
    auto found = by_text_.find(sql);
    if (found == by_text_.end()) {
      if (by_text_.size() >= kMaxTexts) return Lease(sql_.Prepare(sql));
      found = by_text_.emplace(sql, Kept{sql_.Prepare(sql), false}).first;
    } else if (found->second.in_use) {
      return Lease(sql_.Prepare(sql));
    } else {
      found->second.statement->ClearBindings();
    }
    return Lease(found->second.statement.get(), &found->second.in_use);
  }

  SqlConnection& sql() { return sql_; }

 private:
  struct Kept {
    std::unique_ptr<SqlStatement> statement;
    bool in_use;
  };

  SqlConnection& sql_;
  std::unordered_map<const char*, std::unique_ptr<SqlStatement>> statements_;
  std::unordered_map<std::string, Kept> by_text_;
};

}  // namespace xladb::store

#endif  // XLADB_STORE_BACKEND_STATEMENT_CACHE_H_
