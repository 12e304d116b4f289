#include "fsnap/ignore_rules.hpp"

#include <algorithm>
#include <iterator>

namespace fsnap {

namespace {

// A pattern being matched against one path: both as [begin, end) ranges.
struct Wildmatch {
  const char* pattern_begin;
  const char* pattern_end;
  const char* text_end;

  // Matches a bracket expression starting at p ('[') against c. Sets *next to the
  // character after the closing ']'. Returns false in *valid for an unterminated
  // bracket (which then matches a literal '[').
  bool match_class(const char* p, char c, const char** next, bool* valid) const {
    const char* q = p + 1;
    bool negate = false;
    if (q < pattern_end && (*q == '!' || *q == '^')) {
      negate = true;
      ++q;
    }
    bool matched = false;
    bool first = true;
    while (q < pattern_end && (*q != ']' || first)) {
      first = false;
      char lo = *q;
      if (lo == '\\' && q + 1 < pattern_end) lo = *++q;
      ++q;
      char hi = lo;
      if (q + 1 < pattern_end && *q == '-' && q[1] != ']') {
        hi = q[1];
        q += 2;
        if (hi == '\\' && q < pattern_end) hi = *q++;
      }
      if (static_cast<unsigned char>(c) >= static_cast<unsigned char>(lo) &&
          static_cast<unsigned char>(c) <= static_cast<unsigned char>(hi)) {
        matched = true;
      }
    }
    if (q >= pattern_end) {
      *valid = false;
      return false;
    }
    *valid = true;
    *next = q + 1;
    return matched != negate;
  }

  bool match(const char* p, const char* t) const {
    while (p < pattern_end) {
      char c = *p;
      if (c == '*') {
        const char* q = p;
        while (q < pattern_end && *q == '*') ++q;
        bool double_star = q - p >= 2;
        bool at_component_start = p == pattern_begin || p[-1] == '/';
        if (double_star && at_component_start) {
          if (q == pattern_end) return true;  // "x/**" or "**": everything below
          if (*q == '/') {                    // "**/": zero or more directories
            if (match(q + 1, t)) return true;
            for (const char* s = t; s < text_end; ++s) {
              if (*s == '/' && match(q + 1, s + 1)) return true;
            }
            return false;
          }
        }
        // A star within a component: any run of characters other than '/'.
        for (const char* s = t;; ++s) {
          if (match(q, s)) return true;
          if (s == text_end || *s == '/') return false;
        }
      }
      if (t == text_end) return false;
      if (c == '?') {
        if (*t == '/') return false;
        ++p;
        ++t;
        continue;
      }
      if (c == '[') {
        const char* next = nullptr;
        bool valid = false;
        bool matched = *t != '/' && match_class(p, *t, &next, &valid);
        if (*t != '/' && valid) {
          if (!matched) return false;
          p = next;
          ++t;
          continue;
        }
        if (*t == '/') return false;
        // An unterminated '[' is an ordinary character.
      }
      if (c == '\\' && p + 1 < pattern_end) c = *++p;
      if (c != *t) return false;
      ++p;
      ++t;
    }
    return t == text_end;
  }
};

bool wildmatch(std::string_view pattern, std::string_view text) {
  Wildmatch m{pattern.data(), pattern.data() + pattern.size(), text.data() + text.size()};
  return m.match(pattern.data(), text.data());
}

// Removes unescaped trailing spaces (gitignore(5): "Trailing spaces are ignored
// unless they are quoted with backslash").
std::string_view trim_trailing_spaces(std::string_view line) {
  while (!line.empty() && line.back() == ' ') {
    std::size_t backslashes = 0;
    for (std::size_t i = line.size() - 1; i > 0 && line[i - 1] == '\\'; --i) ++backslashes;
    if (backslashes % 2 == 1) break;
    line.remove_suffix(1);
  }
  return line;
}

// Number of components in a base directory ("" = 0).
std::size_t depth_of(std::string_view base) {
  if (base.empty()) return 0;
  std::size_t depth = 1;
  for (char c : base) depth += c == '/' ? 1 : 0;
  return depth;
}

}  // namespace

void IgnoreRules::add(std::string_view base, const std::vector<std::string>& patterns) {
  // Rules stay ordered by the depth of their base (stable within one depth), so a
  // deeper directory's patterns are consulted first whatever order files came in.
  std::size_t depth = depth_of(base);
  auto insert_at = std::find_if(rules_.begin(), rules_.end(),
                                [&](const Rule& r) { return depth_of(r.base) > depth; });
  std::vector<Rule> added;
  for (const std::string& raw : patterns) {
    std::string_view line = raw;
    if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
    line = trim_trailing_spaces(line);
    if (line.empty() || line.front() == '#') continue;
    Rule rule;
    rule.base = std::string(base);
    if (line.front() == '!') {
      rule.negated = true;
      line.remove_prefix(1);
    }
    if (!line.empty() && line.back() == '/') {
      rule.dir_only = true;
      while (!line.empty() && line.back() == '/') line.remove_suffix(1);
    }
    if (!line.empty() && line.front() == '/') {
      rule.anchored = true;
      while (!line.empty() && line.front() == '/') line.remove_prefix(1);
    }
    if (line.empty()) continue;
    if (line.find('/') != std::string_view::npos) rule.anchored = true;
    rule.pattern = std::string(line);
    added.push_back(std::move(rule));
  }
  rules_.insert(insert_at, std::make_move_iterator(added.begin()),
                std::make_move_iterator(added.end()));
}

void IgnoreRules::add_file(std::string_view base, std::string_view text) {
  std::vector<std::string> lines;
  std::size_t start = 0;
  while (start <= text.size()) {
    std::size_t end = text.find('\n', start);
    if (end == std::string_view::npos) end = text.size();
    lines.emplace_back(text.substr(start, end - start));
    start = end + 1;
  }
  add(base, lines);
}

bool IgnoreRules::match_rule(const Rule& rule, std::string_view path) {
  std::string_view rel = path;
  if (!rule.base.empty()) {
    if (rel.size() <= rule.base.size() || rel.compare(0, rule.base.size(), rule.base) != 0 ||
        rel[rule.base.size()] != '/') {
      return false;
    }
    rel.remove_prefix(rule.base.size() + 1);
  }
  if (rule.anchored) return wildmatch(rule.pattern, rel);
  std::size_t slash = rel.rfind('/');
  std::string_view name = slash == std::string_view::npos ? rel : rel.substr(slash + 1);
  return wildmatch(rule.pattern, name);
}

bool IgnoreRules::is_ignored(std::string_view path, bool is_dir) const {
  for (auto it = rules_.rbegin(); it != rules_.rend(); ++it) {
    if (it->dir_only && !is_dir) continue;
    if (match_rule(*it, path)) return !it->negated;
  }
  return false;
}

}  // namespace fsnap
