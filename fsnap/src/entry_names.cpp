#include "entry_names.hpp"

#include <algorithm>
#include <vector>

#include "fsnap/error.hpp"
#include "fsnap/path_quoting.hpp"

namespace fsnap {

namespace {

char lower(char c) {
  return (c >= 'A' && c <= 'Z') ? static_cast<char>(c - 'A' + 'a') : c;
}

// The UTF-8 length of a code point HFS+ ignores in names (U+200C..U+200F,
// U+202A..U+202E, U+206A..U+206F, U+FEFF) starting at name[i], or 0.
std::size_t hfs_ignorable_at(std::string_view name, std::size_t i) {
  if (i + 3 > name.size()) return 0;
  auto b = [&](std::size_t k) { return static_cast<unsigned char>(name[i + k]); };
  if (b(0) == 0xE2 && b(1) == 0x80 &&
      ((b(2) >= 0x8C && b(2) <= 0x8F) || (b(2) >= 0xAA && b(2) <= 0xAE))) {
    return 3;
  }
  if (b(0) == 0xE2 && b(1) == 0x81 && b(2) >= 0xAA && b(2) <= 0xAF) return 3;
  if (b(0) == 0xEF && b(1) == 0xBB && b(2) == 0xBF) return 3;
  return 0;
}

// name as HFS+ compares it: ASCII letters folded, ignorable code points dropped.
std::string hfs_folded(std::string_view name) {
  std::string out;
  for (std::size_t i = 0; i < name.size();) {
    if (std::size_t n = hfs_ignorable_at(name, i)) {
      i += n;
      continue;
    }
    out += lower(name[i++]);
  }
  return out;
}

// name as NTFS resolves it: ASCII letters folded, an alternate data stream (":...")
// and trailing dots and spaces dropped.
std::string ntfs_folded(std::string_view name) {
  std::string out;
  for (char c : name.substr(0, name.find(':'))) out += lower(c);
  while (!out.empty() && (out.back() == '.' || out.back() == ' ')) out.pop_back();
  return out;
}

bool mode_is_written(git_filemode_t mode) {
  switch (mode) {
    case GIT_FILEMODE_TREE:
    case GIT_FILEMODE_BLOB:
    case GIT_FILEMODE_BLOB_EXECUTABLE:
    case GIT_FILEMODE_LINK:
    case GIT_FILEMODE_COMMIT:  // a gitlink: never written, never read back
      return true;
    default:
      return false;
  }
}

void check_tree(const ShadowRepo::Impl& repo, const git_oid& oid, const std::string& path,
                std::size_t depth, const std::string& what, OidSet& checked) {
  if (!checked.insert(oid).second) return;
  check_tree_depth(depth, path, what);
  git::Tree tree = repo.lookup_tree(oid);
  std::size_t n = git_tree_entrycount(tree.get());
  std::vector<std::string_view> names;
  names.reserve(n);
  std::vector<std::pair<std::string_view, git_oid>> subtrees;
  for (std::size_t i = 0; i < n; ++i) {
    const git_tree_entry* e = git_tree_entry_byindex(tree.get(), i);
    std::string_view name = git_tree_entry_name(e);
    check_entry_name(name, path, what);
    git_filemode_t mode = git_tree_entry_filemode_raw(e);
    if (!mode_is_written(mode)) {
      throw Error(ErrorCode::kCorrupt, what + " holds " + quote_path(join(path, name)) +
                                           " with a mode shadowbox never writes (" +
                                           std::to_string(static_cast<unsigned>(mode)) + ")");
    }
    names.push_back(name);
    if (mode == GIT_FILEMODE_TREE) subtrees.emplace_back(name, *git_tree_entry_id(e));
  }
  check_unique_names(names, path, what);
  for (const auto& [name, subtree] : subtrees) {
    check_tree(repo, subtree, join(path, name), depth + 1, what, checked);
  }
}

}  // namespace

bool names_git_directory(std::string_view name) {
  // Every capture asks this of every name: most are answered by their first byte.
  if (name.size() < 4) return false;
  unsigned char first = static_cast<unsigned char>(name[0]);
  if (first != '.' && first != 'g' && first != 'G' && first != 0xE2 && first != 0xEF) {
    return false;
  }
  return hfs_folded(name) == ".git" || ntfs_folded(name) == ".git" || ntfs_folded(name) == "git~1";
}

const char* unsafe_entry_name(std::string_view name) {
  if (name.empty()) return "an empty name";
  if (name == "." || name == "..") return "a name that leaves its directory";
  if (name.find('/') != std::string_view::npos) return "a name holding '/'";
  if (name.find('\0') != std::string_view::npos) return "a name holding a NUL byte";
  if (names_git_directory(name)) return "a git directory, which shadowbox never captures";
  return nullptr;
}

void check_entry_name(std::string_view name, const std::string& path, const std::string& what) {
  if (const char* why = unsafe_entry_name(name)) {
    throw Error(ErrorCode::kPathEscape, what + " holds an entry shadowbox never writes: " +
                                            quote_path(join(path, name)) + " (" + why + ")");
  }
}

void check_unique_names(std::vector<std::string_view>& names, const std::string& path,
                        const std::string& what) {
  std::sort(names.begin(), names.end());
  if (auto twice = std::adjacent_find(names.begin(), names.end()); twice != names.end()) {
    throw Error(ErrorCode::kCorrupt,
                what + " holds " + quote_path(join(path, *twice)) + " twice in one directory");
  }
}

void check_tree_depth(std::size_t depth, const std::string& path, const std::string& what) {
  if (depth > kMaxTreeDepth) {
    throw Error(ErrorCode::kCorrupt, what + " nests directories more than " +
                                         std::to_string(kMaxTreeDepth) + " deep at " +
                                         quote_input(path, 120));
  }
}

void check_tree_names(const ShadowRepo::Impl& repo, const git_oid& tree, const std::string& what,
                      OidSet& checked) {
  check_tree(repo, tree, "", 0, what, checked);
}

std::string join(const std::string& dir, std::string_view name) {
  std::string path = dir;
  if (!path.empty()) path += '/';
  path += name;
  return path;
}

}  // namespace fsnap
