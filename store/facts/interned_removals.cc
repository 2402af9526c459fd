#include "store/facts/interned_removals.h"

#include <string>

namespace xladb::store {
namespace {

bool OnPostgresql(const SqlConnection& sql) { return sql.dialect() == SqlDialect::kPostgresql; }

const std::string kHoldShared = "SELECT pg_advisory_xact_lock_shared(" + std::to_string(kInternedRowsLockKey) + ")";
const std::string kHoldAlone = "SELECT pg_advisory_xact_lock(" + std::to_string(kInternedRowsLockKey) + ")";
constexpr const char* kRemovals = "SELECT value FROM store_counters WHERE name = 'interned_removals'";

}  // namespace

int64_t HoldInternedRows(SqlConnection& sql, StatementCache& statements) {
  // On PostgreSQL the lock goes into the pipeline and the count joins it: one round trip, and the count's
  // statement starts (taking its snapshot) once the lock is held, so it sees a removal the lock waited for.
  if (OnPostgresql(sql)) sql.ExecLater(kHoldShared);
  SqlStatement& count = statements.Get(kRemovals);
  const int64_t removals = count.Step() ? count.Int(0) : 0;
  count.Reset();
  return removals;
}

void LockInternedRowsForRemoval(SqlConnection& sql) {
  if (OnPostgresql(sql)) sql.Exec(kHoldAlone);
}

void CountInternedRemoval(SqlConnection& sql) {
  sql.Prepare("INSERT INTO store_counters(name, value) VALUES ('interned_removals', 1) "
              "ON CONFLICT(name) DO UPDATE SET value = store_counters.value + 1")
      ->Execute();
}

}  // namespace xladb::store
