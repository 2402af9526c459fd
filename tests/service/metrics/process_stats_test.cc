// ProcessStats (service/metrics/process_stats.h), checked against what this test process does and knows.
#include "service/metrics/process_stats.h"

#include <fcntl.h>
#include <sys/resource.h>
#include <unistd.h>

#include <gtest/gtest.h>

#include <chrono>
#include <string>
#include <vector>

namespace xladb::service::metrics {
namespace {

TEST(ProcessStats, OpenFdsFollowFilesOpenedAndClosed) {
  const int64_t before = ReadProcessStats().open_fds;
  ASSERT_GT(before, 2);  // stdin, stdout, stderr at least
  std::vector<int> fds;
  for (int i = 0; i < 5; ++i) fds.push_back(::open("/dev/null", O_RDONLY));
  EXPECT_EQ(ReadProcessStats().open_fds, before + 5);
  for (int fd : fds) ::close(fd);
  EXPECT_EQ(ReadProcessStats().open_fds, before);
}

TEST(ProcessStats, ResidentMemoryGrowsWithTouchedPages) {
  const int64_t before = ReadProcessStats().resident_bytes;
  ASSERT_GT(before, 0);
  std::vector<char> block(64 << 20, 1);  // 64 MiB, every page written
  const int64_t after = ReadProcessStats().resident_bytes;
  EXPECT_GE(after - before, int64_t{48} << 20) << before << " -> " << after;
  EXPECT_LE(after, ReadProcessStats().virtual_bytes);
  EXPECT_EQ(block[block.size() - 1], 1);
}

TEST(ProcessStats, LimitsCpuAndStartTime) {
  rlimit limit{};
  ASSERT_EQ(::getrlimit(RLIMIT_NOFILE, &limit), 0);
  const ProcessStats stats = ReadProcessStats();
  if (limit.rlim_cur != RLIM_INFINITY) {
    EXPECT_EQ(stats.max_fds, static_cast<int64_t>(limit.rlim_cur));
  }
  EXPECT_GE(stats.cpu_seconds, 0);
  const double now = std::chrono::duration<double>(std::chrono::system_clock::now().time_since_epoch()).count();
  // The test binary started moments ago: within the last hour, not in the future (clock ticks round down).
  EXPECT_LE(stats.start_time_seconds, now + 1);
  EXPECT_GT(stats.start_time_seconds, now - 3600);
}

TEST(ProcessStats, WrittenWithTheStandardNames) {
  ProcessStats stats;
  stats.resident_bytes = 1024;
  stats.open_fds = 7;  // the others unknown (-1): left out
  ExpositionText out;
  WriteProcessStats(out, stats);
  EXPECT_EQ(out.Take(),
            "# HELP process_resident_memory_bytes Resident memory size in bytes.\n"
            "# TYPE process_resident_memory_bytes gauge\n"
            "process_resident_memory_bytes 1024\n"
            "# HELP process_open_fds Number of open file descriptors.\n"
            "# TYPE process_open_fds gauge\n"
            "process_open_fds 7\n");
}

}  // namespace
}  // namespace xladb::service::metrics
