#include "service/human_bytes.h"

#include <algorithm>
#include <cinttypes>
#include <cmath>
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

std::string PercentChange(int64_t baseline, int64_t delta) {
  if (delta == 0) return "0%";
  if (baseline <= 0) return "new";
  const double p = 100.0 * static_cast<double>(delta) / static_cast<double>(baseline);
  const double magnitude = std::fabs(p);
  // Two significant digits below 10 (0.019, 1.5), whole percents above.
  int decimals = 0;
  if (magnitude < 10) decimals = std::max(1, 1 - static_cast<int>(std::floor(std::log10(magnitude))));
  decimals = std::min(decimals, 12);
  char buf[48];
  std::snprintf(buf, sizeof buf, "%+.*f%%", decimals, p);
  return buf;
}

std::string RollupLine(const std::string& name, int64_t baseline_compiles, int64_t current_compiles,
                       const std::string& metric, int64_t baseline_max, int64_t current_max) {
  auto bytes = [](int64_t v) { return v < 0 ? std::string("–") : HumanBytes(v); };
  std::string line = name + ": " + std::to_string(baseline_compiles) + " → " + std::to_string(current_compiles) +
                     (current_compiles == 1 ? " compile" : " compiles") + ", largest " + metric + " " +
                     bytes(baseline_max) + " → " + bytes(current_max);
  if (baseline_max >= 0 && current_max >= 0) {
    line += " (" + PercentChange(baseline_max, current_max - baseline_max) + ")";
  }
  return line;
}

std::string SignatureWithSharding(const std::string& signature, const std::string& sharding) {
  return sharding.empty() ? signature : signature + " sharding " + sharding;
}

std::string BudgetHeadroom(const std::string& metric, int64_t current, int64_t max_bytes, double percent, bool over,
                           bool warn) {
  if (current < 0) return metric + " unknown of " + HumanBytes(max_bytes);
  char share[32];
  std::snprintf(share, sizeof share, "%.0f%%", percent);
  return metric + " " + HumanBytes(current) + " of " + HumanBytes(max_bytes) + " (" + share + ")" +
         (over ? ": over budget" : warn ? ": near the budget" : "");
}

}  // namespace xladb::service
