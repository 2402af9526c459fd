#include "service/human_bytes.h"

#include <cinttypes>
#include <cstdio>

namespace xladb::service {

std::string HumanBytes(int64_t bytes, bool sign) {
  const char* prefix = sign ? (bytes > 0 ? "+" : bytes < 0 ? "-" : "") : (bytes < 0 ? "-" : "");
  const uint64_t v = bytes < 0 ? static_cast<uint64_t>(-(bytes + 1)) + 1 : static_cast<uint64_t>(bytes);
  char buf[48];
  if (v < 1024) {
    std::snprintf(buf, sizeof buf, "%s%" PRIu64 " B", prefix, v);
  } else {
    const char* units[] = {"KiB", "MiB", "GiB", "TiB", "PiB"};
    double x = static_cast<double>(v) / 1024;
    int u = 0;
    while (x >= 1024 && u < 4) {
      x /= 1024;
      ++u;
    }
    std::snprintf(buf, sizeof buf, "%s%.1f %s", prefix, x, units[u]);
  }
  return buf;
}

}  // namespace xladb::service
