// FileVerdict's names are the schema's dump_files.verdict values (store/schema/schema.sql) and the keys of an
// ingest's counts: each reads back as its verdict, and no other text reads as one.
#include <gtest/gtest.h>

#include "ingest/records/file_verdict.h"

namespace xladb::ingest {
namespace {

TEST(FileVerdict, NamesAreTheSchemaValuesAndReadBack) {
  EXPECT_EQ(FileVerdictName(FileVerdict::kIngested), "ingested");
  EXPECT_EQ(FileVerdictName(FileVerdict::kUnchanged), "unchanged");
  EXPECT_EQ(FileVerdictName(FileVerdict::kNotIngested), "not_ingested");
  EXPECT_EQ(FileVerdictName(FileVerdict::kError), "error");
  for (FileVerdict verdict : kFileVerdicts) EXPECT_EQ(ParseFileVerdict(FileVerdictName(verdict)), verdict);
  EXPECT_EQ(ParseFileVerdict("ingesting"), std::nullopt);
  EXPECT_EQ(ParseFileVerdict("Error"), std::nullopt);
  EXPECT_EQ(ParseFileVerdict(""), std::nullopt);
}

}  // namespace
}  // namespace xladb::ingest
