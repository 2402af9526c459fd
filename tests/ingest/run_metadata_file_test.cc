// ingest/run_metadata_file.h: the xladb-run.toml a CI job writes beside its dumps.
#include "ingest/run_metadata_file.h"

#include <gtest/gtest.h>

#include "ingest/dump_ingester.h"

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

// Times (issue 26, item 4): outside 1970-01-01 .. 2200-01-01 a time is the file's error naming it, never
// accepted (a run sorting newest forever) and never dropped without a word.
TEST(RunMetadataFile, TimesOutsideTheRangeAreErrorsNamingThem) {
  for (const char* value : {"99999999999999", "\"9999-12-31T23:59:59Z\"", "-99999999999", "\"0001-01-01\"",
                            "9223372036854775807", "-9223372036854775808", "-1", "\"1969-12-31T23:59:59Z\"",
                            "7258118401", "\"2200-01-01T00:00:01Z\""}) {
    auto meta = ParseRunMetadata(std::string("time = ") + value + "\n[labels]\nbranch = \"main\"\n");
    ASSERT_FALSE(meta.ok()) << value;
    EXPECT_EQ(meta.status().code(), Status::Code::kDataLoss);
    std::string shown = value;
    if (shown.front() == '"') shown = shown.substr(1, shown.size() - 2);
    EXPECT_NE(meta.status().message().find("line 1: time '" + shown + "' is outside 1970-01-01 .. 2200-01-01"),
              std::string::npos)
        << meta.status().message();
  }
  // Both ends are in range.
  auto first = ParseRunMetadata("time = 0\n");
  ASSERT_TRUE(first.ok()) << first.status().ToString();
  EXPECT_EQ(first->time_us, 0);
  auto last = ParseRunMetadata("time = \"2200-01-01T00:00:00Z\"\n");
  ASSERT_TRUE(last.ok()) << last.status().ToString();
  EXPECT_EQ(last->time_us, int64_t{7258118400} * 1000000);  // date -d 2200-01-01T00:00:00Z +%s
}

TEST(RunTime, OneRangeForTheFlagTheLabelsAndTheRpc) {
  EXPECT_EQ(ParseTimeToUs("99999999999999").status().code(), Status::Code::kInvalidArgument);
  EXPECT_EQ(*ParseTimeToUs("2026-11-26"), int64_t{1795651200} * 1000000);  // date -d 2026-11-26 +%s
  auto label = RunTimeFromLabels({{"branch", "main"}, {"commit_time", "9999-12-31"}});
  EXPECT_EQ(label.status().code(), Status::Code::kInvalidArgument);
  EXPECT_NE(label.status().message().find("label commit_time: time '9999-12-31' is outside"), std::string::npos)
      << label.status().message();
  EXPECT_EQ(*RunTimeFromLabels({{"date", "1970-01-01"}}), 0);
  EXPECT_EQ(*RunTimeFromLabels({{"branch", "main"}}), -1);
  EXPECT_TRUE(CheckRunTimeUs(kMaxRunTimeUs, "t").ok());
  EXPECT_EQ(CheckRunTimeUs(kMaxRunTimeUs + 1, "t").code(), Status::Code::kInvalidArgument);
  EXPECT_EQ(CheckRunTimeUs(-1, "t").code(), Status::Code::kInvalidArgument);
}

// Labels (issue 26, item 3): a label ValidateRunLabel() refuses is left out and named; the others stay.
TEST(RunMetadataFile, RefusedLabelsAreLeftOutAndNamedWithTheirLine) {
  auto meta = ParseRunMetadata("[labels]\nbranch = \"main\"\nnote = \"\\u001b]0;PWN\\u0007\"\n\"\" = \"x\"\n"
                               "nul = \"a\\u0000b\"\n\"bad key\" = \"v\"\nlines = \"a\\nb\"\n");
  ASSERT_TRUE(meta.ok()) << meta.status().ToString();
  EXPECT_EQ(meta->labels, (std::vector<std::pair<std::string, std::string>>{{"branch", "main"}}));
  EXPECT_EQ(meta->refused_labels.size(), 5u);
  std::string all;
  for (const auto& why : meta->refused_labels) all += why + "\n";
  for (const char* expected : {"line 3: label 'note=\\x1b]0;PWN\\x07': the value holds a control character",
                               "line 4: label '=x': the key is empty", "line 5: label 'nul=a\\x00b'",
                               "line 6: label 'bad key=v': the key holds ' '", "line 7: label 'lines=a\\nb'"}) {
    EXPECT_NE(all.find(expected), std::string::npos) << expected << "\n" << all;
  }
}

}  // namespace
}  // namespace xladb::ingest
