// fsnap::IgnoreRules: the gitignore(5) pattern language used by capture.excludes and
// (with respect_gitignore) by the workspace's .gitignore files.
#include <gtest/gtest.h>

#include "fsnap/ignore_rules.hpp"

namespace {

fsnap::IgnoreRules rules(const std::vector<std::string>& patterns, const std::string& base = "") {
  fsnap::IgnoreRules r;
  r.add(base, patterns);
  return r;
}

TEST(IgnoreRulesTest, EmptyCommentsAndBlankLines) {
  fsnap::IgnoreRules none;
  EXPECT_TRUE(none.empty());
  EXPECT_FALSE(none.is_ignored("anything", false));
  fsnap::IgnoreRules r = rules({"", "# comment", "   "});
  EXPECT_TRUE(r.empty());
  EXPECT_TRUE(rules({"\\#literal"}).is_ignored("#literal", false));
}

TEST(IgnoreRulesTest, UnanchoredPatternsMatchTheNameAtAnyDepth) {
  fsnap::IgnoreRules r = rules({"*.log", "build"});
  EXPECT_TRUE(r.is_ignored("app.log", false));
  EXPECT_TRUE(r.is_ignored("deep/er/app.log", false));
  EXPECT_FALSE(r.is_ignored("app.log.txt", false));
  EXPECT_TRUE(r.is_ignored("build", true));
  EXPECT_TRUE(r.is_ignored("src/build", false));
  EXPECT_FALSE(r.is_ignored("builder", true));
}

TEST(IgnoreRulesTest, SlashesAnchorToTheBase) {
  fsnap::IgnoreRules r = rules({"/top.txt", "doc/*.md"});
  EXPECT_TRUE(r.is_ignored("top.txt", false));
  EXPECT_FALSE(r.is_ignored("sub/top.txt", false));
  EXPECT_TRUE(r.is_ignored("doc/a.md", false));
  EXPECT_FALSE(r.is_ignored("doc/sub/a.md", false)) << "* must not cross '/'";
  EXPECT_FALSE(r.is_ignored("x/doc/a.md", false));
}

TEST(IgnoreRulesTest, TrailingSlashMatchesDirectoriesOnly) {
  fsnap::IgnoreRules r = rules({"cache/"});
  EXPECT_TRUE(r.is_ignored("cache", true));
  EXPECT_TRUE(r.is_ignored("a/cache", true));
  EXPECT_FALSE(r.is_ignored("cache", false));
}

TEST(IgnoreRulesTest, NegationAndLastMatchWins) {
  fsnap::IgnoreRules r = rules({"*.log", "!keep.log", "really/keep.log"});
  EXPECT_TRUE(r.is_ignored("x.log", false));
  EXPECT_FALSE(r.is_ignored("keep.log", false));
  EXPECT_FALSE(r.is_ignored("a/keep.log", false));
  EXPECT_TRUE(r.is_ignored("really/keep.log", false));
  EXPECT_TRUE(rules({"\\!bang"}).is_ignored("!bang", false));
}

TEST(IgnoreRulesTest, WildcardsAndClasses) {
  fsnap::IgnoreRules r = rules({"file?.txt", "[a-c]x", "[!0-9]y", "\\*star"});
  EXPECT_TRUE(r.is_ignored("file1.txt", false));
  EXPECT_FALSE(r.is_ignored("file10.txt", false));
  EXPECT_TRUE(r.is_ignored("bx", false));
  EXPECT_FALSE(r.is_ignored("dx", false));
  EXPECT_TRUE(r.is_ignored("zy", false));
  EXPECT_FALSE(r.is_ignored("5y", false));
  EXPECT_TRUE(r.is_ignored("*star", false));
  EXPECT_FALSE(r.is_ignored("xstar", false));
  EXPECT_FALSE(rules({"a?b"}).is_ignored("a/b", false)) << "? must not match '/'";
}

TEST(IgnoreRulesTest, DoubleStar) {
  EXPECT_TRUE(rules({"**/gen"}).is_ignored("gen", true));
  EXPECT_TRUE(rules({"**/gen"}).is_ignored("a/b/gen", true));
  fsnap::IgnoreRules inside = rules({"secrets/**"});
  EXPECT_TRUE(inside.is_ignored("secrets/a", false));
  EXPECT_TRUE(inside.is_ignored("secrets/a/b/c", false));
  EXPECT_FALSE(inside.is_ignored("secrets", true));
  EXPECT_FALSE(inside.is_ignored("x/secrets/a", false));
  fsnap::IgnoreRules middle = rules({"a/**/b"});
  EXPECT_TRUE(middle.is_ignored("a/b", false));
  EXPECT_TRUE(middle.is_ignored("a/x/b", false));
  EXPECT_TRUE(middle.is_ignored("a/x/y/b", false));
  EXPECT_FALSE(middle.is_ignored("a/x/y/c", false));
  EXPECT_TRUE(rules({"**"}).is_ignored("any/thing", false));
}

TEST(IgnoreRulesTest, TrailingSpacesAndCarriageReturns) {
  fsnap::IgnoreRules r;
  r.add_file("", "spaced   \r\nescaped\\ \r\n");
  EXPECT_TRUE(r.is_ignored("spaced", false));
  EXPECT_TRUE(r.is_ignored("escaped ", false));
  EXPECT_FALSE(r.is_ignored("escaped", false));
}

TEST(IgnoreRulesTest, RulesAreScopedToTheirBaseDirectory) {
  fsnap::IgnoreRules r;
  r.add_file("", "*.tmp\n");
  r.add_file("sub", "/local.txt\n!keep.tmp\n");
  EXPECT_TRUE(r.is_ignored("sub/local.txt", false));
  EXPECT_FALSE(r.is_ignored("local.txt", false));
  EXPECT_FALSE(r.is_ignored("sub/deeper/local.txt", false));
  EXPECT_TRUE(r.is_ignored("x.tmp", false));
  EXPECT_TRUE(r.is_ignored("keep.tmp", false)) << "the negation only applies below sub/";
  EXPECT_FALSE(r.is_ignored("sub/keep.tmp", false));
  EXPECT_TRUE(r.is_ignored("subway/keep.tmp", false)) << "'subway' is not below 'sub'";
}

}  // namespace
