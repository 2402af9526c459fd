// SqlStatement::ExecuteLater, SqlConnection::ExecLater and RunTogether on both backends: statements sent without
// waiting still run in order (a later read sees them, more than a pipeline's depth of them all arrive), a failing
// one is reported no later than the next call that waits for the server (SQLite: at once), after which the
// connection works again, and reads run together give each its own rows.
#include <gtest/gtest.h>

#include <memory>
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
    testing::ExpectNotNullViolation([&] {
      bad->ExecuteLater();
      good->Bind(1, 3);
      good->ExecuteLater();  // its second run
      sql->Exec("RELEASE file");
    });
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

// A SAVEPOINT sent with ExecLater: the statements after it run inside it (a rollback to it keeps what came
// before), and a failing ExecLater is thrown by the next call that waits.
TEST_F(ExecuteLaterOnBothBackends, ExecLaterRunsInOrderAndItsErrorIsThrownByTheNextWait) {
  for (SqlConnection* sql : Backends()) {
    SCOPED_TRACE(Name(*sql));
    auto insert = sql->Prepare("INSERT INTO later(k, v) VALUES (?, 'x')");
    sql->BeginWrite();
    insert->Bind(1, 1);
    insert->ExecuteLater();
    sql->ExecLater("SAVEPOINT file");
    insert->Bind(1, 2);
    insert->ExecuteLater();
    sql->Exec("ROLLBACK TO file");  // the insert after the savepoint goes, the one before it stays
    EXPECT_EQ(testing::Rows(*sql, "SELECT k FROM later ORDER BY k"), "1\n");
    bool thrown_at_once = false;
    try {
      sql->ExecLater("RELEASE no_such_savepoint");
    } catch (const store::SqlError&) {
      thrown_at_once = true;
    }
    EXPECT_EQ(thrown_at_once, sql->dialect() == store::SqlDialect::kSqlite);
    if (!thrown_at_once) {
      try {
        sql->Exec("RELEASE file");  // skipped by the server: the error before it is what is thrown
        ADD_FAILURE() << "the failed RELEASE was not reported";
      } catch (const store::SqlError& e) {
        EXPECT_NE(std::string(e.what()).find("no_such_savepoint"), std::string::npos) << e.what();
      }
    }
    sql->Exec("ROLLBACK");
  }
}

// A writer's savepoint a file: SAVEPOINT and RELEASE sent again and again keep their meaning once PostgreSQL
// runs them as prepared statements (from their second run), across a savepoint rolled back, a transaction
// rolled back and the next one; and they are prepared there, not parsed each time.
TEST_F(ExecuteLaterOnBothBackends, SavepointsSentOverAndOverKeepTheirMeaningAndArePrepared) {
  for (SqlConnection* sql : Backends()) {
    SCOPED_TRACE(Name(*sql));
    auto insert = sql->Prepare("INSERT INTO later(k, v) VALUES (?, 'x')");
    sql->BeginWrite();
    for (int k = 0; k < 6; ++k) {
      store::Savepoint file(*sql, "file");
      insert->Bind(1, k);
      insert->ExecuteLater();
      if (k % 2 == 1) {
        file.RollBack();
      } else {
        file.Release();
      }
    }
    sql->Exec("COMMIT");
    sql->BeginWrite();
    {
      store::Savepoint file(*sql, "file");
      insert->Bind(1, 10);
      insert->ExecuteLater();
      file.Release();
    }
    sql->Exec("ROLLBACK");  // the released savepoint's row goes with its transaction
    sql->BeginWrite();
    {
      store::Savepoint file(*sql, "file");
      insert->Bind(1, 11);
      insert->ExecuteLater();
      file.Release();
    }
    sql->Exec("COMMIT");
    EXPECT_EQ(testing::Rows(*sql, "SELECT k FROM later ORDER BY k"), "0\n2\n4\n11\n");
    if (sql->dialect() == store::SqlDialect::kPostgresql) {
      EXPECT_EQ(testing::Rows(*sql, "SELECT statement FROM pg_prepared_statements "
                                    "WHERE statement IN ('SAVEPOINT file', 'RELEASE file') ORDER BY statement"),
                "RELEASE file\nSAVEPOINT file\n");
    }
  }
}

