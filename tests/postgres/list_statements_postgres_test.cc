// The statements over lists (store/backend/statements_by_width.h), on both backends: an InListRead reads each
// listed key's rows once whatever the width it is padded to; a ValuesList's UPDATE … FROM changes exactly the
// listed rows, with the values bound (NULL where unbound), the padded rows matching none; lists past either
// bound are refused.
#include <gtest/gtest.h>

#include <cstdint>
#include <string>
#include <vector>

#include "store/backend/in_list_read.h"
#include "store/backend/sql_connection.h"
#include "store/backend/values_list.h"
#include "tests/postgres/both_backends.h"

namespace xladb {
namespace {

class ListStatementsOnBothBackends : public testing::BothBackends {
 protected:
  // A table t(k, n, s) of keys 1..count, n = k and s = 'k<k>'.
  static void MakeTable(store::SqlConnection& sql, int count) {
    sql.Exec("CREATE TABLE t (k BIGINT PRIMARY KEY, n BIGINT, s TEXT)");
    auto ins = sql.Prepare("INSERT INTO t(k, n, s) VALUES (?, ?, ?)");
    for (int64_t k = 1; k <= count; ++k) {
      ins->Reset();
      ins->Bind(1, k);
      ins->Bind(2, k);
      ins->Bind(3, "k" + std::to_string(k));
      ins->Execute();
    }
  }
};

TEST_F(ListStatementsOnBothBackends, AnInListReadReadsEachListedKeyOnce) {
  for (store::SqlConnection* sql : Backends()) {
    SCOPED_TRACE(Name(*sql));
    MakeTable(*sql, 5000);
    store::InListRead read("SELECT COUNT(*), COALESCE(SUM(k), 0) FROM t WHERE k IN ({ids})");
    for (size_t n : {size_t{1}, size_t{8}, size_t{9}, size_t{300}, store::InListRead::kMaxKeys}) {
      SCOPED_TRACE(n);
      std::vector<int64_t> keys;
      int64_t sum = 0;
      for (size_t i = 0; i < n; ++i) {
        keys.push_back(static_cast<int64_t>(i) + 1);
        sum += static_cast<int64_t>(i) + 1;
      }
      store::SqlStatement& q = read.For(*sql, keys);
      ASSERT_TRUE(q.Step());
      EXPECT_EQ(q.Int(0), static_cast<int64_t>(n));
      EXPECT_EQ(q.Int(1), sum);
      q.Reset();
    }
    EXPECT_THROW(read.For(*sql, {}), store::SqlError);
    const std::vector<int64_t> too_many(store::InListRead::kMaxKeys + 1, 1);
    EXPECT_THROW(read.For(*sql, too_many), store::SqlError);
  }
}

TEST_F(ListStatementsOnBothBackends, AValuesListChangesExactlyTheListedRows) {
  for (store::SqlConnection* sql : Backends()) {
    SCOPED_TRACE(Name(*sql));
    MakeTable(*sql, 40);
    store::ValuesList update(
        "UPDATE t SET n = v.column2, s = v.column3 FROM (VALUES {rows}) AS v WHERE t.k = v.column1",
        "(CAST(? AS BIGINT), CAST(? AS BIGINT), CAST(? AS TEXT))", 3);
    // Three rows (a list of 8), then nine (a list of 16): keys 2, 4, … get n = -k and s = 'x<k>', except that
    // every third row leaves its n unbound (NULL).
    int64_t key = 2;
    for (size_t rows : {size_t{3}, size_t{9}}) {
      store::SqlStatement& st = update.For(*sql, rows);
      for (size_t r = 0; r < rows; ++r, key += 2) {
        st.Bind(update.Param(r, 0), key);
        if (r % 3 != 2) st.Bind(update.Param(r, 1), -key);
        st.Bind(update.Param(r, 2), "x" + std::to_string(key));
      }
      EXPECT_EQ(st.Execute(), static_cast<int64_t>(rows));
    }
    std::string expected;
    int64_t listed = 0;
    for (int64_t k = 1; k <= 40; ++k) {
      const bool in_list = k % 2 == 0 && k < key;
      const bool unbound = in_list && (listed < 3 ? listed % 3 == 2 : (listed - 3) % 3 == 2);
      expected += std::to_string(k) + "|" +
                  (!in_list ? std::to_string(k) : unbound ? std::string("NULL") : std::to_string(-k)) + "|" +
                  (in_list ? "x" : "k") + std::to_string(k) + "\n";
      if (in_list) ++listed;
    }
    EXPECT_EQ(testing::Rows(*sql, "SELECT k, n, s FROM t ORDER BY k"), expected);

    // The list of 8 again, with one row: the rows bound the first time (key 6 among them) are NULL now.
    sql->Exec("UPDATE t SET s = 'changed since' WHERE k = 6");
    store::SqlStatement& again = update.For(*sql, 1);
    again.Bind(update.Param(0, 0), int64_t{1});
    again.Bind(update.Param(0, 1), int64_t{100});
    EXPECT_EQ(again.Execute(), 1);
    EXPECT_EQ(testing::Rows(*sql, "SELECT k, n, s FROM t WHERE k IN (1, 6) ORDER BY k"),
              "1|100|NULL\n6|NULL|changed since\n");
    EXPECT_THROW(update.For(*sql, 0), store::SqlError);
    EXPECT_THROW(update.For(*sql, store::ValuesList::kMaxRows + 1), store::SqlError);
  }
}

}  // namespace
}  // namespace xladb
