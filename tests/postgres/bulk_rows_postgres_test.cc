// Bulk appends (store/backend/bulk_insert.h) and the batch interning of whole texts (InternedTexts::Ids), run the same way
// on SQLite (multi-row INSERTs) and PostgreSQL (COPY through a staging table), with the same answers: a key
// repeated within one batch updates the earlier row as separate INSERTs would, texts with the characters
// COPY escapes come back whole, more rows than one batch all arrive, and a hash taken by another text is an
// error on both.
#include <gtest/gtest.h>

#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "store/backend/bulk_insert.h"
#include "store/facts/interned_texts.h"
#include "store/backend/sql_connection.h"
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
                                          "ünïcode ✓", "ends at a NUL"};
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

// Past 2^17 rows through one staging table PostgreSQL truncates it with the move: every batch still counts and
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
    const std::vector<std::string> first = {"%add = f32[8] add(%x, %y)", "%mul = f32[8] multiply(%x, %x)",
                                            "%add = f32[8] add(%x, %y)"};
    std::vector<int64_t> ids(first.size());
    EXPECT_EQ(long_texts.Ids(*sql, first, ids), 2);  // the repeated text is stored once
    EXPECT_EQ(ids[0], ids[2]);
    EXPECT_NE(ids[0], ids[1]);
    EXPECT_EQ(testing::Rows(*sql, "SELECT COUNT(*) FROM long_texts"), "2\n");
    EXPECT_EQ(testing::Rows(*sql, "SELECT text FROM long_texts WHERE text_id = " + std::to_string(ids[1])), first[1] + "\n");

    // A later batch finds the stored texts (a writer without this object's state would too).
    store::InternedTexts other("long_texts", "text_id", "text", store::InternedTexts::Key::kUniqueHash);
    const std::vector<std::string> second = {"%mul = f32[8] multiply(%x, %x)", "%new = f32[] constant(0)"};
    std::vector<int64_t> again(second.size());
    EXPECT_EQ(other.Ids(*sql, second, again), 1);
    EXPECT_EQ(again[0], ids[1]);
    EXPECT_EQ(testing::Rows(*sql, "SELECT COUNT(*) FROM long_texts"), "3\n");
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
    const std::vector<std::string> texts = {std::string("%c = f32[] constant(0)\0junk", 27)};
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
    const std::vector<std::string> texts = {"fine", "wanted"};
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
