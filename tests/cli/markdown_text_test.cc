// Markdown text (issue 26, item 3): the rules of cli/markdown_text.h, value by value. How a whole report
// renders is checked with a real CommonMark renderer in tests/e2e/test_inert_text.py.

#include "cli/markdown_text.h"

#include <gtest/gtest.h>

namespace xladb::cli {
namespace {

TEST(MarkdownText, EscapesEveryAsciiPunctuationCharacter) {
  EXPECT_EQ(MarkdownText("![x](https://e.example/p.png) @octocat **b**"),
            "\\!\\[x\\]\\(https\\:\\/\\/e\\.example\\/p\\.png\\) \\@octocat \\*\\*b\\*\\*");
  EXPECT_EQ(MarkdownText("a|b `c` <i> _d_ ~e~ #f +g -h {i} &amp; \\"),
            "a\\|b \\`c\\` \\<i\\> \\_d\\_ \\~e\\~ \\#f \\+g \\-h \\{i\\} \\&amp\\; \\\\");
  EXPECT_EQ(MarkdownText("plain words 123 é"), "plain words 123 é");
}

TEST(MarkdownText, ControlCharactersAndLineBreaksBecomeVisibleEscapes) {
  EXPECT_EQ(MarkdownText("a\nb"), "a\\\\nb");  // renders as the text a\nb, on one line
  EXPECT_EQ(MarkdownCode("a\x1b[2J\r\n"), "`a\\x1b[2J\\r\\n`");
  EXPECT_EQ(MarkdownCode("x\u202ey"), "`x\\u202ey`");
}

TEST(MarkdownCode, TheFenceIsLongerThanAnyBacktickRunInside) {
  EXPECT_EQ(MarkdownCode("model.py:12"), "`model.py:12`");
  EXPECT_EQ(MarkdownCode("a`b"), "``a`b``");
  EXPECT_EQ(MarkdownCode("a``b```c"), "````a``b```c````");
  EXPECT_EQ(MarkdownCode("`x"), "`` `x ``");  // padded, so the fence does not grow into it
  EXPECT_EQ(MarkdownCode("x`"), "`` x` ``");
  EXPECT_EQ(MarkdownCode(" x "), "`  x  `");  // a reader strips one space each side: " x " again
  EXPECT_EQ(MarkdownCode("<img src=x>&lt;"), "`<img src=x>&lt;`");  // nothing is decoded in a code span
  EXPECT_EQ(MarkdownCode("a|b"), "`a|b`");
}

TEST(MarkdownCode, InATableCellAPipeIsEscapedEvenInsideTheSpan) {
  EXPECT_EQ(MarkdownCodeInCell("a|b"), "`a\\|b`");
  EXPECT_EQ(MarkdownCodeInCell("a\\|b"), "`a\\\\|b`");  // GFM reads \\| as \ then an escaped |
  EXPECT_EQ(MarkdownCodeInCell("`|"), "`` `\\| ``");
}

TEST(MarkdownCode, HtmlCodeEscapesForRawHtml) {
  EXPECT_EQ(HtmlCodeInMarkdown("<img src=x>&\"'\x07"), "<code>&lt;img src=x&gt;&amp;&quot;&#39;\\x07</code>");
}

TEST(ReportUrl, OnlyHttpAndHttpsUrlsThatNeedNoEscaping) {
  EXPECT_EQ(ReportUrlProblem("https://ci.example/artifacts/gate.html"), "");
  EXPECT_EQ(ReportUrlProblem("HTTP://ci.example/a?b=c&d=%20"), "");
  for (const char* bad : {"javascript:alert(1)", "JAVASCRIPT:alert(1)", "data:text/html,x", "file:///etc/passwd",
                          "//evil.example", "https://", "https:x", "https://x/a b", "https://x/a)", "https://x/<a>",
                          "https://x/\\", "https://x/\n", "https://x/é"}) {
    EXPECT_NE(ReportUrlProblem(bad), "") << bad;
  }
}

}  // namespace
}  // namespace xladb::cli
