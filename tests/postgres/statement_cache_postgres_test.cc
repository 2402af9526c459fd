// StatementCache::ByText on both backends: a text run again gets the statement kept for it (prepared once),
// bound afresh; a lease that stops reading early leaves the statement reset (the next use reads from the
// start); the same text leased twice at once gets two statements that read independently; past kMaxTexts a
// text gets a statement of its own each time.
#include <gtest/gtest.h>

#include <string>

#include "store/backend/statement_cache.h"
#include "tests/postgres/both_backends.h"

namespace xladb {
namespace {

using store::StatementCache;

class StatementCacheOnBothBackends : public testing::BothBackends {};

// The numbers from ?1 to ?2, a row each.
const std::string kCount =
    "WITH RECURSIVE n(i) AS (SELECT CAST(? AS BIGINT) UNION ALL SELECT i + 1 FROM n WHERE i < ?) SELECT i FROM n";

std::string ReadAll(store::SqlStatement& q) {
  std::string out;
  while (q.Step()) out += std::to_string(q.Int(0)) + " ";
  return out;
}

TEST_F(StatementCacheOnBothBackends, ATextRunAgainGetsTheStatementKeptForIt) {
  for (store::Database* db : {sqlite_.get(), postgres_.get()}) {
    SCOPED_TRACE(Name(db->connection()));
    StatementCache& cache = db->statements();
    const store::SqlStatement* first = nullptr;
    {
      auto q = cache.ByText(kCount);
      q->Bind(1, int64_t{1});
      q->Bind(2, int64_t{3});
      EXPECT_EQ(ReadAll(*q), "1 2 3 ");
      first = &*q;
    }
    {
      auto q = cache.ByText(kCount);
      EXPECT_EQ(&*q, first);
      q->Bind(1, int64_t{5});
      q->Bind(2, int64_t{6});
      EXPECT_EQ(ReadAll(*q), "5 6 ");
    }
    {
      auto q = cache.ByText(kCount);  // left after one row of three
      q->Bind(1, int64_t{7});
      q->Bind(2, int64_t{9});
      ASSERT_TRUE(q->Step());
      EXPECT_EQ(q->Int(0), 7);
    }
    auto q = cache.ByText(kCount);
    EXPECT_EQ(&*q, first);
    q->Bind(1, int64_t{7});
    q->Bind(2, int64_t{9});
    EXPECT_EQ(ReadAll(*q), "7 8 9 ");
  }
}

TEST_F(StatementCacheOnBothBackends, TheSameTextLeasedTwiceAtOnceReadsIndependently) {
  for (store::Database* db : {sqlite_.get(), postgres_.get()}) {
    SCOPED_TRACE(Name(db->connection()));
    StatementCache& cache = db->statements();
    auto outer = cache.ByText(kCount);
    outer->Bind(1, int64_t{1});
    outer->Bind(2, int64_t{2});
    ASSERT_TRUE(outer->Step());
    EXPECT_EQ(outer->Int(0), 1);
    {
      auto inner = cache.ByText(kCount);
      EXPECT_NE(&*inner, &*outer);
      inner->Bind(1, int64_t{10});
      inner->Bind(2, int64_t{11});
      EXPECT_EQ(ReadAll(*inner), "10 11 ");
    }
    ASSERT_TRUE(outer->Step());
    EXPECT_EQ(outer->Int(0), 2);
    EXPECT_FALSE(outer->Step());
  }
}

TEST_F(StatementCacheOnBothBackends, PastTheLimitATextGetsAStatementOfItsOwn) {
  StatementCache& cache = sqlite_->statements();
  for (size_t i = 0; i < StatementCache::kMaxTexts; ++i) {
    auto q = cache.ByText("SELECT " + std::to_string(i));
    ASSERT_TRUE(q->Step());
    EXPECT_EQ(q->Int(0), static_cast<int64_t>(i));
  }
  const store::SqlStatement* kept = nullptr;
  {
    auto q = cache.ByText("SELECT 0");
    kept = &*q;
  }
  {
    auto again = cache.ByText("SELECT 0");
    EXPECT_EQ(&*again, kept);
  }
  auto past = cache.ByText("SELECT 'past'");
  ASSERT_TRUE(past->Step());
  EXPECT_EQ(past->Text(0), "past");
  const store::SqlStatement* own = &*past;
  auto past_again = cache.ByText("SELECT 'past'");
  EXPECT_NE(&*past_again, own);
}

}  // namespace
}  // namespace xladb
