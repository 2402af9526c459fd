// Interned rows (shapes, source_files, names, long_texts) are shared by every run and removed only where no
// row refers to them any more: by `xladb delete` and `xladb prune` (store/admin/run_lifecycle.h) and by the
// writer's end-of-run sweep (InternedTextCaches::SweepReplacedTexts). A writer holds ids of interned rows
// between looking them up and committing the rows that refer to them, and keeps them cached from one
// transaction to the next (store/facts/interned_texts.h). Two rules keep every id it writes pointing at a row,
// whichever connection, process or machine removes rows meanwhile:
//   * A remover counts its removal (store_counters 'interned_removals', schema.sql) in the transaction that
//     removes; a writer reads the count when each of its transactions begins and forgets its cached ids when
//     the count has moved since its last transaction. (The end-of-run sweep removes whole texts only, whose
//     ids no writer keeps past a transaction: it locks, and counts nothing.)
//   * On PostgreSQL a writer looks texts up on a second connection, outside its transaction, and commits the
//     rows that refer to them later: its transaction holds a shared advisory lock from its start, and a
//     remover takes the lock exclusively before it removes anything. A removal then waits for the writers'
//     open transactions (whose rows it then sees), and a writer's next transaction for the removal (whose
//     count it then reads). On SQLite the database's one write lock does the same.
// The lock's key (kInternedRowsLockKey) is one for the whole PostgreSQL database: stores in two schemas of one
// database wait on each other's removals too. A removal waits for the longest group open anywhere in the
// database, and groups beginning meanwhile queue behind it (PostgreSQL grants locks in order): writers pause
// while a removal waits and runs. Both rules need READ COMMITTED (each statement's snapshot taken when it
// starts, after the lock), which PostgresBackend's transactions ask for.
//
// Contract: each function runs on the caller's connection, inside the write transaction the caller has just
// begun, before it writes or removes anything (reads before it are harmless: a remover's rows to remove are
// chosen by statements after it); throws SqlError on database errors. One connection, one thread.
#ifndef XLADB_STORE_FACTS_INTERNED_REMOVALS_H_
#define XLADB_STORE_FACTS_INTERNED_REMOVALS_H_

#include <cstdint>

#include "store/backend/sql_connection.h"
#include "store/backend/statement_cache.h"

namespace xladb::store {

// pg_advisory_xact_lock's key: the bytes of "xladb_it" as a bigint.
inline constexpr int64_t kInternedRowsLockKey = 8677417665811147124;

// For a writer's transaction: on PostgreSQL holds the shared lock until the transaction ends (waiting for a
// removal under way); returns how many removals were counted before it (0 when none ever was).
[[nodiscard]] int64_t HoldInternedRows(SqlConnection& sql, StatementCache& statements);

// For a remover's transaction: on PostgreSQL takes the lock exclusively until the transaction ends (waiting
// for the writers' open transactions). Nothing to do on SQLite.
void LockInternedRowsForRemoval(SqlConnection& sql);

// For a remover's transaction that removed interned rows: counts the removal.
void CountInternedRemoval(SqlConnection& sql);

}  // namespace xladb::store

#endif  // XLADB_STORE_FACTS_INTERNED_REMOVALS_H_
