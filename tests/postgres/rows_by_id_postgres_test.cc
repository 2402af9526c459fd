// store/query/rows_by_id.h on both backends: SQLite steps a one-id statement an id at a time; PostgreSQL reads
// every id with one `= ANY(?)` statement, the ids bound as one bigint[]. The rows must be the same, however
// many ids (more than the 500 a statement of the old IN lists took), under the plan made for the bound array
// (a custom plan) and under the generic one PostgreSQL's plan cache may switch to from a prepared statement's
// sixth run on (forced here, so that both are read whatever the cache chooses).
#include <gtest/gtest.h>

#include <cstdint>
#include <string>
#include <vector>

#include "store/query/rows_by_id.h"
#include "tests/postgres/both_backends.h"

namespace xladb {
namespace {

class RowsByIdOnBothBackends : public testing::BothBackends {};

TEST_F(RowsByIdOnBothBackends, ManyIdsAreReadWholeAndAgainAfterThePlanCacheSwitches) {
  for (store::Database* db : {sqlite_.get(), postgres_.get()}) {
    db->connection().Exec("CREATE TABLE t(id BIGINT PRIMARY KEY, v BIGINT NOT NULL)");
    db->connection().Exec(
        "INSERT INTO t(id, v) WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < 3000) "
        "SELECT i, i * 10 FROM n");
  }
  // 1,201 ids: every odd id from 1 to 2,399, and one with no row.
  std::vector<int64_t> ids;
  for (int64_t id = 1; id < 2400; id += 2) ids.push_back(id);
  ids.push_back(5000);
  std::vector<std::string> expected;
  for (int64_t id = 1; id < 2400; id += 2) expected.push_back(std::to_string(id) + "=" + std::to_string(id * 10));

  const store::RowsById read("SELECT id, v FROM t", "id", " ORDER BY id");
  auto expect_rows = [&](store::Database& db, const std::string& when) {
    std::vector<std::string> rows;
    read.ForEach(db, ids, [&](const store::SqlStatement& q) {
      rows.push_back(std::to_string(q.Int(0)) + "=" + std::to_string(q.Int(1)));
    });
    EXPECT_EQ(rows, expected) << Name(db.connection()) << ", " << when;
  };
  for (store::Database* db : {sqlite_.get(), postgres_.get()}) {
    for (int run = 1; run <= 7; ++run) expect_rows(*db, "run " + std::to_string(run));
    if (db == postgres_.get()) {
      for (const char* mode : {"force_generic_plan", "force_custom_plan"}) {
        db->connection().Exec(std::string("SET plan_cache_mode = ") + mode);
        expect_rows(*db, mode);
      }
    }
    int64_t calls = 0;
    read.ForEach(*db, {}, [&](const store::SqlStatement&) { ++calls; });
    EXPECT_EQ(calls, 0) << Name(db->connection()) << ": rows for no id";
  }
}

}  // namespace
}  // namespace xladb
