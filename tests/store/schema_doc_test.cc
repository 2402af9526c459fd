// The worked queries of docs/schema.md run as written against a real database (seed run, plus the two corpus
// runs when present), so the analysts' documentation cannot rot.
#include <gtest/gtest.h>

#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "ingest/dump_ingester.h"
#include "store/database.h"
#include "store/run_writer.h"
#include "store/sql_query.h"
#include "tests/store/test_dirs.h"

namespace xladb {
namespace {

std::vector<std::string> SqlBlocks(const std::string& markdown_path) {
  std::ifstream in(markdown_path);
  std::vector<std::string> blocks;
  std::string line, current;
  bool inside = false;
  while (std::getline(in, line)) {
    if (!inside && line == "```sql") {
      inside = true;
      current.clear();
    } else if (inside && line == "```") {
      inside = false;
      blocks.push_back(current);
    } else if (inside) {
      current += line + "\n";
    }
  }
  return blocks;
}

TEST(SchemaDoc, EveryWorkedQueryRunsAndAnswers) {
  testing::TempDir tmp;
  std::string run = tmp / "nightly-2026-11-01";
  testing::MakeSeedRun(run);
  auto db = store::Database::Open(tmp / "x.db");
  ASSERT_TRUE(db.ok());
  {
    store::RunWriter writer(db.value().get());
    ingest::DumpIngester ingester(&writer);
    ASSERT_TRUE(ingester.Ingest(run, {}).ok());
    if (testing::HaveCorpus()) {
      for (const char* r : {"21_lorrax_scan_C", "22_lorrax_scan_cached_C"}) {
        ASSERT_TRUE(ingester.Ingest(testing::CorpusDir() + "/runs/" + r, {}).ok());
      }
    }
  }
  auto blocks = SqlBlocks(std::string(XLADB_TEST_DATA_DIR) + "/../../docs/schema.md");
  ASSERT_GE(blocks.size(), 6u) << "docs/schema.md should hold the worked queries";
  int answered = 0;
  for (const auto& sql : blocks) {
    int64_t rows = 0;
    Status st = store::RunReadOnlySql(
        *db.value(), sql, store::SqlLimits{}, [](const std::vector<store::SqlColumn>&) {},
        [&](const std::vector<store::SqlValue>&) {
          ++rows;
          return true;
        });
    EXPECT_TRUE(st.ok()) << st.ToString() << "\n" << sql;
    if (rows > 0) ++answered;
  }
  // The trend, spill, top-buffer and invariant queries have data in the seed run; the growth query needs
  // the corpus runs; the error query has none by design.
  EXPECT_GE(answered, testing::HaveCorpus() ? 4 : 3);
}

}  // namespace
}  // namespace xladb
