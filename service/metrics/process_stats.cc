#include "service/metrics/process_stats.h"

#include <dirent.h>
#include <sys/resource.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <sstream>
#include <string>

namespace xladb::service::metrics {
namespace {

// Open file descriptors: the entries of /proc/self/fd, less the one the listing itself holds open.
int64_t CountOpenFds() {
  DIR* dir = ::opendir("/proc/self/fd");
  if (dir == nullptr) return -1;
  int64_t entries = 0;
  while (const dirent* entry = ::readdir(dir)) {
    if (entry->d_name[0] != '.') ++entries;
  }
  ::closedir(dir);
  return entries - 1;
}

// The system's boot time (`btime` of /proc/stat), seconds since the epoch; -1 when unknown.
int64_t BootTimeSeconds() {
  std::ifstream in("/proc/stat");
  std::string key;
  while (in >> key) {
    if (key == "btime") {
      int64_t seconds = -1;
      in >> seconds;
      return seconds;
    }
    in.ignore(1 << 20, '\n');
  }
  return -1;
}

}  // namespace

ProcessStats ReadProcessStats() {
  ProcessStats stats;
  const long page = ::sysconf(_SC_PAGESIZE);
  const long ticks = ::sysconf(_SC_CLK_TCK);
  if (std::FILE* statm = std::fopen("/proc/self/statm", "r")) {
    long long size = 0, resident = 0;
    if (std::fscanf(statm, "%lld %lld", &size, &resident) == 2) {
      stats.virtual_bytes = size * page;
      stats.resident_bytes = resident * page;
    }
    std::fclose(statm);
  }
  stats.open_fds = CountOpenFds();
  if (rlimit limit{}; ::getrlimit(RLIMIT_NOFILE, &limit) == 0 && limit.rlim_cur != RLIM_INFINITY) {
    stats.max_fds = static_cast<int64_t>(limit.rlim_cur);
  }
  // /proc/self/stat: "pid (comm) state ..." — comm may hold spaces and parentheses, so fields are counted
  // from the last ')'. After it: field 3 (state) … 14 utime, 15 stime, 22 starttime (clock ticks).
  std::ifstream in("/proc/self/stat");
  std::stringstream whole;
  whole << in.rdbuf();
  const std::string text = whole.str();
  const size_t close = text.rfind(')');
  if (close != std::string::npos && ticks > 0) {
    std::istringstream fields(text.substr(close + 1));
    std::string field;
    long long utime = -1, stime = -1, start = -1;
    for (int number = 3; fields >> field && number <= 22; ++number) {
      long long* target = number == 14 ? &utime : number == 15 ? &stime : number == 22 ? &start : nullptr;
      if (target != nullptr) *target = std::strtoll(field.c_str(), nullptr, 10);
    }
    if (utime >= 0 && stime >= 0) stats.cpu_seconds = static_cast<double>(utime + stime) / ticks;
    if (const int64_t boot = BootTimeSeconds(); boot >= 0 && start >= 0) {
      stats.start_time_seconds = static_cast<double>(boot) + static_cast<double>(start) / ticks;
    }
  }
  return stats;
}

void WriteProcessStats(ExpositionText& out, const ProcessStats& stats) {
  const auto gauge = [&out](const char* name, MetricType type, const char* help, auto value) {
    if (value < 0) return;
    out.Family(name, type, help);
    out.Sample(name, {}, value);
  };
  gauge("process_resident_memory_bytes", MetricType::kGauge, "Resident memory size in bytes.", stats.resident_bytes);
  gauge("process_virtual_memory_bytes", MetricType::kGauge, "Virtual memory size in bytes.", stats.virtual_bytes);
  gauge("process_open_fds", MetricType::kGauge, "Number of open file descriptors.", stats.open_fds);
  gauge("process_max_fds", MetricType::kGauge, "Maximum number of open file descriptors.", stats.max_fds);
  gauge("process_cpu_seconds_total", MetricType::kCounter, "Total user and system CPU time spent in seconds.",
        stats.cpu_seconds);
  gauge("process_start_time_seconds", MetricType::kGauge, "Start time of the process since unix epoch in seconds.",
        stats.start_time_seconds);
}

}  // namespace xladb::service::metrics
