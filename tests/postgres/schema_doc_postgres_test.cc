// docs/schema.md's worked queries on PostgreSQL: the seed run (and the corpus runs when present) ingested into
// SQLite, copied into PostgreSQL, and every query answers there what it answers on SQLite, which
// tests/store/schema_doc_test.cc checks against the dumps. Numbers are compared as numbers: the two print
// doubles differently (SQLite 15 significant digits, PostgreSQL the shortest exact form).
#include <gtest/gtest.h>

#include <cmath>
#include <cstdlib>
#include <string>

#include "store/sqlite/sqlite_connection.h"
#include "store/backend/database.h"
#include "store/copy/store_copy.h"
#include "tests/postgres/postgres_test_server.h"
#include "tests/store/schema_doc_blocks.h"
#include "tests/store/test_dirs.h"
#include "tests/store/test_ingest.h"

namespace xladb {
namespace {

// Whether two cells say the same: equal text, or numbers equal to 12 significant digits.
bool SameCell(const std::string& a, const std::string& b) {
  if (a == b) return true;
  char* end_a = nullptr;
  char* end_b = nullptr;
  const double x = std::strtod(a.c_str(), &end_a);
  const double y = std::strtod(b.c_str(), &end_b);
  if (a.empty() || b.empty() || *end_a != '\0' || *end_b != '\0') return false;
  return std::fabs(x - y) <= 1e-12 * std::fmax(std::fabs(x), std::fabs(y));
}

TEST(SchemaDocOnPostgres, EveryWorkedQueryAnswersAsOnSqlite) {
  testing::PostgresTestSchema pg("schema_doc");
  ASSERT_NE(pg.connection(), nullptr) << pg.why();
  testing::TempDir tmp;
  auto db = store::Database::Open(tmp / "x.db");
  ASSERT_TRUE(db.ok()) << db.status().ToString();
  testing::MakeSeedRun(tmp / "nightly-2026-11-01");
  ASSERT_TRUE(testing::IngestRun(*db.value(), tmp / "nightly-2026-11-01", "nightly-2026-11-01").ok());
  if (testing::HaveCorpus()) {
    for (const char* r : {"21_lorrax_scan_C", "22_lorrax_scan_cached_C"}) {
      ASSERT_TRUE(testing::IngestRun(*db.value(), testing::CorpusDir() + "/runs/" + r, r).ok());
    }
  } else {
    std::cout << "[ note ] corpus absent: the queries run on the seed run only\n";
  }
  auto copied = store::CopyToPostgres(*db.value(), *pg.connection());
  ASSERT_TRUE(copied.ok()) << copied.status().ToString();

  const auto blocks = testing::SchemaDocSqlBlocks();
  ASSERT_GE(blocks.size(), 10u);
  int answered = 0;
  for (const auto& [name, sql] : blocks) {
    SCOPED_TRACE(name);
    const testing::TextRows sqlite = testing::SqliteRows(SqliteOf(*db.value()), sql);
    const testing::TextRows postgres = testing::PostgresRows(*pg.connection(), sql);
    ASSERT_EQ(postgres.size(), sqlite.size()) << sql;
    for (size_t r = 0; r < sqlite.size(); ++r) {
      ASSERT_EQ(postgres[r].size(), sqlite[r].size());
      for (size_t c = 0; c < sqlite[r].size(); ++c) {
        EXPECT_TRUE(SameCell(postgres[r][c], sqlite[r][c]))
            << "row " << r << " column " << c << ": PostgreSQL " << postgres[r][c] << ", SQLite " << sqlite[r][c];
      }
    }
    answered += !sqlite.empty();
  }
  EXPECT_GE(answered, 6);  // most queries have rows on the seed run alone
}

}  // namespace
}  // namespace xladb
