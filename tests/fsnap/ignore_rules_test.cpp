// fsnap::IgnoreRules against gitignore(5): comments and blank lines, trailing-space
// trimming, `!` negation with last-match-wins, `/` for directories only, anchoring by a
// leading or inner `/`, unanchored patterns at any depth, `*`, `?`, bracket expressions,
// `**` leading, trailing, inner and alone, backslash escapes, base-directory scoping
// (add / add_file) and CRLF line endings.
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "fsnap/ignore_rules.hpp"

namespace {

using fsnap::IgnoreRules;

constexpr bool kFile = false;
constexpr bool kDir = true;

IgnoreRules rules_of(const std::vector<std::string>& patterns, const std::string& base = "") {
  IgnoreRules rules;
  rules.add(base, patterns);
  return rules;
}

TEST(IgnoreRulesTest, EmptyRulesIgnoreNothing) {
  IgnoreRules rules;
  EXPECT_TRUE(rules.empty());
  EXPECT_FALSE(rules.is_ignored("a", kFile));
  EXPECT_FALSE(rules.is_ignored("a/b", kDir));
}

TEST(IgnoreRulesTest, CommentsAndBlankLinesAreSkipped) {
  IgnoreRules rules = rules_of({"", "# a comment", "   ", "#*.txt"});
  EXPECT_TRUE(rules.empty()) << "only blank lines and comments were added";
  EXPECT_FALSE(rules.is_ignored("# a comment", kFile));
  EXPECT_FALSE(rules.is_ignored("x.txt", kFile));

  rules.add("", {"*.o"});
  EXPECT_FALSE(rules.empty());
  EXPECT_TRUE(rules.is_ignored("main.o", kFile));
}

TEST(IgnoreRulesTest, TrailingSpacesAreTrimmedUnlessEscaped) {
  IgnoreRules rules = rules_of({"trail   ", "kept\\ ", "  lead"});
  EXPECT_TRUE(rules.is_ignored("trail", kFile));
  EXPECT_FALSE(rules.is_ignored("trail   ", kFile));
  // "kept\ " keeps one (escaped) trailing space.
  EXPECT_TRUE(rules.is_ignored("kept ", kFile));
  EXPECT_FALSE(rules.is_ignored("kept", kFile));
  // Leading spaces are part of the pattern.
  EXPECT_TRUE(rules.is_ignored("  lead", kFile));
  EXPECT_FALSE(rules.is_ignored("lead", kFile));
}

TEST(IgnoreRulesTest, EscapedBackslashBeforeTrailingSpaceDoesNotKeepTheSpace) {
  // "x\\ " is an escaped backslash followed by an unescaped (trimmed) space.
  IgnoreRules rules = rules_of({"x\\\\ "});
  EXPECT_TRUE(rules.is_ignored("x\\", kFile));
  EXPECT_FALSE(rules.is_ignored("x\\ ", kFile));
}

TEST(IgnoreRulesTest, NegationReincludesAndLastMatchWins) {
  IgnoreRules rules = rules_of({"*.log", "!keep.log"});
  EXPECT_TRUE(rules.is_ignored("debug.log", kFile));
  EXPECT_TRUE(rules.is_ignored("deep/dir/debug.log", kFile));
  EXPECT_FALSE(rules.is_ignored("keep.log", kFile));
  EXPECT_FALSE(rules.is_ignored("deep/keep.log", kFile));

  // The other order: the later "*.log" overrides the earlier negation.
  IgnoreRules reversed = rules_of({"!keep.log", "*.log"});
  EXPECT_TRUE(reversed.is_ignored("keep.log", kFile));

  // Three layers: ignore, re-include, ignore again.
  IgnoreRules layered = rules_of({"*.log", "!important*.log", "important-but-not-this.log"});
  EXPECT_TRUE(layered.is_ignored("a.log", kFile));
  EXPECT_FALSE(layered.is_ignored("important-1.log", kFile));
  EXPECT_TRUE(layered.is_ignored("important-but-not-this.log", kFile));

  // A lone negation re-includes what was never excluded: nothing is ignored.
  IgnoreRules only_negation = rules_of({"!x"});
  EXPECT_FALSE(only_negation.is_ignored("x", kFile));
}

TEST(IgnoreRulesTest, TrailingSlashMatchesDirectoriesOnly) {
  IgnoreRules rules = rules_of({"build/"});
  EXPECT_TRUE(rules.is_ignored("build", kDir));
  EXPECT_FALSE(rules.is_ignored("build", kFile));
  EXPECT_TRUE(rules.is_ignored("a/b/build", kDir)) << "no inner slash: matches at any depth";
  EXPECT_FALSE(rules.is_ignored("a/b/build", kFile));
  // Parents are not consulted: the walk never asks about children of an ignored dir.
  EXPECT_FALSE(rules.is_ignored("build/out.o", kFile));

  // A negated directory-only pattern does not re-include a file of that name.
  IgnoreRules negated = rules_of({"cache*", "!cache/"});
  EXPECT_FALSE(negated.is_ignored("cache", kDir));
  EXPECT_TRUE(negated.is_ignored("cache", kFile));
  EXPECT_TRUE(negated.is_ignored("cache.db", kFile));
}

TEST(IgnoreRulesTest, LeadingSlashAnchorsToTheBase) {
  IgnoreRules rules = rules_of({"/root.txt", "/out/"});
  EXPECT_TRUE(rules.is_ignored("root.txt", kFile));
  EXPECT_FALSE(rules.is_ignored("a/root.txt", kFile));
  EXPECT_TRUE(rules.is_ignored("out", kDir));
  EXPECT_FALSE(rules.is_ignored("out", kFile));
  EXPECT_FALSE(rules.is_ignored("src/out", kDir));
}

TEST(IgnoreRulesTest, InnerSlashAnchorsToTheBase) {
  IgnoreRules rules = rules_of({"doc/frotz", "src/gen/"});
  EXPECT_TRUE(rules.is_ignored("doc/frotz", kFile));
  EXPECT_TRUE(rules.is_ignored("doc/frotz", kDir));
  EXPECT_FALSE(rules.is_ignored("a/doc/frotz", kFile));
  EXPECT_FALSE(rules.is_ignored("frotz", kFile));
  EXPECT_TRUE(rules.is_ignored("src/gen", kDir));
  EXPECT_FALSE(rules.is_ignored("src/gen", kFile));
  EXPECT_FALSE(rules.is_ignored("lib/src/gen", kDir));
}

TEST(IgnoreRulesTest, UnanchoredPatternMatchesTheBasenameAtAnyDepth) {
  IgnoreRules rules = rules_of({"foo", "*.tmp"});
  for (const char* path : {"foo", "a/foo", "a/b/c/foo"}) {
    EXPECT_TRUE(rules.is_ignored(path, kFile)) << path;
    EXPECT_TRUE(rules.is_ignored(path, kDir)) << path;
  }
  EXPECT_FALSE(rules.is_ignored("foobar", kFile));
  EXPECT_FALSE(rules.is_ignored("barfoo", kFile));
  EXPECT_FALSE(rules.is_ignored("foo.c", kFile));
  EXPECT_FALSE(rules.is_ignored("foo/bar", kFile)) << "the basename is bar";
  EXPECT_FALSE(rules.is_ignored("a.tmp.txt", kFile)) << "the whole basename must match";
  EXPECT_TRUE(rules.is_ignored("x/y/z.tmp", kFile));
  EXPECT_TRUE(rules.is_ignored(".tmp", kFile)) << "* matches the empty string, dotfiles too";
}

TEST(IgnoreRulesTest, StarDoesNotCrossSlash) {
  IgnoreRules rules = rules_of({"a/*.txt", "x*y"});
  EXPECT_TRUE(rules.is_ignored("a/one.txt", kFile));
  EXPECT_TRUE(rules.is_ignored("a/.txt", kFile));
  EXPECT_FALSE(rules.is_ignored("a/b/one.txt", kFile));
  EXPECT_FALSE(rules.is_ignored("b/a/one.txt", kFile)) << "inner slash anchors";
  EXPECT_TRUE(rules.is_ignored("xy", kFile));
  EXPECT_TRUE(rules.is_ignored("x-anything-y", kFile));
  EXPECT_TRUE(rules.is_ignored("dir/xzzy", kFile));

  IgnoreRules anchored = rules_of({"/x*y"});
  EXPECT_FALSE(anchored.is_ignored("x/y", kFile));
  EXPECT_TRUE(anchored.is_ignored("xay", kFile));

  IgnoreRules star_in_dir = rules_of({"src/*/gen"});
  EXPECT_TRUE(star_in_dir.is_ignored("src/lib/gen", kDir));
  EXPECT_FALSE(star_in_dir.is_ignored("src/gen", kDir));
  EXPECT_FALSE(star_in_dir.is_ignored("src/a/b/gen", kDir));

  // Two stars that are not a whole component are ordinary stars.
  IgnoreRules double_in_name = rules_of({"/a**z"});
  EXPECT_TRUE(double_in_name.is_ignored("abcz", kFile));
  EXPECT_FALSE(double_in_name.is_ignored("a/z", kFile));
  EXPECT_FALSE(double_in_name.is_ignored("ab/cz", kFile));
}

TEST(IgnoreRulesTest, QuestionMarkMatchesOneCharacterButNotSlash) {
  IgnoreRules rules = rules_of({"a?c"});
  EXPECT_TRUE(rules.is_ignored("abc", kFile));
  EXPECT_TRUE(rules.is_ignored("a.c", kFile));
  EXPECT_TRUE(rules.is_ignored("d/a c", kFile));
  EXPECT_FALSE(rules.is_ignored("ac", kFile));
  EXPECT_FALSE(rules.is_ignored("abbc", kFile));

  IgnoreRules anchored = rules_of({"a?b/c"});
  EXPECT_FALSE(anchored.is_ignored("a/b/c", kFile));
  EXPECT_TRUE(anchored.is_ignored("a_b/c", kFile));
}

TEST(IgnoreRulesTest, BracketExpressions) {
  IgnoreRules range = rules_of({"file[0-9].txt"});
  EXPECT_TRUE(range.is_ignored("file0.txt", kFile));
  EXPECT_TRUE(range.is_ignored("file9.txt", kFile));
  EXPECT_FALSE(range.is_ignored("filea.txt", kFile));
  EXPECT_FALSE(range.is_ignored("file10.txt", kFile));
  EXPECT_FALSE(range.is_ignored("file.txt", kFile));

  IgnoreRules letters = rules_of({"[a-z]x"});
  EXPECT_TRUE(letters.is_ignored("ax", kFile));
  EXPECT_TRUE(letters.is_ignored("zx", kFile));
  EXPECT_FALSE(letters.is_ignored("Ax", kFile)) << "matching is case-sensitive";
  EXPECT_FALSE(letters.is_ignored("1x", kFile));

  IgnoreRules set = rules_of({"[abc]1"});
  EXPECT_TRUE(set.is_ignored("b1", kFile));
  EXPECT_FALSE(set.is_ignored("d1", kFile));

  IgnoreRules negated = rules_of({"[!x]y"});
  EXPECT_TRUE(negated.is_ignored("ay", kFile));
  EXPECT_TRUE(negated.is_ignored("zy", kFile));
  EXPECT_FALSE(negated.is_ignored("xy", kFile));
  EXPECT_FALSE(negated.is_ignored("y", kFile)) << "a bracket consumes exactly one character";

  IgnoreRules negated_range = rules_of({"[!0-9]y"});
  EXPECT_TRUE(negated_range.is_ignored("zy", kFile));
  EXPECT_FALSE(negated_range.is_ignored("5y", kFile));

  IgnoreRules caret = rules_of({"[^x]y"});
  EXPECT_TRUE(caret.is_ignored("ay", kFile));
  EXPECT_FALSE(caret.is_ignored("xy", kFile));

  // A bracket never matches the separator.
  IgnoreRules no_slash = rules_of({"/a[!b]c"});
  EXPECT_FALSE(no_slash.is_ignored("a/c", kFile));
  EXPECT_TRUE(no_slash.is_ignored("a_c", kFile));
}

TEST(IgnoreRulesTest, LeadingDoubleStarMatchesInAllDirectories) {
  IgnoreRules rules = rules_of({"**/foo"});
  EXPECT_TRUE(rules.is_ignored("foo", kFile));
  EXPECT_TRUE(rules.is_ignored("a/foo", kFile));
  EXPECT_TRUE(rules.is_ignored("a/b/c/foo", kDir));
  EXPECT_FALSE(rules.is_ignored("a/xfoo", kFile));
  EXPECT_FALSE(rules.is_ignored("foo/bar", kFile));

  IgnoreRules two = rules_of({"**/foo/bar"});
  EXPECT_TRUE(two.is_ignored("foo/bar", kFile));
  EXPECT_TRUE(two.is_ignored("x/foo/bar", kFile));
  EXPECT_TRUE(two.is_ignored("x/y/foo/bar", kFile));
  EXPECT_FALSE(two.is_ignored("foo/x/bar", kFile));
  EXPECT_FALSE(two.is_ignored("bar", kFile));
}

TEST(IgnoreRulesTest, TrailingDoubleStarMatchesEverythingInside) {
  IgnoreRules rules = rules_of({"abc/**"});
  EXPECT_TRUE(rules.is_ignored("abc/a", kFile));
  EXPECT_TRUE(rules.is_ignored("abc/a/b/c", kFile));
  EXPECT_TRUE(rules.is_ignored("abc/d", kDir));
  EXPECT_FALSE(rules.is_ignored("abc", kDir)) << "the directory itself is not matched";
  EXPECT_FALSE(rules.is_ignored("x/abc/a", kFile)) << "inner slash anchors";
  EXPECT_FALSE(rules.is_ignored("abcd/a", kFile));

  // "/secrets/**" with "!secrets/keep": re-include one file inside.
  IgnoreRules secrets = rules_of({"/secrets/**", "!/secrets/public.pem"});
  EXPECT_TRUE(secrets.is_ignored("secrets/key", kFile));
  EXPECT_FALSE(secrets.is_ignored("secrets/public.pem", kFile));
}

TEST(IgnoreRulesTest, InnerDoubleStarMatchesZeroOrMoreDirectories) {
  IgnoreRules rules = rules_of({"a/**/b"});
  EXPECT_TRUE(rules.is_ignored("a/b", kFile));
  EXPECT_TRUE(rules.is_ignored("a/x/b", kFile));
  EXPECT_TRUE(rules.is_ignored("a/x/y/z/b", kDir));
  EXPECT_FALSE(rules.is_ignored("a/xb", kFile));
  EXPECT_FALSE(rules.is_ignored("a/x/bb", kFile));
  EXPECT_FALSE(rules.is_ignored("x/a/b", kFile));
  EXPECT_FALSE(rules.is_ignored("a/b/c", kFile));

  IgnoreRules with_star = rules_of({"src/**/*.gen.h"});
  EXPECT_TRUE(with_star.is_ignored("src/x.gen.h", kFile));
  EXPECT_TRUE(with_star.is_ignored("src/a/b/x.gen.h", kFile));
  EXPECT_FALSE(with_star.is_ignored("src/a/b/x.h", kFile));
}

TEST(IgnoreRulesTest, LoneDoubleStarMatchesEverything) {
  EXPECT_TRUE(rules_of({"**"}).is_ignored("any/thing", kFile));
}

TEST(IgnoreRulesTest, BackslashEscapes) {
  IgnoreRules rules = rules_of({"\\#hash", "\\!bang", "\\*.txt", "q\\?"});
  EXPECT_FALSE(rules.empty()) << "an escaped # is a pattern, not a comment";
  EXPECT_TRUE(rules.is_ignored("#hash", kFile));
  EXPECT_TRUE(rules.is_ignored("!bang", kFile));
  EXPECT_FALSE(rules.is_ignored("bang", kFile)) << "an escaped ! does not negate";
  EXPECT_TRUE(rules.is_ignored("*.txt", kFile));
  EXPECT_FALSE(rules.is_ignored("a.txt", kFile)) << "an escaped * is literal";
  EXPECT_TRUE(rules.is_ignored("q?", kFile));
  EXPECT_FALSE(rules.is_ignored("qx", kFile));

  IgnoreRules bracket = rules_of({"\\[x]"});
  EXPECT_TRUE(bracket.is_ignored("[x]", kFile));
  EXPECT_FALSE(bracket.is_ignored("x", kFile));
}

TEST(IgnoreRulesTest, PatternsOfABaseApplyOnlyBelowIt) {
  IgnoreRules rules = rules_of({"*.tmp", "/top", "gen/x"}, "sub");
  EXPECT_TRUE(rules.is_ignored("sub/a.tmp", kFile));
  EXPECT_TRUE(rules.is_ignored("sub/deep/er/a.tmp", kFile));
  EXPECT_FALSE(rules.is_ignored("a.tmp", kFile));
  EXPECT_FALSE(rules.is_ignored("other/a.tmp", kFile));
  EXPECT_FALSE(rules.is_ignored("subway/a.tmp", kFile)) << "a prefix is not the base";
  EXPECT_FALSE(rules.is_ignored("other/sub/a.tmp", kFile));

  // Anchored patterns are relative to the base, not the root.
  EXPECT_TRUE(rules.is_ignored("sub/top", kFile));
  EXPECT_FALSE(rules.is_ignored("top", kFile));
  EXPECT_FALSE(rules.is_ignored("sub/d/top", kFile));
  EXPECT_TRUE(rules.is_ignored("sub/gen/x", kFile));
  EXPECT_FALSE(rules.is_ignored("gen/x", kFile));
  EXPECT_FALSE(rules.is_ignored("sub/d/gen/x", kFile));

  // The base directory itself is not below it.
  IgnoreRules self = rules_of({"*"}, "sub");
  EXPECT_FALSE(self.is_ignored("sub", kDir));
  EXPECT_TRUE(self.is_ignored("sub/anything", kFile));

  // A nested base.
  IgnoreRules nested = rules_of({"/x"}, "a/b");
  EXPECT_TRUE(nested.is_ignored("a/b/x", kFile));
  EXPECT_FALSE(nested.is_ignored("a/x", kFile));
  EXPECT_FALSE(nested.is_ignored("a/b/c/x", kFile));
}

TEST(IgnoreRulesTest, DeeperBaseOverridesItsParents) {
  IgnoreRules rules;
  rules.add_file("", "*.log\n/vendor/\n");
  rules.add_file("sub", "!keep.log\n");
  rules.add_file("sub/deeper", "keep.log\n");
  EXPECT_TRUE(rules.is_ignored("keep.log", kFile));
  EXPECT_TRUE(rules.is_ignored("other/keep.log", kFile));
  EXPECT_FALSE(rules.is_ignored("sub/keep.log", kFile));
  EXPECT_FALSE(rules.is_ignored("sub/x/keep.log", kFile));
  EXPECT_TRUE(rules.is_ignored("sub/deeper/keep.log", kFile));
  EXPECT_TRUE(rules.is_ignored("sub/deeper/x/keep.log", kFile));
  EXPECT_TRUE(rules.is_ignored("sub/other.log", kFile)) << "root rules still apply below sub";
  EXPECT_TRUE(rules.is_ignored("vendor", kDir));
  EXPECT_FALSE(rules.is_ignored("sub/vendor", kDir)) << "anchored to the root's base";
  EXPECT_TRUE(rules.is_ignored("subway/keep.log", kFile)) << "'subway' is not below 'sub'";
}

// gitignore(5): patterns of a lower-level file override those of higher levels. The
// precedence comes from the depth of the base, whatever order the files were added in.
TEST(IgnoreRulesTest, DeeperBaseOverridesWhateverTheOrderOfAdding) {
  IgnoreRules rules;
  rules.add_file("sub", "!keep.log\n");
  rules.add_file("", "*.log\n");
  EXPECT_TRUE(rules.is_ignored("keep.log", kFile));
  EXPECT_FALSE(rules.is_ignored("sub/keep.log", kFile));
}

TEST(IgnoreRulesTest, AddFileSplitsLinesAndHandlesCrlf) {
  IgnoreRules rules;
  rules.add_file("", "# comment\r\n*.bak\r\n\r\nbuild/\r\n!keep.bak  \r\nlast");
  EXPECT_TRUE(rules.is_ignored("x.bak", kFile));
  EXPECT_FALSE(rules.is_ignored("x.bak\r", kFile)) << "the CR is not part of the pattern";
  EXPECT_TRUE(rules.is_ignored("build", kDir)) << "CR removed before the trailing '/' is seen";
  EXPECT_FALSE(rules.is_ignored("build", kFile));
  EXPECT_FALSE(rules.is_ignored("keep.bak", kFile)) << "spaces before the CR are trimmed";
  EXPECT_TRUE(rules.is_ignored("last", kFile)) << "a last line without newline counts";
  EXPECT_FALSE(rules.is_ignored("# comment", kFile));

  IgnoreRules escaped;
  escaped.add_file("", "escaped\\ \r\n");
  EXPECT_TRUE(escaped.is_ignored("escaped ", kFile)) << "an escaped space before the CR is kept";
  EXPECT_FALSE(escaped.is_ignored("escaped", kFile));

  IgnoreRules only_comments;
  only_comments.add_file("", "# a\r\n\r\n   \n#b");
  EXPECT_TRUE(only_comments.empty());
  IgnoreRules nothing;
  nothing.add_file("", "");
  EXPECT_TRUE(nothing.empty());
}

TEST(IgnoreRulesTest, AddAppendsToEarlierPatterns) {
  IgnoreRules rules;
  rules.add("", {"*.a"});
  rules.add("", {"*.b"});
  EXPECT_TRUE(rules.is_ignored("x.a", kFile));
  EXPECT_TRUE(rules.is_ignored("x.b", kFile));
  rules.add("", {"!x.a"});
  EXPECT_FALSE(rules.is_ignored("x.a", kFile));
  EXPECT_TRUE(rules.is_ignored("y.a", kFile));
}

TEST(IgnoreRulesTest, NamesWithUnusualBytes) {
  IgnoreRules rules = rules_of({"caf\xc3\xa9*", "bad\xff", "new*line"});
  EXPECT_TRUE(rules.is_ignored("dir/caf\xc3\xa9.txt", kFile));
  EXPECT_TRUE(rules.is_ignored("bad\xff", kFile));
  EXPECT_FALSE(rules.is_ignored("bad\xfe", kFile));
  EXPECT_TRUE(rules.is_ignored("new\nline", kFile)) << "* matches a newline";

  IgnoreRules high_range = rules_of({"[\x80-\xff]"});
  EXPECT_TRUE(high_range.is_ignored("\xe9", kFile)) << "bytes compare unsigned";
  EXPECT_FALSE(high_range.is_ignored("e", kFile));
}

}  // namespace
