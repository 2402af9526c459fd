// Name patterns (store/query/name_pattern.h): GlobLiteral turns a name into a pattern that matches it alone, so a jit
// name holding * ? [ can be asked for exactly (the front page's chart does).
#include <gtest/gtest.h>
#include <sqlite3.h>

#include <string>
#include <vector>

#include "store/query/name_pattern.h"

namespace xladb {
namespace {

TEST(NamePattern, GlobLiteralMatchesTheNameAlone) {
  for (const std::string name : {"jit_f", "f[12]", "a*b", "q?", "]x[", "[", "*"}) {
    const std::string pattern = store::GlobLiteral(name);
    EXPECT_TRUE(store::CheckGlobPattern(pattern, "module").ok()) << pattern;
    EXPECT_TRUE(store::NameMatches(pattern, name)) << name << " as " << pattern;
  }
  EXPECT_EQ(store::GlobLiteral("f[12]*?"), "f[[]12][*][?]");
  EXPECT_FALSE(store::NameMatches(store::GlobLiteral("f[12]"), "f1"));
  EXPECT_FALSE(store::NameMatches(store::GlobLiteral("a*b"), "axxb"));
  EXPECT_FALSE(store::NameMatches(store::GlobLiteral("q?"), "qq"));
  EXPECT_EQ(store::GlobLiteral("jit_train_step"), "jit_train_step");  // no pattern: an exact match, indexed
}

}  // namespace
}  // namespace xladb

// NameMatches is SQLite's GLOB written out (so the query library links no SQLite): it must agree with
// sqlite3_strglob, SQL's own GLOB, on every pattern and name of this grid, classes, ranges, negation, `]` as
// a member, runs of `*` and `?`, and multi-byte UTF-8 included.
TEST(NamePattern, AgreesWithSqliteGlobOnEveryPatternOfAGrid) {
  const std::vector<std::string> patterns = {
      "jit_*",  "*step",   "jit_?tep", "j*_*p",   "*",       "**",      "?*",       "*?",        "*?*?",
      "[jx]it*", "[^j]it*", "[]]*",    "[^]]*",   "[a-c]*",  "[-a]*",   "[a-]*",    "[z-a]*",    "*[0-9]",
      "jit_[s",  "é*",      "?",       "??",      "*é",      "[é]*",    "[à-ê]*",   "jit_step",  "*_*_*",
      "[!]*",   "*[*]",    "[?]*",    "a[]]b",   "[^a-z]*", "*.*",     "jit*step*", "[[]*",    "[a-c-e]*"};
  const std::vector<std::string> names = {
      "",        "jit_step", "xit_step", "jit_",   "step",    "jit__step", "]x",     "a]b",      "abc",
      "-x",      "z",        "9",        "jit_s",  "été",     "ê",         "à",      "é",        "*x",
      "?x",      "!x",       "[x",       "a.b",    "jit_step_2", "Jit_step", "jit_stepstep", "b-x", "d"};
  for (const std::string& pattern : patterns) {
    for (const std::string& name : names) {
      if (pattern.empty()) continue;
      const bool sqlite = sqlite3_strglob(pattern.c_str(), name.c_str()) == 0;
      EXPECT_EQ(xladb::store::NameMatches(pattern, name), sqlite) << "pattern '" << pattern << "' name '" << name << "'";
    }
  }
}
