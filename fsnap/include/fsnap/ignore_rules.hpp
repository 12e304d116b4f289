// IgnoreRules — gitignore-style path patterns.
//
// Implements the pattern language of gitignore(5): blank lines and `#` comments are
// skipped, `!` negates, a trailing `/` matches directories only, a `/` at the start
// or in the middle anchors the pattern to its base directory, `*`, `?` and `[...]`
// match within one component, `**` matches across components (`**/x`, `x/**`,
// `a/**/b`), and `\` escapes. The last matching pattern wins; patterns added for a
// deeper base directory override those of shallower ones, whatever order they came in.
//
// Thread-safety: const methods may be called concurrently; adding needs exclusion.
#pragma once

#include <string>
#include <string_view>
#include <vector>

namespace fsnap {

// An ordered set of gitignore-style patterns, each scoped to a base directory.
class IgnoreRules {
 public:
  // Adds patterns (one per element, gitignore syntax) scoped to the directory `base`
  // ("" for the workspace root, otherwise a relative path without trailing '/').
  void add(std::string_view base, const std::vector<std::string>& patterns);
  // Adds the lines of a .gitignore file found in the directory `base`.
  void add_file(std::string_view base, std::string_view text);
  // True if the path (relative to the root) is excluded by the last pattern that
  // matches it. is_dir says whether the path is a directory. Parents are not
  // consulted: a walk that skips ignored directories never asks about their children.
  bool is_ignored(std::string_view path, bool is_dir) const;
  // True if no pattern has been added.
  bool empty() const { return rules_.empty(); }

 private:
  struct Rule {
    std::string base;     // directory the pattern is relative to ("" = root)
    std::string pattern;  // pattern without the leading '!' / trailing '/' markers
    bool negated = false;
    bool dir_only = false;
    bool anchored = false;  // contains a '/' (other than a trailing one)
  };
  static bool match_rule(const Rule& rule, std::string_view path);
  std::vector<Rule> rules_;
};

}  // namespace fsnap
