#include "ingest/text/visible_text.h"

#include <cstdio>

namespace xladb::ingest {
namespace {

// The code point of the bidi control that starts text[i], or 0. U+202A–U+202E are E2 80 AA–AE in UTF-8,
// U+2066–U+2069 are E2 81 A6–A9.
char32_t BidiControlAt(std::string_view text, size_t i) {
  if (i + 2 >= text.size() || static_cast<unsigned char>(text[i]) != 0xE2) return 0;
  const auto b1 = static_cast<unsigned char>(text[i + 1]), b2 = static_cast<unsigned char>(text[i + 2]);
  if (b1 == 0x80 && b2 >= 0xAA && b2 <= 0xAE) return 0x2000 + (b2 - 0x80);
  if (b1 == 0x81 && b2 >= 0xA6 && b2 <= 0xA9) return 0x2040 + (b2 - 0x80);
  return 0;
}

// The length of the well-formed UTF-8 sequence that starts text[i] (2 to 4), or 0 when none does.
size_t Utf8SequenceAt(std::string_view text, size_t i) {
  const auto b = [&](size_t k) { return static_cast<unsigned char>(text[i + k]); };
  const size_t n = b(0) >= 0xC2 && b(0) <= 0xDF   ? 2
                   : b(0) >= 0xE0 && b(0) <= 0xEF ? 3
                   : b(0) >= 0xF0 && b(0) <= 0xF4 ? 4
                                                  : 0;
  if (n == 0 || i + n > text.size()) return 0;
  for (size_t k = 1; k < n; ++k) {
    if ((b(k) & 0xC0) != 0x80) return 0;
  }
  if ((b(0) == 0xE0 && b(1) < 0xA0) || (b(0) == 0xED && b(1) > 0x9F) || (b(0) == 0xF0 && b(1) < 0x90) ||
      (b(0) == 0xF4 && b(1) > 0x8F)) {
    return 0;  // overlong, a surrogate, or past U+10FFFF
  }
  return n;
}

std::string Escaped(std::string_view text, bool all_controls) {
  std::string out;
  out.reserve(text.size());
  char buf[16];  // "\\u" and up to 8 hex digits: room for any char32_t, though a bidi control needs 4
  for (size_t i = 0; i < text.size(); ++i) {
    const auto c = static_cast<unsigned char>(text[i]);
    if (char32_t bidi = BidiControlAt(text, i); bidi != 0) {
      std::snprintf(buf, sizeof buf, "\\u%04x", static_cast<unsigned>(bidi));
      out += buf;
      i += 2;
    } else if (!all_controls) {
      out.push_back(static_cast<char>(c));
    } else if (c == '\n') {
      out += "\\n";
    } else if (c == '\r') {
      out += "\\r";
    } else if (c == '\t') {
      out += "\\t";
    } else if (c < 0x20 || c == 0x7f) {
      std::snprintf(buf, sizeof buf, "\\x%02x", c);
      out += buf;
    } else if (c == 0xC2 && i + 1 < text.size() && static_cast<unsigned char>(text[i + 1]) >= 0x80 &&
               static_cast<unsigned char>(text[i + 1]) <= 0x9F) {  // U+0080–U+009F: C1 controls (CSI is U+009B)
      std::snprintf(buf, sizeof buf, "\\u%04x", static_cast<unsigned char>(text[i + 1]));
      out += buf;
      ++i;
    } else if (const size_t n = c >= 0x80 ? Utf8SequenceAt(text, i) : 0; n > 0) {
      out.append(text.substr(i, n));  // a character, kept whole (its continuation bytes are not controls)
      i += n - 1;
    } else if (c >= 0x80 && c <= 0x9F) {  // a byte outside UTF-8: a terminal not in UTF-8 reads 0x9B as CSI
      std::snprintf(buf, sizeof buf, "\\x%02x", c);
      out += buf;
    } else {
      out.push_back(static_cast<char>(c));
    }
  }
  return out;
}

}  // namespace

std::string EscapeControlCharacters(std::string_view text) { return Escaped(text, true); }
std::string EscapeBidiControls(std::string_view text) { return Escaped(text, false); }

}  // namespace xladb::ingest
