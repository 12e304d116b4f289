#include "tree_encoding.hpp"

#include <algorithm>
#include <cstdio>
#include <cstring>

namespace fsnap {

bool git_tree_less(const TreeItem& a, const TreeItem& b) {
  std::string_view x = a.name;
  std::string_view y = b.name;
  std::size_t n = std::min(x.size(), y.size());
  int c = std::memcmp(x.data(), y.data(), n);
  if (c != 0) return c < 0;
  auto next = [n](std::string_view s, std::uint32_t mode) -> unsigned char {
    if (s.size() > n) return static_cast<unsigned char>(s[n]);
    return mode == kModeTree ? '/' : '\0';
  };
  return next(x, a.mode) < next(y, b.mode);
}

std::string encode_tree(std::vector<TreeItem>& items) {
  std::sort(items.begin(), items.end(), git_tree_less);
  std::string out;
  out.reserve(items.size() * 48);
  char mode_buf[16];
  for (const TreeItem& item : items) {
    int len = std::snprintf(mode_buf, sizeof mode_buf, "%o ", item.mode);
    out.append(mode_buf, static_cast<std::size_t>(len));
    out.append(item.name);
    out.push_back('\0');
    out.append(reinterpret_cast<const char*>(item.oid.id), GIT_OID_RAWSZ);
  }
  return out;
}

}  // namespace fsnap
