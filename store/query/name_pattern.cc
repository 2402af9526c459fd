#include "store/query/name_pattern.h"

#include <cstdint>

namespace xladb::store {

namespace {

// The next UTF-8 code point of `s` at `*i` (advancing it); 0 at the end. A malformed byte is taken as itself,
// as SQLite's reader takes it.
uint32_t NextCodePoint(std::string_view s, size_t* i) {
  if (*i >= s.size()) return 0;
  uint32_t c = static_cast<unsigned char>(s[(*i)++]);
  if (c < 0xC0) return c;
  int more = c >= 0xF0 ? 3 : c >= 0xE0 ? 2 : 1;
  c &= 0x3F >> more;
  while (more-- > 0 && *i < s.size() && (static_cast<unsigned char>(s[*i]) & 0xC0) == 0x80) {
    c = (c << 6) | (static_cast<unsigned char>(s[(*i)++]) & 0x3F);
  }
  return c;
}

// SQLite's GLOB (its patternCompare with `*`, `?` and `[...]`, case-sensitive, by code point), so that a
// pattern matches here exactly what it matches in SQL on either backend.
bool GlobMatches(std::string_view pattern, std::string_view text) {
  size_t p = 0, t = 0;
  while (true) {
    uint32_t c = NextCodePoint(pattern, &p);
    if (c == 0) return t >= text.size();
    if (c == '*') {
      // Runs of `*` and `?` collapse: each `?` still takes one character.
      while (true) {
        size_t q = p;
        uint32_t next = NextCodePoint(pattern, &q);
        if (next == '*') {
          p = q;
        } else if (next == '?') {
          if (NextCodePoint(text, &t) == 0) return false;
          p = q;
        } else {
          break;
        }
      }
      if (p >= pattern.size()) return true;
      for (size_t from = t; from <= text.size();) {
        if (GlobMatches(pattern.substr(p), text.substr(from))) return true;
        if (from == text.size()) break;
        NextCodePoint(text, &from);
      }
      return false;
    }
    uint32_t ch = NextCodePoint(text, &t);
    if (ch == 0) return false;
    if (c == '?') continue;
    if (c == '[') {
      bool seen = false, invert = false;
      uint32_t prior = 0;
      uint32_t c2 = NextCodePoint(pattern, &p);
      if (c2 == '^') {
        invert = true;
        c2 = NextCodePoint(pattern, &p);
      }
      if (c2 == ']') {
        if (ch == ']') seen = true;
        c2 = NextCodePoint(pattern, &p);
      }
      while (c2 != 0 && c2 != ']') {
        const bool range = c2 == '-' && p < pattern.size() && pattern[p] != ']' && prior > 0;
        if (range) {
          c2 = NextCodePoint(pattern, &p);
          if (ch >= prior && ch <= c2) seen = true;
          prior = 0;
        } else {
          if (ch == c2) seen = true;
          prior = c2;
        }
        c2 = NextCodePoint(pattern, &p);
      }
      if (c2 == 0 || seen == invert) return false;
      continue;
    }
    if (c != ch) return false;
  }
}

}  // namespace

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
  return GlobMatches(pattern, name);
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
