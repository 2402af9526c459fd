// SqlStatement::ExecuteLater on both backends: statements sent without waiting still run in order (a later read
// sees them, more than a pipeline's depth of them all arrive), and a failing one is reported no later than the
// next call that waits for the server (SQLite: at once), after which the connection works again.
#include <gtest/gtest.h>

#include <string>

#include "store/postgres/postgres_backend.h"
#include "store/backend/sql_connection.h"
#include "tests/postgres/both_backends.h"

namespace xladb {
namespace {

using store::SqlConnection;

class ExecuteLaterOnBothBackends : public testing::BothBackends {
 protected:
  void SetUp() override {
    BothBackends::SetUp();
    for (SqlConnection* sql : Backends()) sql->Exec("CREATE TABLE later(k BIGINT PRIMARY KEY, v TEXT NOT NULL)");
  }
};

TEST_F(ExecuteLaterOnBothBackends, StatementsRunInOrderAndALaterReadSeesThem) {
  const int n = store::PostgresPipeline::kPipelineDepth * 2 + 5;
  for (SqlConnection* sql : Backends()) {
    SCOPED_TRACE(Name(*sql));
    sql->BeginWrite();
    auto insert = sql->Prepare("INSERT INTO later(k, v) VALUES (?, ?)");
    auto update = sql->Prepare("UPDATE later SET v = v || '+' WHERE k = ?");
    for (int k = 0; k < n; ++k) {
      insert->Bind(1, k);
      insert->Bind(2, "v" + std::to_string(k));
      insert->ExecuteLater();
      update->Bind(1, k);
      update->ExecuteLater();  // runs after its row's insert
    }
    EXPECT_EQ(testing::Rows(*sql, "SELECT COUNT(*), MIN(v), MAX(k) FROM later WHERE v LIKE '%+'"),
              std::to_string(n) + "|v0+|" + std::to_string(n - 1) + "\n");
    sql->Exec("COMMIT");
  }
}

TEST_F(ExecuteLaterOnBothBackends, AnErrorIsThrownByTheNextCallThatWaits) {
  for (SqlConnection* sql : Backends()) {
    SCOPED_TRACE(Name(*sql));
    sql->BeginWrite();
    auto insert = sql->Prepare("INSERT INTO later(k, v) VALUES (?, ?)");
    insert->Bind(1, 1);
    insert->Bind(2, "kept");
    insert->ExecuteLater();
    sql->Exec("SAVEPOINT file");
    insert->Bind(1, 2);
    insert->BindNull(2);  // v is NOT NULL
    bool thrown_at_once = false;
    try {
      insert->ExecuteLater();
    } catch (const store::SqlError&) {
      thrown_at_once = true;
    }
    EXPECT_EQ(thrown_at_once, sql->dialect() == store::SqlDialect::kSqlite);
    if (!thrown_at_once) {
      try {
        sql->Exec("RELEASE file");
        ADD_FAILURE() << "the failed insert was not reported";
      } catch (const store::SqlError& e) {
        EXPECT_NE(std::string(e.what()).find("null value"), std::string::npos) << e.what();
      }
    }
    sql->Exec("ROLLBACK TO file");
    insert->Bind(1, 3);
    insert->Bind(2, "after");
    insert->ExecuteLater();
    sql->Exec("RELEASE file");
    sql->Exec("COMMIT");
    EXPECT_EQ(testing::Rows(*sql, "SELECT k, v FROM later ORDER BY k"), "1|kept\n3|after\n");
  }
}

// A statement prepared on the server from its second run on: that run comes after an error still unanswered.
// The statement is prepared only once the server has it, so it works after the rollback.
TEST_F(ExecuteLaterOnBothBackends, AStatementWhoseSecondRunFollowsAnErrorWorksAfterTheRollback) {
  for (SqlConnection* sql : Backends()) {
    SCOPED_TRACE(Name(*sql));
    auto good = sql->Prepare("INSERT INTO later(k, v) VALUES (?, 'x')");
    auto bad = sql->Prepare("INSERT INTO later(k, v) VALUES (?, NULL)");
    sql->BeginWrite();
    sql->Exec("SAVEPOINT file");
    good->Bind(1, 1);
    good->ExecuteLater();
    bad->Bind(1, 2);
    bool thrown = false;
    try {
      bad->ExecuteLater();
      good->Bind(1, 3);
      good->ExecuteLater();  // its second run
      sql->Exec("RELEASE file");
    } catch (const store::SqlError& e) {
      thrown = true;
      const std::string message = e.what();
      EXPECT_TRUE(message.find("null") != std::string::npos || message.find("NULL") != std::string::npos) << message;
    }
    EXPECT_TRUE(thrown);
    sql->Exec("ROLLBACK TO file");
    for (int k : {4, 5}) {
      good->Bind(1, k);
      good->ExecuteLater();
    }
    sql->Exec("RELEASE file");
    sql->Exec("COMMIT");
    EXPECT_EQ(testing::Rows(*sql, "SELECT k FROM later ORDER BY k"), "4\n5\n");
  }
}

// A rollback sent while a failed statement's answer is still unread rolls back (the error goes with it).
TEST_F(ExecuteLaterOnBothBackends, ARollbackIsSentWhileAnErrorIsUnread) {
  for (SqlConnection* sql : Backends()) {
    SCOPED_TRACE(Name(*sql));
    auto insert = sql->Prepare("INSERT INTO later(k, v) VALUES (?, ?)");
    sql->BeginWrite();
    insert->Bind(1, 1);
    insert->Bind(2, "kept");
    insert->Execute();
    sql->Exec("SAVEPOINT file");
    insert->Bind(1, 2);
    insert->BindNull(2);
    try {
      insert->ExecuteLater();  // SQLite: fails here; PostgreSQL: the failure waits unread
    } catch (const store::SqlError&) {
      EXPECT_EQ(sql->dialect(), store::SqlDialect::kSqlite);
    }
    sql->Exec("ROLLBACK TO file; RELEASE file");
    sql->Exec("COMMIT");
    EXPECT_EQ(testing::Rows(*sql, "SELECT k, v FROM later ORDER BY k"), "1|kept\n");
  }
}

}  // namespace
}  // namespace xladb