// A statement destroyed while a failed answer waits unread (its destructor reads the answers quietly) does not
// hide the failure: the next call that waits throws it (not the later "transaction is aborted" it caused), and
// a ROLLBACK forgets it.
TEST_F(ExecuteLaterOnBothBackends, OnPostgresqlAnErrorReadInADestructorIsThrownByTheNextWait) {
  SqlConnection& sql = postgres_->connection();
  sql.BeginWrite();
  sql.ExecLater("RELEASE no_such_savepoint");
  { auto destroyed = sql.Prepare("SELECT 1"); }
  auto insert = sql.Prepare("INSERT INTO later(k, v) VALUES (1, 'x')");
  insert->ExecuteLater();  // fails too, later: "the transaction is aborted", the first failure's effect
  try {
    sql.Exec("COMMIT");
    ADD_FAILURE() << "the failed RELEASE was not reported";
  } catch (const store::SqlError& e) {
    EXPECT_NE(std::string(e.what()).find("no_such_savepoint"), std::string::npos) << e.what();
  }
  sql.Exec("ROLLBACK");
  // A read waits too: it throws the kept error before it runs.
  sql.BeginWrite();
  sql.ExecLater("RELEASE no_such_savepoint");
  { auto destroyed = sql.Prepare("SELECT 1"); }
  auto read = sql.Prepare("SELECT COUNT(*) FROM later");
  try {
    (void)read->Step();
    ADD_FAILURE() << "the failed RELEASE was not reported by the read";
  } catch (const store::SqlError& e) {
    EXPECT_NE(std::string(e.what()).find("no_such_savepoint"), std::string::npos) << e.what();
  }
  read->Reset();
  sql.Exec("ROLLBACK");
  sql.BeginWrite();
  sql.ExecLater("RELEASE no_such_savepoint");
  { auto destroyed = sql.Prepare("SELECT 1"); }
  sql.Exec("ROLLBACK");  // forgets it
  EXPECT_EQ(testing::Rows(sql, "SELECT COUNT(*) FROM later"), "0\n");
}

// Reads run together behind statements still unanswered see those statements' writes, each gets its own rows
// (none, one, many), and each runs again normally afterwards.
TEST_F(ExecuteLaterOnBothBackends, ReadsRunTogetherEachGetTheirOwnRows) {
  for (SqlConnection* sql : Backends()) {
    SCOPED_TRACE(Name(*sql));
    sql->BeginWrite();
    auto insert = sql->Prepare("INSERT INTO later(k, v) VALUES (?, ?)");
    for (int k = 1; k <= 3; ++k) {
      insert->Bind(1, k);
      insert->Bind(2, "v" + std::to_string(k));
      insert->ExecuteLater();
    }
    auto count = sql->Prepare("SELECT COUNT(*) FROM later");
    auto one = sql->Prepare("SELECT v FROM later WHERE k = ?");
    auto none = sql->Prepare("SELECT v FROM later WHERE k > 100");
    auto all = sql->Prepare("SELECT k FROM later ORDER BY k DESC");
    for (int round = 0; round < 3; ++round) {  // the first run as text, the later ones prepared on the server
      SCOPED_TRACE(round);
      for (auto* st : {count.get(), one.get(), none.get(), all.get()}) {
        st->Reset();
        st->ClearBindings();
      }
      one->Bind(1, 2);
      store::SqlStatement* reads[] = {count.get(), one.get(), none.get(), all.get()};
      sql->RunTogether(reads);
      ASSERT_TRUE(count->Step());
      EXPECT_EQ(count->Int(0), 3);
      ASSERT_TRUE(one->Step());
      EXPECT_EQ(one->Text(0), "v2");
      EXPECT_FALSE(one->Step());
      EXPECT_FALSE(none->Step());
      std::string keys;
      while (all->Step()) keys += std::to_string(all->Int(0));
      EXPECT_EQ(keys, "321");
    }
    sql->Exec("COMMIT");
  }
}

