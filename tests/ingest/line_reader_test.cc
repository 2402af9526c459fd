#include "ingest/source/line_reader.h"

#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "ingest/source/byte_source.h"

namespace xladb::ingest {
namespace {

// A source that hands out at most `step` bytes per Read, to exercise buffer refills mid-line.
class TrickleSource : public ByteSource {
 public:
  TrickleSource(std::string data, size_t step) : data_(std::move(data)), step_(step) {}
  StatusOr<size_t> Read(char* buffer, size_t capacity) override {
    size_t n = std::min({capacity, step_, data_.size() - pos_});
    data_.copy(buffer, n, pos_);
    pos_ += n;
    return n;
  }

 private:
  std::string data_;
  size_t step_;
  size_t pos_ = 0;
};

std::vector<std::string> ReadAll(ByteSource* source, Status* status, size_t max_line = LineReader::kDefaultMaxLineBytes) {
  LineReader reader(source, max_line);
  std::vector<std::string> lines;
  std::string_view line;
  while (reader.Next(&line)) lines.emplace_back(line);
  *status = reader.status();
  return lines;
}

TEST(LineReader, SplitsLinesAndKeepsFinalLineWithoutNewline) {
  auto source = MakeMemorySource("a\n\nbc\nlast");
  Status st;
  auto lines = ReadAll(source.get(), &st);
  ASSERT_TRUE(st.ok());
  EXPECT_EQ(lines, (std::vector<std::string>{"a", "", "bc", "last"}));
}

TEST(LineReader, StripsCarriageReturnAndCountsIt) {
  auto source = MakeMemorySource("a\r\nb\r\n");
  LineReader reader(source.get());
  std::string_view line;
  ASSERT_TRUE(reader.Next(&line));
  EXPECT_EQ(line, "a");
  ASSERT_TRUE(reader.Next(&line));
  EXPECT_EQ(line, "b");
  EXPECT_FALSE(reader.Next(&line));
  EXPECT_EQ(reader.crlf_lines(), 2);
  EXPECT_EQ(reader.line_number(), 2);
}

TEST(LineReader, LinesLongerThanTheBufferSurviveTrickledReads) {
  std::string big(5 * 1024 * 1024 + 17, 'x');  // 5 MiB line: bigger than the 1 MiB initial buffer
  TrickleSource source("head\n" + big + "\ntail\n", 64 * 1024 + 3);
  Status st;
  auto lines = ReadAll(&source, &st);
  ASSERT_TRUE(st.ok()) << st.ToString();
  ASSERT_EQ(lines.size(), 3u);
  EXPECT_EQ(lines[0], "head");
  EXPECT_EQ(lines[1].size(), big.size());
  EXPECT_EQ(lines[2], "tail");
}

TEST(LineReader, TooLongLineIsAnErrorNamingTheLine) {
  std::string text = "ok\n" + std::string(3 * 1024 * 1024, 'y') + "\n";
  auto source = MakeMemorySource(text);
  Status st;
  auto lines = ReadAll(source.get(), &st, 2 * 1024 * 1024);
  EXPECT_EQ(lines.size(), 1u);
  EXPECT_EQ(st.code(), Status::Code::kResourceExhausted);
  EXPECT_NE(st.message().find("line 2"), std::string::npos) << st.message();
}

}  // namespace
}  // namespace xladb::ingest
