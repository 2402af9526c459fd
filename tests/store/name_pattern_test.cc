// Name patterns (store/name_pattern.h): GlobLiteral turns a name into a pattern that matches it alone, so a jit
// name holding * ? [ can be asked for exactly (the front page's chart does).
#include <gtest/gtest.h>

#include <string>

#include "store/name_pattern.h"

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
