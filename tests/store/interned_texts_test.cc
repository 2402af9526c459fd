// store/facts/interned_texts.h: a text gets one id, kept across lookups and cache resets; names found by hash tell
// texts of equal hash apart; ids added by a rolled-back group are not handed out again; batches of names and long
// texts get the same ids whether the writer gives them (inside its transaction) or reads them back.
#include "store/sqlite/sqlite_connection.h"
#include "store/facts/interned_texts.h"

#include <gtest/gtest.h>

#include <span>
#include <string>
#include <vector>

#include "store/backend/database.h"
#include "tests/store/test_dirs.h"

namespace xladb::store {
namespace {

class InternedTextsTest : public ::testing::Test {
 protected:
  void SetUp() override {
    auto db = Database::Open(tmp_ / "x.db");
    ASSERT_TRUE(db.ok()) << db.status().ToString();
    db_ = std::move(db.value());
  }
  int64_t Scalar(const std::string& sql) { return SqliteOf(*db_).execAndGet(sql).getInt64(); }
  testing::TempDir tmp_;
  std::unique_ptr<Database> db_;
};

TEST_F(InternedTextsTest, EachNameIsStoredOnceWithItsHash) {
  InternedTexts names("names", "name_id", "text", InternedTexts::Key::kHash);
  const int64_t a = names.Id(db_->connection(), "jit(f)/add");
  const int64_t b = names.Id(db_->connection(), "jit(f)/mul");
  EXPECT_NE(a, b);
  EXPECT_EQ(names.Id(db_->connection(), "jit(f)/add"), a);
  // A second writer (no cache) finds the stored rows.
  InternedTexts other("names", "name_id", "text", InternedTexts::Key::kHash);
  EXPECT_EQ(other.Id(db_->connection(), "jit(f)/mul"), b);
  EXPECT_EQ(Scalar("SELECT COUNT(*) FROM names"), 2);
  EXPECT_EQ(Scalar("SELECT hash FROM names WHERE text = 'jit(f)/add'"), TextHash("jit(f)/add"));
}

// A stored name whose hash equals another text's (forged here; XXH3-64 collisions are rare, not impossible)
// is not mistaken for it.
TEST_F(InternedTextsTest, EqualHashesAreToldApartByText) {
  SqliteOf(*db_).exec("INSERT INTO names(name_id, hash, text) VALUES (7, " + std::to_string(TextHash("wanted")) +
                  ", 'impostor')");
  InternedTexts names("names", "name_id", "text", InternedTexts::Key::kHash);
  const int64_t wanted = names.Id(db_->connection(), "wanted");
  EXPECT_NE(wanted, 7);
  EXPECT_EQ(InternedTexts("names", "name_id", "text", InternedTexts::Key::kHash).Id(db_->connection(), "wanted"), wanted);
  EXPECT_EQ(Scalar("SELECT COUNT(*) FROM names"), 2);
}

TEST_F(InternedTextsTest, IdsOfARolledBackGroupAreForgotten) {
  InternedTexts shapes("shapes", "shape_id", "text", InternedTexts::Key::kText);
  SqliteOf(*db_).exec("BEGIN");
  const int64_t first = shapes.Id(db_->connection(), "f32[8]{0}");
  shapes.FileDone();
  SqliteOf(*db_).exec("ROLLBACK");
  shapes.GroupAborted();
  EXPECT_EQ(Scalar("SELECT COUNT(*) FROM shapes"), 0);
  // Asked again, it is inserted again (the rolled-back id is not reused from the cache).
  const int64_t again = shapes.Id(db_->connection(), "f32[8]{0}");
  EXPECT_EQ(Scalar("SELECT shape_id FROM shapes WHERE text = 'f32[8]{0}'"), again);
  (void)first;
}

TEST_F(InternedTextsTest, MoreTextsThanTheCacheHoldsKeepTheirIds) {
  InternedTexts names("names", "name_id", "text", InternedTexts::Key::kHash);
  const size_t n = InternedTexts::kMaxCachedTexts + 10;
  std::vector<int64_t> ids;
  for (size_t i = 0; i < n; ++i) ids.push_back(names.Id(db_->connection(), "op." + std::to_string(i)));
  for (size_t i = 0; i < n; i += 997) EXPECT_EQ(names.Id(db_->connection(), "op." + std::to_string(i)), ids[i]) << i;
  EXPECT_EQ(Scalar("SELECT COUNT(*) FROM names"), static_cast<int64_t>(n));
}

// Long texts a batch at a time, as the writer interns them inside its transaction (the writer gives new texts
// their ids: the largest stored plus one, plus two…) and outside one (the ids read back after the insert):
// both answer the same ids, each text is stored once, a text asked for twice gets one id.
TEST_F(InternedTextsTest, ABatchOfLongTextsGetsTheSameIdsInsideAndOutsideATransaction) {
  for (const bool in_transaction : {true, false}) {
    SCOPED_TRACE(in_transaction ? "inside a transaction" : "outside");
    SqliteOf(*db_).exec("DELETE FROM long_texts");
    // Stored before, with a gap under it: new ids follow the largest (10), not the count.
    SqliteOf(*db_).exec("INSERT INTO long_texts(text_id, hash, text) VALUES (10, " +
                        std::to_string(LongTextHash(LongText{"%x = f32[] add()"})) + ", '%x = f32[] add()')");
    if (in_transaction) SqliteOf(*db_).exec("BEGIN");
    EXPECT_EQ(db_->connection().WritesAlone(), in_transaction);
    InternedTexts long_texts("long_texts", "text_id", "text", InternedTexts::Key::kUniqueHash);
    std::vector<LongText> batch{{"%a = s32[] constant(1)"}, {"%x = f32[] add()"}, {"%b = \x02 negate()", -1, 7},
                                {"%a = s32[] constant(1)"}};
    std::vector<int64_t> ids(batch.size());
    EXPECT_EQ(long_texts.Ids(db_->connection(), batch, ids), 2);  // two new texts
    EXPECT_EQ(ids, (std::vector<int64_t>{11, 10, 12, 11}));
    if (in_transaction) SqliteOf(*db_).exec("COMMIT");
    EXPECT_EQ(Scalar("SELECT COUNT(*) FROM long_texts"), 3);
    EXPECT_EQ(Scalar("SELECT text_id FROM long_texts WHERE text = '%a = s32[] constant(1)' AND op_name_id IS NULL"),
              11);
    EXPECT_EQ(Scalar("SELECT text_id FROM long_texts WHERE op_name_id = 7"), 12);
    // Asked again (a second writer): every text found, nothing stored.
    InternedTexts again("long_texts", "text_id", "text", InternedTexts::Key::kUniqueHash);
    std::vector<int64_t> ids_again(batch.size());
    EXPECT_EQ(again.Ids(db_->connection(), batch, ids_again), 0);
    EXPECT_EQ(ids_again, ids);
  }
}

// A stored long text whose hash is a new text's (forged here) is an error on both paths, never the new
// text's id.
TEST_F(InternedTextsTest, ALongTextUnderAnotherTextsHashIsAnError) {
  for (const bool in_transaction : {true, false}) {
    SCOPED_TRACE(in_transaction ? "inside a transaction" : "outside");
    SqliteOf(*db_).exec("DELETE FROM long_texts");
    SqliteOf(*db_).exec("INSERT INTO long_texts(text_id, hash, text) VALUES (3, " +
                        std::to_string(LongTextHash(LongText{"%wanted = f32[] add()"})) + ", '%impostor')");
    if (in_transaction) SqliteOf(*db_).exec("BEGIN");
    InternedTexts long_texts("long_texts", "text_id", "text", InternedTexts::Key::kUniqueHash);
    std::vector<int64_t> ids(1);
    EXPECT_THROW(long_texts.Ids(db_->connection(), {LongText{"%wanted = f32[] add()"}}, ids), SqlError);
    if (in_transaction) SqliteOf(*db_).exec("ROLLBACK");
  }
}

// Names a batch at a time, inside the writer's transaction (ids given by the writer) and outside: a name stored
// before keeps its id, one forged under another name's hash is told apart, new names follow the largest id.
TEST_F(InternedTextsTest, ABatchOfNamesGetsTheSameIdsInsideAndOutsideATransaction) {
  for (const bool in_transaction : {true, false}) {
    SCOPED_TRACE(in_transaction ? "inside a transaction" : "outside");
    SqliteOf(*db_).exec("DELETE FROM names");
    SqliteOf(*db_).exec("INSERT INTO names(name_id, hash, text) VALUES (4, " + std::to_string(TextHash("jit(f)/add")) +
                        ", 'jit(f)/add'), (20, " + std::to_string(TextHash("jit(f)/mul")) + ", 'impostor')");
    if (in_transaction) SqliteOf(*db_).exec("BEGIN");
    InternedTexts names("names", "name_id", "text", InternedTexts::Key::kHash);
    const std::vector<std::string> batch{"jit(f)/mul", "jit(f)/add", "jit(f)/sub", "jit(f)/mul"};
    std::vector<int64_t> ids(batch.size());
    names.Ids(db_->connection(), batch, ids);
    EXPECT_EQ(ids, (std::vector<int64_t>{21, 4, 22, 21}));
    if (in_transaction) SqliteOf(*db_).exec("COMMIT");
    EXPECT_EQ(Scalar("SELECT name_id FROM names WHERE text = 'jit(f)/mul'"), 21);
    EXPECT_EQ(Scalar("SELECT name_id FROM names WHERE text = 'jit(f)/sub'"), 22);
    EXPECT_EQ(Scalar("SELECT COUNT(*) FROM names"), 4);
  }
}

// Given ids and a file rolled back (its SAVEPOINT): the names it stored are gone, and asked again in the same
// group they are stored again under ids the table holds (the cache forgot them; the largest id is read again).
TEST_F(InternedTextsTest, NamesOfARolledBackFileAreStoredAgainUnderTheirNewIds) {
  SqliteOf(*db_).exec("BEGIN");
  ASSERT_TRUE(db_->connection().WritesAlone());
  InternedTexts names("names", "name_id", "text", InternedTexts::Key::kHash);
  const std::vector<std::string> batch{"jit(f)/add", "jit(f)/mul"};
  std::vector<int64_t> ids(batch.size());
  names.Ids(db_->connection(), std::vector<std::string>{"jit(f)/kept"}, std::span(ids).first(1));
  names.FileDone();
  EXPECT_EQ(ids[0], 1);
  SqliteOf(*db_).exec("SAVEPOINT file");
  names.Ids(db_->connection(), batch, ids);
  EXPECT_EQ(ids, (std::vector<int64_t>{2, 3}));
  SqliteOf(*db_).exec("ROLLBACK TO file");
  SqliteOf(*db_).exec("RELEASE file");
  names.FileAborted();
  EXPECT_EQ(Scalar("SELECT COUNT(*) FROM names"), 1);
  names.Ids(db_->connection(), std::vector<std::string>{"jit(f)/sub", "jit(f)/mul"}, ids);
  EXPECT_EQ(ids, (std::vector<int64_t>{2, 3}));
  SqliteOf(*db_).exec("COMMIT");
  EXPECT_EQ(Scalar("SELECT name_id FROM names WHERE text = 'jit(f)/mul'"), 3);
  EXPECT_EQ(Scalar("SELECT name_id FROM names WHERE text = 'jit(f)/kept'"), 1);
  EXPECT_EQ(Scalar("SELECT COUNT(*) FROM names"), 3);
}

}  // namespace
}  // namespace xladb::store