// On PostgreSQL the reads run at RunTogether, all of them in one pipeline: a write made after it is not in
// the rows read afterwards (SQLite runs them when stepped, which the contract leaves to the caller).
TEST_F(ExecuteLaterOnBothBackends, OnPostgresqlReadsRunTogetherRunAtTheCall) {
  SqlConnection& sql = postgres_->connection();
  auto count = sql.Prepare("SELECT COUNT(*) FROM later");
  auto keys = sql.Prepare("SELECT MAX(k) FROM later");
  store::SqlStatement* reads[] = {count.get(), keys.get()};
  sql.RunTogether(reads);
  sql.Exec("INSERT INTO later(k, v) VALUES (7, 'after')");
  ASSERT_TRUE(count->Step());
  EXPECT_EQ(count->Int(0), 0);
  ASSERT_TRUE(keys->Step());
  EXPECT_TRUE(keys->IsNull(0));
}

// On PostgreSQL a statement run while answers wait joins them and is answered with them, one round trip: outside
// a transaction the server then runs them as one (libpq's pipeline: one implicit transaction up to the sync),
// so the read sees the transaction id the insert sent before it took. Read after a round trip of its own, it
// ran in a transaction of its own, which has none.
TEST_F(ExecuteLaterOnBothBackends, OnPostgresqlAStatementRunWhileAnswersWaitIsAnsweredWithThem) {
  SqlConnection& sql = postgres_->connection();
  auto insert = sql.Prepare("INSERT INTO later(k, v) VALUES (1, pg_current_xact_id()::text)");
  insert->ExecuteLater();
  auto read = sql.Prepare("SELECT pg_current_xact_id_if_assigned()::text, (SELECT v FROM later WHERE k = 1)");
  ASSERT_TRUE(read->Step());
  EXPECT_FALSE(read->IsNull(0)) << "the read ran in a transaction of its own";
  EXPECT_EQ(read->Text(0), read->Text(1));
  // And its own error, or one sent before it, is thrown by it.
  auto bad = sql.Prepare("INSERT INTO later(k, v) VALUES (2, NULL)");
  bad->ExecuteLater();
  auto after = sql.Prepare("SELECT COUNT(*) FROM later");
  testing::ExpectNotNullViolation([&] { (void)after->Step(); });
  after->Reset();
  ASSERT_TRUE(after->Step());
  EXPECT_EQ(after->Int(0), 1);
}

// A read that fails among reads run together is thrown by RunTogether; the connection works after a rollback.
TEST_F(ExecuteLaterOnBothBackends, AFailingReadRunTogetherIsThrown) {
  for (SqlConnection* sql : Backends()) {
    SCOPED_TRACE(Name(*sql));
    sql->BeginWrite();
    sql->Exec("INSERT INTO later(k, v) VALUES (1, 'a')");
    sql->Exec("SAVEPOINT file");
    auto fine = sql->Prepare("SELECT COUNT(*) FROM later");
    auto failing = sql->Prepare("SELECT CAST(v AS BIGINT) FROM later");  // 'a' is no number on PostgreSQL
    store::SqlStatement* reads[] = {fine.get(), failing.get()};
    if (sql->dialect() == store::SqlDialect::kPostgresql) {
      EXPECT_THROW(sql->RunTogether(reads), store::SqlError);
    } else {
      sql->RunTogether(reads);  // nothing runs yet; SQLite's CAST makes 'a' 0 anyway
    }
    fine->Reset();
    failing->Reset();
    sql->Exec("ROLLBACK TO file");
    EXPECT_EQ(testing::Rows(*sql, "SELECT k, v FROM later"), "1|a\n");
    sql->Exec("COMMIT");
  }
}

}  // namespace
}  // namespace xladb
