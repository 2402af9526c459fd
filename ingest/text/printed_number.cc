#include "ingest/text/printed_number.h"

#include <charconv>
#include <cmath>
#include <cstdlib>
#include <string>

namespace xladb::ingest {
namespace {

std::string_view Trim(std::string_view s) {
  while (!s.empty() && s.front() == ' ') s.remove_prefix(1);
  while (!s.empty() && s.back() == ' ') s.remove_suffix(1);
  return s;
}

}  // namespace

std::optional<int64_t> ParseInt64(std::string_view text) {
  if (text.empty()) return std::nullopt;
  const char* begin = text.data();
  const char* end = begin + text.size();
  if (*begin == '+') return std::nullopt;
  int64_t value = 0;
  auto [ptr, ec] = std::from_chars(begin, end, value);
  if (ec != std::errc() || ptr != end) return std::nullopt;
  return value;
}

std::optional<double> ParseDouble(std::string_view text) {
  if (text.empty() || text.size() > 64) return std::nullopt;
  char buf[65];
  text.copy(buf, text.size());
  buf[text.size()] = '\0';
  char* end = nullptr;
  double v = std::strtod(buf, &end);
  if (end != buf + text.size()) return std::nullopt;
  return v;
}

std::optional<int64_t> ParseHumanBytes(std::string_view text) {
  text = Trim(text);
  if (text.empty()) return std::nullopt;
  static constexpr std::string_view kUnits[] = {"KiB", "MiB", "GiB", "TiB", "PiB", "EiB"};
  double scale = 1;
  std::string_view number;
  bool found = false;
  double unit_scale = 1024.0;
  for (std::string_view unit : kUnits) {
    if (text.size() > unit.size() && text.substr(text.size() - unit.size()) == unit) {
      number = text.substr(0, text.size() - unit.size());
      scale = unit_scale;
      found = true;
      break;
    }
    unit_scale *= 1024.0;
  }
  if (!found) {
    if (text.back() != 'B') return std::nullopt;
    auto exact = ParseInt64(text.substr(0, text.size() - 1));
    return exact;
  }
  auto value = ParseDouble(number);
  if (!value || !std::isfinite(*value)) return std::nullopt;
  double bytes = *value * scale;
  if (std::fabs(bytes) >= 9.2e18) return std::nullopt;
  return static_cast<int64_t>(std::llround(bytes));
}

std::optional<int64_t> ParseSpaceGroupedInt64(std::string_view text) {
  if (text.empty()) return std::nullopt;
  std::string digits;
  digits.reserve(text.size());
  bool last_space = true;  // a leading space is not allowed
  for (size_t i = 0; i < text.size(); ++i) {
    char c = text[i];
    if (c == ' ') {
      if (last_space) return std::nullopt;
      last_space = true;
      continue;
    }
    if (c == '-' && i == 0) {
      digits.push_back(c);
      continue;
    }
    if (c < '0' || c > '9') return std::nullopt;
    digits.push_back(c);
    last_space = false;
  }
  if (last_space) return std::nullopt;
  return ParseInt64(digits);
}

}  // namespace xladb::ingest
