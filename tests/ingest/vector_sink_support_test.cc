// Support code for parser tests (ReadTestFile, SeedPath) and tests of it.
#include <filesystem>
#include <fstream>
#include <sstream>

#include <gtest/gtest.h>

#include "tests/ingest/vector_sink.h"

namespace xladb::ingest {

std::string ReadTestFile(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

std::string SeedPath(std::string_view seed_number) {
  for (const auto& entry : std::filesystem::directory_iterator(std::string(XLADB_TEST_DATA_DIR) + "/seeds")) {
    if (entry.path().filename().string().rfind(std::string(seed_number) + "_", 0) == 0) {
      return entry.path().string();
    }
  }
  return {};
}

TEST(TestSupport, SeedsAreFound) {
  for (const char* seed : {"000", "001", "002", "003", "004"}) {
    std::string path = SeedPath(seed);
    ASSERT_FALSE(path.empty()) << seed;
    EXPECT_GT(ReadTestFile(path).size(), 1000u) << path;
  }
}

}  // namespace xladb::ingest
