// Peak resident memory of this process over a stretch of a test, from Linux's /proc/self.
#ifndef XLADB_TESTS_STORE_PEAK_RSS_H_
#define XLADB_TESTS_STORE_PEAK_RSS_H_

#include <cstdint>
#include <fstream>
#include <string>

namespace xladb::testing {

// This process's resident memory in bytes as /proc/self/status reports it: "VmRSS" now, "VmHWM" at its peak;
// -1 when /proc cannot say.
inline int64_t ProcStatusBytes(const std::string& key) {
  std::ifstream in("/proc/self/status");
  std::string line;
  while (std::getline(in, line)) {
    if (line.rfind(key + ":", 0) == 0) return std::stoll(line.substr(key.size() + 1)) * 1024;
  }
  return -1;
}

// How far the peak RSS rises above the RSS at construction. The kernel's peak mark is set back to the
// current RSS first (clear_refs "5", Linux 4.0+); valid() is false when that did not happen, and then the
// test cannot measure and must fail.
class PeakRssProbe {
 public:
  PeakRssProbe() {
    std::ofstream("/proc/self/clear_refs") << "5";
    start_ = ProcStatusBytes("VmRSS");
  }
  bool valid() const { return start_ > 0 && ProcStatusBytes("VmHWM") - start_ < (int64_t{8} << 20); }
  int64_t growth() const { return ProcStatusBytes("VmHWM") - start_; }

 private:
  int64_t start_ = -1;
};

}  // namespace xladb::testing

#endif  // XLADB_TESTS_STORE_PEAK_RSS_H_
