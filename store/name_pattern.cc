#include "store/name_pattern.h"

#include <sqlite3.h>

namespace xladb::store {

bool IsGlobPattern(const std::string& name) { return name.find_first_of("*?[") != std::string::npos; }

Status CheckGlobPattern(const std::string& pattern, std::string_view what) {
  for (size_t i = 0; i < pattern.size(); ++i) {
    if (pattern[i] != '[') continue;
    size_t j = i + 1;
    if (j < pattern.size() && pattern[j] == '^') ++j;
    if (j < pattern.size() && pattern[j] == ']') ++j;  // `]` right after `[` or `[^` is a member
    size_t close = pattern.find(']', j);
    if (close == std::string::npos) {
      return Status::InvalidArgument(std::string(what) + " pattern '" + pattern + "' has a '[' without a closing ']'");
    }
    i = close;
  }
  return Status::Ok();
}

bool NameMatches(const std::string& pattern, const std::string& name) {
  if (pattern.empty()) return true;
  if (!IsGlobPattern(pattern)) return pattern == name;
  return sqlite3_strglob(pattern.c_str(), name.c_str()) == 0;  // SQLite's own GLOB, as in SQL
}

std::string GlobLiteral(const std::string& name) {
  std::string pattern;
  for (char c : name) {
    if (c == '*' || c == '?' || c == '[') {
      pattern += '[';
      pattern += c;
      pattern += ']';
    } else {
      pattern += c;
    }
  }
  return pattern;
}

}  // namespace xladb::store
