// Bulk appends (store/backend/bulk_insert.h) and the batch interning of whole texts (InternedTexts::Ids), run the same way
// on SQLite (multi-row INSERTs) and PostgreSQL (one array a column to INSERT … SELECT unnest(…), …), with the
// same answers: a key repeated within one batch updates the earlier row as separate INSERTs would, texts with
// the characters an array literal quotes or escapes come back whole, more rows than one batch all arrive, an
// append runs after the statements sent before it, and a hash taken by another text is an error on both.
#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <cmath>
#include <functional>
#include <limits>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "store/backend/bulk_batch.h"
#include "store/backend/bulk_insert.h"
#include "store/facts/interned_texts.h"
#include "store/facts/long_text.h"
#include "store/backend/sql_connection.h"
#include "store/postgres/postgres_backend.h"
#include "tests/postgres/both_backends.h"

namespace xladb {
namespace {

using store::BulkCell;
using store::BulkInsert;
using store::BulkRows;
using store::SqlConnection;

const BulkInsert kPairs{"bulk_pairs", "k1, k2, v, n",
                        "ON CONFLICT(k1, k2) DO UPDATE SET v = excluded.v, n = COALESCE(excluded.n, bulk_pairs.n)",
                        2};

// Rows built the way store/backend/bulk_batch.h builds them.
struct Rows {
  std::vector<BulkCell> cells;
  std::vector<std::string> texts;
  void Int(int64_t v) { cells.push_back({v, BulkCell::Kind::kInt}); }
  void Null() { cells.push_back({0, BulkCell::Kind::kNull}); }
  void Text(std::string v) {
    cells.push_back({static_cast<int64_t>(texts.size()), BulkCell::Kind::kText});
    texts.push_back(std::move(v));
  }
  void Row(int64_t k1, const std::string& k2, const std::string& v, std::optional<int64_t> n) {
    Int(k1);
    Text(k2);
    Text(v);
    if (n) Int(*n); else Null();
  }
  int64_t AppendTo(SqlConnection& sql) { return sql.AppendRows(BulkRows{kPairs, cells, texts}); }
};

class BulkRowsOnBothBackends : public testing::BothBackends {
 protected:
  void SetUp() override {
    BothBackends::SetUp();
    for (SqlConnection* sql : Backends()) {
      sql->Exec("CREATE TABLE bulk_pairs(k1 BIGINT NOT NULL, k2 TEXT NOT NULL, v TEXT, n BIGINT, "
                "PRIMARY KEY(k1, k2))");
    }
  }
};

TEST_F(BulkRowsOnBothBackends, ARepeatedKeyUpdatesTheEarlierRowAsSeparateInsertsWould) {
  for (SqlConnection* sql : Backends()) {
    SCOPED_TRACE(Name(*sql));
    Rows rows;
    rows.Row(1, "a", "first", 10);
    rows.Row(2, "a", "other", std::nullopt);
    rows.Row(1, "a", "second", std::nullopt);  // same key: v replaced, n kept (COALESCE)
    rows.Row(1, "a", "third", 30);
    EXPECT_EQ(rows.AppendTo(*sql), 4);  // each row inserted or updated one row
    EXPECT_EQ(testing::Rows(*sql, "SELECT k1, k2, v, n FROM bulk_pairs ORDER BY k1, k2"), "1|a|third|30\n2|a|other|NULL\n");
  }
}

TEST_F(BulkRowsOnBothBackends, TextsComeBackByteForByte) {
  const std::vector<std::string> texts = {"tab\there", "new\nline", "back\\slash \\N", "cr\rlf\r\n", "",
                                          "ünïcode ✓", "ends at a NUL", "quote\"d \\\"", "{braces}, a comma",
                                          "NULL", "  spaces around  ", "\"", "\\"};
  for (SqlConnection* sql : Backends()) {
    SCOPED_TRACE(Name(*sql));
    Rows rows;
    for (size_t i = 0; i < texts.size(); ++i) rows.Row(static_cast<int64_t>(i), "k", texts[i], std::nullopt);
    rows.Row(99, "k", std::string("ends at a NUL\0hidden", 20), std::nullopt);
    rows.Int(100); rows.Text("k"); rows.Null(); rows.Null();  // a NULL text stays NULL, not ''
    EXPECT_EQ(rows.AppendTo(*sql), static_cast<int64_t>(texts.size()) + 2);
    auto q = sql->Prepare("SELECT v FROM bulk_pairs WHERE k1 = ?");
    for (size_t i = 0; i < texts.size(); ++i) {
      q->Bind(1, static_cast<int64_t>(i));
      ASSERT_TRUE(q->Step());
      EXPECT_EQ(q->Text(0), texts[i]) << i;
      q->Reset();
    }
    EXPECT_EQ(testing::Rows(*sql, "SELECT COALESCE(v, 'NULL') FROM bulk_pairs WHERE k1 = 100"), "NULL\n");
    // PostgreSQL's text holds no NUL: there the text ends at it, as a bound parameter's does; SQLite keeps the
    // bytes, and its length() counts to the NUL.
    EXPECT_EQ(testing::Rows(*sql, "SELECT length(v) FROM bulk_pairs WHERE k1 = 99"), "13\n");
  }
}

TEST_F(BulkRowsOnBothBackends, MoreRowsThanOneBatchAllArrive) {
  for (SqlConnection* sql : Backends()) {
    SCOPED_TRACE(Name(*sql));
    const int64_t n = static_cast<int64_t>(sql->bulk_batch_rows()) * 2 + 3;
    Rows rows;
    for (int64_t i = 0; i < n; ++i) rows.Row(i, "k", "v" + std::to_string(i), i * 2);
    EXPECT_EQ(rows.AppendTo(*sql), n);
    EXPECT_EQ(testing::Rows(*sql, "SELECT COUNT(*), SUM(n), MIN(k1), MAX(k1) FROM bulk_pairs"),
              std::to_string(n) + "|" + std::to_string(n * (n - 1)) + "|0|" + std::to_string(n - 1) + "\n");
    EXPECT_EQ(testing::Rows(*sql, "SELECT v FROM bulk_pairs WHERE k1 = " + std::to_string(n - 1)),
              "v" + std::to_string(n - 1) + "\n");
  }
}

// Many batches in a row (on PostgreSQL 160 Ki rows through one prepared statement): every batch counts and
// stores its rows.
TEST_F(BulkRowsOnBothBackends, ManyBatchesEachStoreAndCountTheirRows) {
  constexpr int64_t kBatches = 40, kRows = 4096;
  for (SqlConnection* sql : Backends()) {
    SCOPED_TRACE(Name(*sql));
    int64_t changed = 0;
    for (int64_t b = 0; b < kBatches; ++b) {
      Rows rows;
      for (int64_t i = 0; i < kRows; ++i) rows.Row(b * kRows + i, "k", "v", b);
      changed += rows.AppendTo(*sql);
    }
    EXPECT_EQ(changed, kBatches * kRows);
    EXPECT_EQ(testing::Rows(*sql, "SELECT COUNT(*), SUM(n) FROM bulk_pairs"),
              std::to_string(kBatches * kRows) + "|" + std::to_string(kRows * kBatches * (kBatches - 1) / 2) + "\n");
  }
}

// An append goes after the statements sent before it and not yet answered (PostgreSQL sends it behind them):
// its rows update the row an earlier insert wrote, and an earlier statement's error is thrown by the append.
TEST_F(BulkRowsOnBothBackends, AnAppendRunsAfterTheStatementsSentBeforeIt) {
  for (SqlConnection* sql : Backends()) {
    SCOPED_TRACE(Name(*sql));
    sql->BeginWrite();
    Rows first;  // the append's statement prepared (that waits), so the appends below go behind the insert
    first.Row(0, "a", "prepared", 0);
    EXPECT_EQ(first.AppendTo(*sql), 1);
    auto insert = sql->Prepare("INSERT INTO bulk_pairs(k1, k2, v, n) VALUES (?, 'a', ?, 5)");
    insert->Bind(1, 1);
    insert->Bind(2, "sent first");
    insert->ExecuteLater();
    Rows rows;
    rows.Row(1, "a", "appended", std::nullopt);  // the same key: v replaced, n kept
    rows.Row(2, "a", "new", 7);
    EXPECT_EQ(rows.AppendTo(*sql), 2);
    EXPECT_EQ(testing::Rows(*sql, "SELECT k1, v, n FROM bulk_pairs ORDER BY k1"),
              "0|prepared|0\n1|appended|5\n2|new|7\n");
    sql->Exec("SAVEPOINT file");
    auto failing = sql->Prepare("INSERT INTO bulk_pairs(k1, k2, v) VALUES (3, NULL, 'x')");  // k2 is NOT NULL
    testing::ExpectNotNullViolation([&] {
      failing->ExecuteLater();  // SQLite: fails here; PostgreSQL: the failure waits unread
      Rows later;
      later.Row(5, "c", "after the failure", 1);
      later.AppendTo(*sql);
    });
    sql->Exec("ROLLBACK TO file");
    sql->Exec("COMMIT");
    EXPECT_EQ(testing::Rows(*sql, "SELECT k1, v FROM bulk_pairs ORDER BY k1"), "0|prepared\n1|appended\n2|new\n");
  }
}

// Texts of several MiB: on PostgreSQL a statement's arrays end past kMaxArrayBytes, so these three rows go in
// two statements (the split keeps a message far below the server's 1 GB, which this test does not reach);
// every row arrives whole and counts once.
TEST_F(BulkRowsOnBothBackends, BigTextsAreSplitAcrossStatementsAndArriveWhole) {
  const size_t big = store::PostgresBackend::kMaxArrayBytes / 2 + 1;
  for (SqlConnection* sql : Backends()) {
    SCOPED_TRACE(Name(*sql));
    Rows rows;
    for (int64_t k = 0; k < 3; ++k) rows.Row(k, "k", std::string(big, static_cast<char>('a' + k)) + "\"end\"", k);
    EXPECT_EQ(rows.AppendTo(*sql), 3);
    EXPECT_EQ(testing::Rows(*sql, "SELECT k1, length(v), substr(v, 1, 1), substr(v, length(v) - 4, 5), n "
                                  "FROM bulk_pairs ORDER BY k1"),
              "0|" + std::to_string(big + 5) + "|a|\"end\"|0\n1|" + std::to_string(big + 5) + "|b|\"end\"|1\n2|" +
                  std::to_string(big + 5) + "|c|\"end\"|2\n");
  }
}

// Rows appended without waiting (AppendRowsLater) are there for the next read, in order with an append that
// waits, and a failing one is thrown no later than the next call that waits (SQLite: at once).
TEST_F(BulkRowsOnBothBackends, RowsAppendedLaterArriveAndTheirErrorIsThrownByTheNextWait) {
  for (SqlConnection* sql : Backends()) {
    SCOPED_TRACE(Name(*sql));
    sql->BeginWrite();
    for (int64_t batch = 0; batch < 3; ++batch) {
      Rows rows;
      for (int64_t i = 0; i < 100; ++i) rows.Row(i, "k", "v" + std::to_string(batch), batch);  // each batch updates
      sql->AppendRowsLater(BulkRows{kPairs, rows.cells, rows.texts});
    }
    EXPECT_EQ(testing::Rows(*sql, "SELECT COUNT(*), MIN(v), MAX(v), SUM(n) FROM bulk_pairs"), "100|v2|v2|200\n");
    sql->Exec("SAVEPOINT file");
    Rows bad;
    bad.Int(1); bad.Null(); bad.Null(); bad.Null();  // k2 is NOT NULL
    testing::ExpectNotNullViolation([&] {
      sql->AppendRowsLater(BulkRows{kPairs, bad.cells, bad.texts});
      sql->Exec("RELEASE file");
    });
    sql->Exec("ROLLBACK TO file");
    sql->Exec("COMMIT");
    EXPECT_EQ(testing::Rows(*sql, "SELECT COUNT(*) FROM bulk_pairs"), "100\n");
  }
}

// Which appends may go without waiting: those whose every row inserts or updates one.
TEST(BulkInsert, EveryRowChangesUnlessAConflictCanSkipIt) {
  EXPECT_TRUE(BulkInsert("t", "a, b", "", 1).every_row_changes());
  EXPECT_TRUE(BulkInsert("t", "a, b", "ON CONFLICT(a) DO UPDATE SET b = excluded.b", 1).every_row_changes());
  EXPECT_FALSE(BulkInsert("t", "a, b", "ON CONFLICT DO NOTHING", 1).every_row_changes());
  EXPECT_FALSE(BulkInsert("t", "a, b", "ON CONFLICT(a) DO UPDATE SET b = excluded.b WHERE t.b < excluded.b", 1)
                   .every_row_changes());
  EXPECT_FALSE(BulkInsert("t", "a, b", "on conflict(a) do update set b = excluded.b\nwhere t.b < 2", 1)
                   .every_row_changes());
  EXPECT_TRUE(BulkInsert("t", "a, b", "ON CONFLICT(a) DO\n  UPDATE SET b = excluded.b", 1).every_row_changes());
  EXPECT_EQ(BulkInsert("t", "a,  b , c", "", 1).column_names(), (std::vector<std::string>{"a", "b", "c"}));
}

// An append with a RETURNING list answers, for each row it stored, the columns named, and counts those rows
// only: a row left alone by its conflict clause (a key stored before, or repeated in the batch) returns
// nothing. More rows than one statement takes on SQLite (64), and a key repeated, which splits the batch into
// two statements on PostgreSQL, all answer.
TEST_F(BulkRowsOnBothBackends, AnAppendReturnsTheColumnsOfTheRowsItStored) {
  static const BulkInsert kTexts("long_texts", "hash, text", "ON CONFLICT DO NOTHING", 1, "hash, text_id");
  EXPECT_EQ(kTexts.returned_columns(), 2);
  for (SqlConnection* sql : Backends()) {
    SCOPED_TRACE(Name(*sql));
    sql->Exec("INSERT INTO long_texts(hash, text) VALUES (2, 'stored before')");
    Rows rows;
    for (int64_t k = 1; k <= 100; ++k) {
      rows.Int(k);
      rows.Text("text " + std::to_string(k));
    }
    rows.Int(1);  // repeated in the batch: left alone
    rows.Text("text 1 again");
    std::vector<int64_t> returned;
    EXPECT_EQ(sql->AppendRowsReturning(BulkRows{kTexts, rows.cells, rows.texts}, returned), 99);
    ASSERT_EQ(returned.size(), 2u * 99);
    std::map<int64_t, int64_t> id_of;
    for (size_t r = 0; r < returned.size(); r += 2) id_of[returned[r]] = returned[r + 1];
    std::string answered;
    for (const auto& [hash, id] : id_of) answered += std::to_string(hash) + "|" + std::to_string(id) + "\n";
    EXPECT_EQ(answered, testing::Rows(*sql, "SELECT hash, text_id FROM long_texts WHERE hash <> 2 ORDER BY hash"));
    EXPECT_EQ(testing::Rows(*sql, "SELECT text FROM long_texts WHERE hash IN (1, 2) ORDER BY hash"),
              "text 1\nstored before\n");
    // A BulkInsert that returns nothing cannot answer.
    std::vector<int64_t> none;
    EXPECT_THROW((void)sql->AppendRowsReturning(BulkRows{kPairs, rows.cells, rows.texts}, none), store::SqlError);
  }
}

// On PostgreSQL a batch of whole texts is looked up first and only the texts not found are inserted (their
// ids from the insert): a batch of texts stored before inserts nothing and takes no id from the sequence (an
// insert meeting its conflict would), which a store of nightly runs of one program meets at every batch. With
// INSERT on long_texts revoked, such a batch still succeeds; one with a new text is refused.
TEST_F(BulkRowsOnBothBackends, OnPostgresqlStoredTextsAreFoundWithoutAnInsert) {
  SqlConnection& sql = postgres_->connection();
  store::InternedTexts long_texts("long_texts", "text_id", "text", store::InternedTexts::Key::kUniqueHash);
  const std::vector<store::LongText> first = {{"%a = f32[] constant(1)"}, {"%b = f32[] constant(2)"}};
  std::vector<int64_t> ids(first.size());
  ASSERT_EQ(long_texts.Ids(sql, first, ids), 2);
  EXPECT_EQ(testing::Rows(sql, "SELECT hash FROM long_texts WHERE text_id = " + std::to_string(ids[1])),
            std::to_string(store::LongTextHash(first[1])) + "\n");
  const std::string sequence = testing::Rows(sql, "SELECT last_value FROM long_texts_text_id_seq");
  sql.Exec("REVOKE INSERT ON long_texts FROM CURRENT_USER");
  store::InternedTexts other("long_texts", "text_id", "text", store::InternedTexts::Key::kUniqueHash);
  const std::vector<store::LongText> again = {first[1], first[0], first[1]};
  std::vector<int64_t> again_ids(again.size());
  EXPECT_EQ(other.Ids(sql, again, again_ids), 0);
  EXPECT_EQ(again_ids, (std::vector<int64_t>{ids[1], ids[0], ids[1]}));
  EXPECT_EQ(testing::Rows(sql, "SELECT last_value FROM long_texts_text_id_seq"), sequence);
  const std::vector<store::LongText> mixed = {{"%e = f32[] constant(5)"}, first[0]};
  std::vector<int64_t> mixed_ids(mixed.size());
  try {
    (void)other.Ids(sql, mixed, mixed_ids);
    ADD_FAILURE() << "the new text was not inserted";
  } catch (const store::SqlError& e) {
    EXPECT_NE(std::string(e.what()).find("permission denied"), std::string::npos) << e.what();
  }
}

// A batch whose every row the caller vouches is new goes by the insert without its conflict clause: a key
// stored before is then refused (a duplicate key) where the upsert would merge it, which shows which statement
// ran. One row not vouched for sends the whole batch by the upsert, a repeated key included.
TEST_F(BulkRowsOnBothBackends, ABatchOfNewKeysGoesWithoutTheConflictClause) {
  using Keys = store::BulkBatch::Keys;
  for (SqlConnection* sql : Backends()) {
    SCOPED_TRACE(Name(*sql));
    sql->BeginWrite();
    store::BulkBatch batch(&kPairs);
    auto row = [&](int64_t k1, const std::string& v, Keys keys) {
      batch.Int(k1); batch.Text("k"); batch.Text(v); batch.Int(k1);
      return batch.EndRow(*sql, keys);
    };
    EXPECT_EQ(row(1, "new", Keys::kNew) + row(2, "new", Keys::kNew) + batch.Flush(*sql), 2);
    EXPECT_EQ(row(3, "new", Keys::kNew) + row(1, "merged", Keys::kMayExist) + row(1, "again", Keys::kMayExist) +
                  batch.Flush(*sql),
              3);
    EXPECT_EQ(testing::Rows(*sql, "SELECT k1, v FROM bulk_pairs ORDER BY k1"), "1|again\n2|new\n3|new\n");
    // A row never ended is not vouched for: its batch goes by the upsert.
    (void)row(4, "new", Keys::kNew);
    batch.Int(3); batch.Text("k"); batch.Text("merged, not ended"); batch.Int(3);
    EXPECT_EQ(batch.Flush(*sql), 2);
    EXPECT_EQ(testing::Rows(*sql, "SELECT v FROM bulk_pairs WHERE k1 = 3"), "merged, not ended\n");
    sql->Exec("DELETE FROM bulk_pairs WHERE k1 = 4");
    sql->Exec("UPDATE bulk_pairs SET v = 'new' WHERE k1 = 3");
    sql->Exec("SAVEPOINT file");
    EXPECT_THROW(
        {
          (void)row(2, "vouched for, wrongly", Keys::kNew);
          (void)batch.Flush(*sql);
          sql->Exec("RELEASE file");  // PostgreSQL's error arrives with the next wait
        },
        store::SqlError);
    sql->Exec("ROLLBACK TO file");
    sql->Exec("COMMIT");
    EXPECT_EQ(testing::Rows(*sql, "SELECT k1, v FROM bulk_pairs ORDER BY k1"), "1|again\n2|new\n3|new\n");
  }
}

// Doubles go as the shortest text that reads back exactly (PostgreSQL) or bound as doubles (SQLite): each comes
// back the same double, whatever its decimal form, with the infinities and a NULL beside them.
TEST_F(BulkRowsOnBothBackends, RealsComeBackAsTheSameDouble) {
  static const BulkInsert kReals{"bulk_reals", "k, r", "", 0};
  const std::vector<double> reals = {0.1, 1.0 / 3, 2.0 / 7 * 1e-300, -2.5e10, 5e-324, 1.7976931348623157e308,
                                     123456789.123456789, std::numeric_limits<double>::infinity(),
                                     -std::numeric_limits<double>::infinity()};
  for (SqlConnection* sql : Backends()) {
    SCOPED_TRACE(Name(*sql));
    sql->Exec("CREATE TABLE bulk_reals(k BIGINT PRIMARY KEY, r DOUBLE PRECISION)");
    store::BulkBatch batch(&kReals);
    for (size_t i = 0; i < reals.size(); ++i) {
      batch.Int(static_cast<int64_t>(i));
      batch.Real(reals[i]);
      (void)batch.EndRow(*sql);
    }
    batch.Int(100);
    batch.Null();
    (void)batch.EndRow(*sql);
    EXPECT_EQ(batch.Flush(*sql), static_cast<int64_t>(reals.size()) + 1);
    auto q = sql->Prepare("SELECT k, r FROM bulk_reals WHERE r IS NOT NULL ORDER BY k");
    size_t read = 0;
    while (q->Step()) {
      const auto k = static_cast<size_t>(q->Int(0));
      ASSERT_LT(k, reals.size());
      EXPECT_EQ(q->Real(1), reals[k]) << k;
      ++read;
    }
    EXPECT_EQ(read, reals.size());
    EXPECT_EQ(testing::Rows(*sql, "SELECT COUNT(*) FROM bulk_reals WHERE r IS NULL"), "1\n");
  }
  // PostgreSQL's float8 keeps a negative zero and NaN; SQLite stores an integral REAL as an integer (the sign of
  // zero goes) and NaN as NULL, so those two are asked of PostgreSQL alone.
  SqlConnection& pg = postgres_->connection();
  store::BulkBatch batch(&kReals);
  batch.Int(200);
  batch.Real(-0.0);
  (void)batch.EndRow(pg);
  batch.Int(201);
  batch.Real(std::numeric_limits<double>::quiet_NaN());
  (void)batch.EndRow(pg);
  EXPECT_EQ(batch.Flush(pg), 2);
  auto q = pg.Prepare("SELECT r FROM bulk_reals WHERE k >= 200 ORDER BY k");
  ASSERT_TRUE(q->Step());
  EXPECT_EQ(q->Real(0), 0.0);
  EXPECT_TRUE(std::signbit(q->Real(0)));
  ASSERT_TRUE(q->Step());
  EXPECT_TRUE(std::isnan(q->Real(0)));
}

// On PostgreSQL a column of bigint, text or double precision goes as a binary array and any other as a
// text-format one (and so does a column given a cell of another kind): integers at both ends of 64 bits, NULLs
// among them, an integer column narrower than 64 bits and an integer given to a text column all arrive as
// SQLite stores them.
TEST_F(BulkRowsOnBothBackends, EveryColumnTypeAndTheIntegersAtTheEdgesArriveAsGiven) {
  static const BulkInsert kMixed{"bulk_mixed", "k, narrow, label, wide", "", 0};
  constexpr int64_t kMin = std::numeric_limits<int64_t>::min(), kMax = std::numeric_limits<int64_t>::max();
  for (SqlConnection* sql : Backends()) {
    SCOPED_TRACE(Name(*sql));
    sql->Exec("CREATE TABLE bulk_mixed(k BIGINT PRIMARY KEY, narrow INTEGER, label TEXT, wide BIGINT)");
    store::BulkBatch batch(&kMixed);
    const std::vector<int64_t> keys = {kMin, -1, 0, 1, 255, 256, 1LL << 32, kMax};
    for (size_t i = 0; i < keys.size(); ++i) {
      batch.Int(keys[i]);
      batch.Int(static_cast<int64_t>(i) - 3);
      if (i == 2) {
        batch.Int(42);  // an integer cell in a text column
      } else {
        batch.Text("t" + std::to_string(i));
      }
      if (i % 3 == 0) {
        batch.Null();
      } else {
        batch.Int(-keys[i] / 2);
      }
      (void)batch.EndRow(*sql);
    }
    EXPECT_EQ(batch.Flush(*sql), static_cast<int64_t>(keys.size()));
    EXPECT_EQ(testing::Rows(*sql, "SELECT k, narrow, label, COALESCE(wide, -7) FROM bulk_mixed ORDER BY k"),
              "-9223372036854775808|-3|t0|-7\n"
              "-1|-2|t1|0\n"
              "0|-1|42|0\n"
              "1|0|t3|-7\n"
              "255|1|t4|-127\n"
              "256|2|t5|-128\n"
              "4294967296|3|t6|-7\n"
              "9223372036854775807|4|t7|-4611686018427387903\n");
  }
}

// The twin without a conflict clause exists only where there is a clause to leave out, and not for an insert
// that returns ids (which must say which rows it stored).
TEST(BulkInsert, OnlyAnInsertWithAConflictClauseHasATwinForNewKeys) {
  ASSERT_NE(kPairs.for_new_keys(), nullptr);
  EXPECT_EQ(kPairs.for_new_keys()->conflict(), "");
  EXPECT_EQ(kPairs.for_new_keys()->table(), kPairs.table());
  EXPECT_EQ(kPairs.for_new_keys()->column_list(), kPairs.column_list());
  EXPECT_EQ(BulkInsert("t", "a, b", "", 1).for_new_keys(), nullptr);
  EXPECT_EQ(BulkInsert("t", "a, b", "ON CONFLICT DO NOTHING", 1, "a").for_new_keys(), nullptr);
}

TEST_F(BulkRowsOnBothBackends, ABatchThatFailsLeavesNothingAndTheNextOneWorks) {
  for (SqlConnection* sql : Backends()) {
    SCOPED_TRACE(Name(*sql));
    sql->BeginWrite();
    sql->Exec("SAVEPOINT file");
    Rows bad;
    bad.Row(1, "a", "kept?", 1);
    bad.Int(2); bad.Null(); bad.Null(); bad.Null();  // k2 is NOT NULL
    EXPECT_THROW(bad.AppendTo(*sql), store::SqlError);
    sql->Exec("ROLLBACK TO SAVEPOINT file");
    Rows good;
    good.Row(3, "c", "after", 3);
    EXPECT_EQ(good.AppendTo(*sql), 1);
    sql->Exec("RELEASE file");
    sql->Exec("COMMIT");
    EXPECT_EQ(testing::Rows(*sql, "SELECT k1, v FROM bulk_pairs ORDER BY k1"), "3|after\n");
  }
}

TEST_F(BulkRowsOnBothBackends, WholeTextsAreInternedOnceABatch) {
  for (SqlConnection* sql : Backends()) {
    SCOPED_TRACE(Name(*sql));
    store::InternedTexts long_texts("long_texts", "text_id", "text", store::InternedTexts::Key::kUniqueHash);
    const std::vector<store::LongText> first = {{"%add = f32[8] add(%x, %y)"}, {"%mul = f32[8] multiply(%x, %x)"},
                                                {"%add = f32[8] add(%x, %y)"}};
    std::vector<int64_t> ids(first.size());
    EXPECT_EQ(long_texts.Ids(*sql, first, ids), 2);  // the repeated text is stored once
    EXPECT_EQ(ids[0], ids[2]);
    EXPECT_NE(ids[0], ids[1]);
    EXPECT_EQ(testing::Rows(*sql, "SELECT COUNT(*) FROM long_texts"), "2\n");
    EXPECT_EQ(testing::Rows(*sql, "SELECT text FROM long_texts WHERE text_id = " + std::to_string(ids[1])), first[1].text + "\n");

    // A later batch finds the stored texts (a writer without this object's state would too).
    store::InternedTexts other("long_texts", "text_id", "text", store::InternedTexts::Key::kUniqueHash);
    const std::vector<store::LongText> second = {{"%mul = f32[8] multiply(%x, %x)"}, {"%new = f32[] constant(0)"}};
    std::vector<int64_t> again(second.size());
    EXPECT_EQ(other.Ids(*sql, second, again), 1);
    EXPECT_EQ(again[0], ids[1]);
    EXPECT_EQ(testing::Rows(*sql, "SELECT COUNT(*) FROM long_texts"), "3\n");
  }
}

// Names are interned a batch at a time: a text repeated in the batch is stored once, a stored one is found (of
// a text stored twice, by two writers at once, the smallest id), and a later batch finds what an earlier one
// stored without asking the database again.
TEST_F(BulkRowsOnBothBackends, NamesAreInternedABatchAtATime) {
  for (SqlConnection* sql : Backends()) {
    SCOPED_TRACE(Name(*sql));
    sql->Exec("INSERT INTO names(hash, text) VALUES (" + std::to_string(store::TextHash("twice")) + ", 'twice'), (" +
              std::to_string(store::TextHash("twice")) + ", 'twice')");
    const std::string first_twice = testing::Rows(*sql, "SELECT MIN(name_id) FROM names WHERE text = 'twice'");
    store::InternedTexts names("names", "name_id", "text", store::InternedTexts::Key::kHash);
    // An op_name with a NUL (C-escaped \000 in the dump) is stored up to it, on both backends.
    const std::vector<std::string> batch = {"jit(f)/add", "twice", "jit(f)/mul", "jit(f)/add",
                                            std::string("jit(f)/nul\0tail", 15)};
    std::vector<int64_t> ids(batch.size());
    names.Ids(*sql, batch, ids);
    EXPECT_EQ(ids[0], ids[3]);
    EXPECT_NE(ids[0], ids[2]);
    EXPECT_EQ(std::to_string(ids[1]) + "\n", first_twice);
    EXPECT_EQ(testing::Rows(*sql, "SELECT COUNT(*) FROM names"), "5\n");  // twice (2), add, mul, nul
    store::InternedTexts one_at_a_time("names", "name_id", "text", store::InternedTexts::Key::kHash);
    for (size_t i = 0; i < 4; ++i) {
      EXPECT_EQ(testing::Rows(*sql, "SELECT text FROM names WHERE name_id = " + std::to_string(ids[i])), batch[i] + "\n");
      EXPECT_EQ(one_at_a_time.Id(*sql, batch[i]), ids[i]);  // what Id finds, from the table
    }
    EXPECT_EQ(testing::Rows(*sql, "SELECT text FROM names WHERE name_id = " + std::to_string(ids[4])), "jit(f)/nul\n");
    // A second writer's object finds them stored.
    store::InternedTexts other("names", "name_id", "text", store::InternedTexts::Key::kHash);
    std::vector<int64_t> again(batch.size());
    other.Ids(*sql, batch, again);
    EXPECT_EQ(again, ids);
    EXPECT_EQ(testing::Rows(*sql, "SELECT COUNT(*) FROM names"), "5\n");
  }
}

// Shapes and source paths (a UNIQUE text column) are interned one at a time: a text stored before is found, a
// new one stored once, on both backends; on PostgreSQL both by one statement (InternedTexts::FindOrInsert),
// which takes an id from the table's sequence only for a text it stores.
TEST_F(BulkRowsOnBothBackends, TextKeyedTextsAreFoundOrStoredOnce) {
  for (SqlConnection* sql : Backends()) {
    SCOPED_TRACE(Name(*sql));
    sql->Exec("INSERT INTO shapes(text) VALUES ('f32[8]{0}')");
    const std::string stored = testing::Rows(*sql, "SELECT shape_id FROM shapes WHERE text = 'f32[8]{0}'");
    store::InternedTexts shapes("shapes", "shape_id", "text", store::InternedTexts::Key::kText);
    EXPECT_EQ(std::to_string(shapes.Id(*sql, "f32[8]{0}")) + "\n", stored);
    const int64_t added = shapes.Id(*sql, "bf16[2,4]{1,0}");
    EXPECT_EQ(testing::Rows(*sql, "SELECT text FROM shapes WHERE shape_id = " + std::to_string(added)),
              "bf16[2,4]{1,0}\n");
    EXPECT_EQ(testing::Rows(*sql, "SELECT COUNT(*) FROM shapes"), "2\n");
    // A writer without this object's cache finds both, storing nothing.
    store::InternedTexts other("shapes", "shape_id", "text", store::InternedTexts::Key::kText);
    EXPECT_EQ(std::to_string(other.Id(*sql, "f32[8]{0}")) + "\n", stored);
    EXPECT_EQ(other.Id(*sql, "bf16[2,4]{1,0}"), added);
    EXPECT_EQ(testing::Rows(*sql, "SELECT COUNT(*) FROM shapes"), "2\n");
    // Finding a stored text takes no id: the next new one follows the last stored (PostgreSQL's sequence).
    EXPECT_EQ(other.Id(*sql, "pred[]"), added + 1);
  }
}

// Runs `work`, whose statement must wait for `other`'s open transaction, while a thread commits that
// transaction once `watcher` sees, in pg_stat_activity, another session waiting on a lock in a statement
// whose text holds `statement_part` (or after 10 s): the commit lands while the statement waits, not before
// it starts. Whether the wait was seen. `work` may throw: the thread is joined first.
bool CommitWhileBlocked(SqlConnection& watcher, SqlConnection& other, const std::string& statement_part,
                        const std::function<void()>& work) {
  std::atomic<bool> seen{false};
  {
    std::jthread committer([&] {
      const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(10);
      while (!seen && std::chrono::steady_clock::now() < deadline) {
        seen = testing::Rows(watcher, "SELECT COUNT(*) FROM pg_stat_activity WHERE wait_event_type = 'Lock' "
                                      "AND pid <> pg_backend_pid() AND query LIKE '%" + statement_part + "%'") != "0\n";
        if (!seen) std::this_thread::sleep_for(std::chrono::milliseconds(5));
      }
      other.Exec("COMMIT");
    });
    work();
  }
  return seen;
}

// On PostgreSQL a shape another writer is inserting at the same moment: the insert waits for that writer's
// transaction, meets the conflict when it commits, and the row is in neither part of the statement's answer
// (its snapshot is older); the lookup after it finds the other writer's row, and nothing is stored twice.
TEST_F(BulkRowsOnBothBackends, OnPostgresqlATextAnotherWriterCommitsMeanwhileIsFound) {
  auto other_writer = store::Database::Open(pg_.uri());
  auto watcher = store::Database::Open(pg_.uri());
  ASSERT_TRUE(other_writer.ok() && watcher.ok());
  SqlConnection& other = (*other_writer)->connection();
  other.Exec("BEGIN");
  other.Exec("INSERT INTO shapes(text) VALUES ('s32[4]{0}')");
  store::InternedTexts shapes("shapes", "shape_id", "text", store::InternedTexts::Key::kText);
  int64_t id = 0;
  EXPECT_TRUE(CommitWhileBlocked((*watcher)->connection(), other, "WITH found AS",
                                 [&] { id = shapes.Id(postgres_->connection(), "s32[4]{0}"); }));
  EXPECT_EQ(testing::Rows(postgres_->connection(), "SELECT shape_id, COUNT(*) FROM shapes GROUP BY shape_id"),
            std::to_string(id) + "|1\n");
}

// The same for whole texts: a text the batch's lookup did not find, which another writer commits while the
// insert waits, is not answered by the insert and is read back and compared; under its hash another text is
// an error (a collision), not a wrong id.
TEST_F(BulkRowsOnBothBackends, OnPostgresqlAWholeTextAnotherWriterCommitsMeanwhileIsReadBack) {
  for (const bool same_text : {true, false}) {
    SCOPED_TRACE(same_text ? "the same text" : "another text under its hash");
    auto other_writer = store::Database::Open(pg_.uri());
    auto watcher = store::Database::Open(pg_.uri());
    ASSERT_TRUE(other_writer.ok() && watcher.ok());
    SqlConnection& other = (*other_writer)->connection();
    const store::LongText text{same_text ? "%x = f32[] constant(7)" : "%z = f32[] constant(9)"};
    const std::string hash = std::to_string(store::LongTextHash(text));
    other.Exec("BEGIN");
    other.Exec("INSERT INTO long_texts(hash, text) VALUES (" + hash + ", '" +
               (same_text ? text.text : std::string("%other = f32[] constant(0)")) + "')");
    store::InternedTexts long_texts("long_texts", "text_id", "text", store::InternedTexts::Key::kUniqueHash);
    std::vector<int64_t> ids(1);
    std::string error;
    EXPECT_TRUE(CommitWhileBlocked((*watcher)->connection(), other, "INSERT INTO long_texts", [&] {
      try {
        (void)long_texts.Ids(postgres_->connection(), {text}, ids);
      } catch (const store::SqlError& e) {
        error = e.what();
      }
    }));
    const std::string stored = testing::Rows(postgres_->connection(), "SELECT text_id FROM long_texts WHERE hash = " + hash);
    if (same_text) {
      EXPECT_EQ(error, "");
      EXPECT_EQ(std::to_string(ids[0]) + "\n", stored);  // the other writer's row, the only one
    } else {
      EXPECT_NE(error.find("collision"), std::string::npos) << error;
    }
  }
}

// A text stored without its shape, op_name and source path (store/facts/long_text.h) reads back whole through
// long_text_details and instruction_details on both backends; the same printed text stored whole is another
// row; a cut part whose row is gone makes the text NULL, not another text.
TEST_F(BulkRowsOnBothBackends, ATextWithCutPartsIsSpelledOutWholeByTheViews) {
  for (SqlConnection* sql : Backends()) {
    SCOPED_TRACE(Name(*sql));
    store::InternedTexts shapes("shapes", "shape_id", "text", store::InternedTexts::Key::kText);
    store::InternedTexts names("names", "name_id", "text", store::InternedTexts::Key::kHash);
    store::InternedTexts sources("source_files", "source_file_id", "path", store::InternedTexts::Key::kText);
    const std::string shape = "f32[8]{0}", op_name = "jit(f)/add", path = "/src/model.py";
    const std::string printed = "%add = " + shape + " add(%x, %y), metadata={op_name=\"" + op_name +
                                "\" source_file=\"" + path + "\" source_line=7}";
    const int64_t shape_id = shapes.Id(*sql, shape), name_id = names.Id(*sql, op_name), path_id = sources.Id(*sql, path);
    const store::LongText cut = store::CutInternedParts(
        printed, {printed.find(shape), shape.size(), shape_id, shape},
        {printed.find(op_name), op_name.size(), name_id, op_name}, {printed.find(path), path.size(), path_id, path});
    ASSERT_EQ(cut.text, "%add = \x01 add(%x, %y), metadata={op_name=\"\x02\" source_file=\"\x03\" source_line=7}");

    store::InternedTexts long_texts("long_texts", "text_id", "text", store::InternedTexts::Key::kUniqueHash);
    const std::vector<store::LongText> texts = {cut, {printed}};
    std::vector<int64_t> ids(texts.size());
    EXPECT_EQ(long_texts.Ids(*sql, texts, ids), 2);
    EXPECT_NE(ids[0], ids[1]);
    for (int64_t id : ids) {
      EXPECT_EQ(testing::Rows(*sql, "SELECT text FROM long_text_details WHERE text_id = " + std::to_string(id)),
                printed + "\n");
    }
    sql->Exec("INSERT INTO runs(name, run_time_us, run_time_source, created_at_us, updated_at_us) "
              "VALUES ('r', 0, 'flag', 0, 0)");
    sql->Exec("INSERT INTO modules(run_id, name, stage, backend) SELECT run_id, 'm', 'after_optimizations', '' "
              "FROM runs");
    sql->Exec("INSERT INTO dump_files(run_id, path, kind, verdict, size_bytes, content_hash, ingested_at_us) "
              "SELECT run_id, 'f', 'hlo_module', 'ingested', 0, 'h', 0 FROM runs");
    sql->Exec("INSERT INTO instructions(module_id, name, text_id, file_id) SELECT module_id, 'add', " +
              std::to_string(ids[0]) + ", (SELECT file_id FROM dump_files) FROM modules");
    EXPECT_EQ(testing::Rows(*sql, "SELECT text FROM instruction_details WHERE name = 'add'"), printed + "\n");

    sql->Exec("DELETE FROM names WHERE name_id = " + std::to_string(name_id));
    EXPECT_EQ(testing::Rows(*sql, "SELECT COUNT(*) FROM long_text_details WHERE text IS NULL"), "1\n");
  }
}

// PostgreSQL's text holds no NUL: there a key ends at it, so two keys that differ only after it are one key,
// and the batch is split rather than failing; SQLite keeps the bytes and two keys. An interned text is cut at
// its NUL on both.
TEST_F(BulkRowsOnBothBackends, KeysAndTextsWithANulAreStored) {
  for (SqlConnection* sql : Backends()) {
    SCOPED_TRACE(Name(*sql));
    Rows rows;
    rows.Row(1, std::string("a\0x", 3), "first", 1);
    rows.Row(1, std::string("a\0y", 3), "second", 2);
    EXPECT_EQ(rows.AppendTo(*sql), 2);
    EXPECT_EQ(testing::Rows(*sql, "SELECT COUNT(*), MAX(n) FROM bulk_pairs"),
              sql->dialect() == store::SqlDialect::kSqlite ? "2|2\n" : "1|2\n");

    store::InternedTexts long_texts("long_texts", "text_id", "text", store::InternedTexts::Key::kUniqueHash);
    const std::vector<store::LongText> texts = {{std::string("%c = f32[] constant(0)\0junk", 27)}};
    std::vector<int64_t> ids(1);
    EXPECT_EQ(long_texts.Ids(*sql, texts, ids), 1);
    EXPECT_EQ(testing::Rows(*sql, "SELECT text FROM long_texts WHERE text_id = " + std::to_string(ids[0])),
              "%c = f32[] constant(0)\n");
  }
}

// A stored text whose hash equals another's (forged here) is not handed out for it: the batch fails.
TEST_F(BulkRowsOnBothBackends, AHashTakenByAnotherTextIsAnError) {
  for (SqlConnection* sql : Backends()) {
    SCOPED_TRACE(Name(*sql));
    sql->Exec("INSERT INTO long_texts(hash, text) VALUES (" + std::to_string(store::TextHash("wanted")) +
              ", 'impostor')");
    store::InternedTexts long_texts("long_texts", "text_id", "text", store::InternedTexts::Key::kUniqueHash);
    const std::vector<store::LongText> texts = {{"fine"}, {"wanted"}};
    std::vector<int64_t> ids(texts.size());
    try {
      (void)long_texts.Ids(*sql, texts, ids);
      ADD_FAILURE() << "a collision was not noticed";
    } catch (const store::SqlError& e) {
      EXPECT_NE(std::string(e.what()).find("collision"), std::string::npos) << e.what();
    }
  }
}

}  // namespace
}  // namespace xladb
