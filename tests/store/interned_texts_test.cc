// store/facts/interned_texts.h: a text gets one id, kept across lookups and cache resets; names found by hash tell
// texts of equal hash apart; ids added by a rolled-back group are not handed out again.
#include "store/sqlite/sqlite_connection.h"
#include "store/facts/interned_texts.h"

#include <gtest/gtest.h>

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

}  // namespace
}  // namespace xladb::store
