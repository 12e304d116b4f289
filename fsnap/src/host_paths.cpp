#include "host_paths.hpp"

#include <limits.h>
#include <stdlib.h>
#include <sys/stat.h>

#include <cerrno>
#include <memory>
#include <vector>

#include "fsnap/error.hpp"

namespace fsnap {

namespace {

bool inside(const std::string& path, const std::string& root) {
  return path == root || (path.size() > root.size() && path.compare(0, root.size(), root) == 0 &&
                          (root == "/" || path[root.size()] == '/'));
}

// realpath(3) of path, or "" when it does not exist.
std::string real_path(const std::string& path) {
  std::unique_ptr<char, decltype(&::free)> resolved(::realpath(path.c_str(), nullptr), &::free);
  return resolved ? std::string(resolved.get()) : std::string();
}

[[noreturn]] void escape(const std::string& rel, const std::string& how) {
  throw Error(ErrorCode::kPathEscape, "path escapes the workspace: " + rel + " (" + how + ")");
}

}  // namespace

std::string normalize_relative(std::string_view path) {
  if (path.find('\0') != std::string_view::npos) {
    throw Error(ErrorCode::kInvalidArgument, "path contains a NUL byte");
  }
  if (!path.empty() && path.front() == '/') {
    throw Error(ErrorCode::kPathEscape,
                "absolute paths are not allowed (give a path relative to the workspace): " +
                    std::string(path));
  }
  std::vector<std::string_view> parts;
  std::size_t start = 0;
  while (start <= path.size()) {
    std::size_t end = path.find('/', start);
    if (end == std::string_view::npos) end = path.size();
    std::string_view part = path.substr(start, end - start);
    if (part == "..") {
      if (parts.empty()) {
        throw Error(ErrorCode::kPathEscape,
                    "path escapes the workspace: " + std::string(path) + " ('..' above the root)");
      }
      parts.pop_back();
    } else if (!part.empty() && part != ".") {
      parts.push_back(part);
    }
    start = end + 1;
  }
  std::string out;
  for (std::string_view p : parts) {
    if (!out.empty()) out += '/';
    out += p;
  }
  return out;
}

std::string confined_path(const std::string& root, const std::string& rel, bool follow_last) {
  if (rel.empty()) return root;
  // Check every existing prefix: a symlink among the parents must stay inside.
  std::size_t last_slash = rel.rfind('/');
  std::string parent_rel = last_slash == std::string::npos ? "" : rel.substr(0, last_slash);
  std::string deepest = root;
  std::size_t pos = 0;
  while (!parent_rel.empty() && pos <= parent_rel.size()) {
    std::size_t end = parent_rel.find('/', pos);
    if (end == std::string::npos) end = parent_rel.size();
    std::string candidate = root + "/" + parent_rel.substr(0, end);
    struct stat st;
    if (::lstat(candidate.c_str(), &st) != 0) break;  // the rest does not exist yet
    std::string real = real_path(candidate);
    if (real.empty()) escape(rel, "a symlink along the path does not resolve");
    if (!inside(real, root)) escape(rel, "a symlink along the path leads outside");
    deepest = real;
    pos = end + 1;
  }
  std::string full = root + "/" + rel;
  if (follow_last) {
    struct stat st;
    if (::lstat(full.c_str(), &st) == 0 && S_ISLNK(st.st_mode)) {
      std::string real = real_path(full);
      if (real.empty()) escape(rel, "it is a symlink that does not resolve");
      if (!inside(real, root)) escape(rel, "it is a symlink that leads outside");
      return real;
    }
  }
  return full;
}

}  // namespace fsnap
