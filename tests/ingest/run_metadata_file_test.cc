// ingest/run_metadata_file.h: the xladb-run.toml a CI job writes beside its dumps.
#include "ingest/run_metadata_file.h"

#include <gtest/gtest.h>

namespace xladb::ingest {
namespace {

TEST(RunMetadataFile, LabelsAndTime) {
  auto meta = ParseRunMetadata("# CI\ntime = \"2026-10-30T12:00:00Z\"\n[labels]\nbranch = \"main\"\npr = 42\n"
                               "nightly = true\n");
  ASSERT_TRUE(meta.ok()) << meta.status().ToString();
  EXPECT_EQ(meta->time_us, int64_t{1793361600} * 1000000);  // date -d 2026-10-30T12:00:00Z +%s
  EXPECT_EQ(meta->labels, (std::vector<std::pair<std::string, std::string>>{
                              {"branch", "main"}, {"nightly", "true"}, {"pr", "42"}}));
  auto seconds = ParseRunMetadata("time = 1793361600\n");
  ASSERT_TRUE(seconds.ok());
  EXPECT_EQ(seconds->time_us, int64_t{1793361600} * 1000000);
  auto empty = ParseRunMetadata("");
  ASSERT_TRUE(empty.ok());
  EXPECT_EQ(empty->time_us, -1);
  EXPECT_TRUE(empty->labels.empty());
}

TEST(RunMetadataFile, MistakesNameTheirLine) {
  auto bad_toml = ParseRunMetadata("[labels]\nbranch = \"main\n");
  EXPECT_EQ(bad_toml.status().code(), Status::Code::kDataLoss);
  EXPECT_NE(bad_toml.status().message().find("line 2"), std::string::npos) << bad_toml.status().message();
  auto table_value = ParseRunMetadata("[labels]\n\nbranch = [1, 2]\n");
  EXPECT_NE(table_value.status().message().find("line 3: label branch must be"), std::string::npos)
      << table_value.status().message();
  auto unknown = ParseRunMetadata("labels = 3\n");
  EXPECT_NE(unknown.status().message().find("labels must be a table"), std::string::npos);
  auto key = ParseRunMetadata("\nrun_name = \"x\"\n");
  EXPECT_NE(key.status().message().find("line 2: unknown key 'run_name'"), std::string::npos)
      << key.status().message();
  auto time = ParseRunMetadata("time = \"yesterday\"\n");
  EXPECT_NE(time.status().message().find("line 1: cannot read time 'yesterday'"), std::string::npos)
      << time.status().message();
  EXPECT_EQ(ParseRunMetadata(std::string(kMaxRunMetadataBytes + 1, '#')).status().code(), Status::Code::kDataLoss);
}

}  // namespace
}  // namespace xladb::ingest
