// Visible text (issue 26, item 3): control characters and bidi controls shown as escapes for terminals, and
// bidi controls alone for pages.

#include "ingest/text/visible_text.h"

#include <string>

#include <gtest/gtest.h>

namespace xladb::ingest {
namespace {

TEST(VisibleText, EscapesC0ControlsDelC1ControlsAndBidiControls) {
  EXPECT_EQ(EscapeControlCharacters("note=\x1b]0;PWN\x07\x1b[2J"), "note=\\x1b]0;PWN\\x07\\x1b[2J");
  EXPECT_EQ(EscapeControlCharacters("a\nb\rc\td"), "a\\nb\\rc\\td");
  EXPECT_EQ(EscapeControlCharacters(std::string("a\0b\x7f", 4)), "a\\x00b\\x7f");
  EXPECT_EQ(EscapeControlCharacters("\xc2\x9b" "2J"), "\\u009b2J");  // CSI as U+009B
  for (const char* bidi : {"\u202a", "\u202b", "\u202c", "\u202d", "\u202e", "\u2066", "\u2067", "\u2068", "\u2069"}) {
    const std::string escaped = EscapeControlCharacters(std::string("x") + bidi + "y");
    EXPECT_EQ(escaped.size(), 8u) << escaped;
    EXPECT_EQ(escaped.substr(0, 3), "x\\u") << escaped;
  }
  EXPECT_EQ(EscapeControlCharacters("\u202egnp.exe"), "\\u202egnp.exe");
  EXPECT_EQ(EscapeControlCharacters("\u2069"), "\\u2069");
}

TEST(VisibleText, LeavesOtherTextAsItIs) {
  // Neighbours of the escaped ranges, other UTF-8, invalid bytes and a backslash are untouched.
  for (const char* kept : {"plain", "é ü 日本", "\u2029\u202f\u2065\u206a", "\xc2\xa0", "\xff\xfe", "a\\x1b", "€ 日"}) {
    EXPECT_EQ(EscapeControlCharacters(kept), kept);
  }
}

TEST(VisibleText, AStrayByteThatATerminalReadsAsAC1ControlIsEscaped) {
  // Outside UTF-8, 0x9B is CSI to a terminal in an 8-bit mode: "\x9b2J" clears its screen. Inside a
  // character (the 0x82 of "€", E2 82 AC) the same range is a continuation byte and is kept.
  EXPECT_EQ(EscapeControlCharacters("a\x9b" "2J"), "a\\x9b2J");
  EXPECT_EQ(EscapeControlCharacters("\xe2\x80"), "\xe2\\x80");      // a character cut short
  EXPECT_EQ(EscapeControlCharacters("\xe0\x80\x9b"), "\xe0\\x80\\x9b");  // overlong: not a character
  EXPECT_EQ(EscapeControlCharacters("\xff\x9b"), "\xff\\x9b");
}

TEST(VisibleText, BidiOnlyKeepsLineBreaksForPages) {
  EXPECT_EQ(EscapeBidiControls("a\n\u202eb\x1b"), "a\n\\u202eb\x1b");
}

}  // namespace
}  // namespace xladb::ingest
