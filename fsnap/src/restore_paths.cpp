#include "restore_paths.hpp"

#include <map>

#include "fsnap/error.hpp"
#include "fsnap/path_quoting.hpp"

namespace fsnap {

void check_named_paths(const std::vector<std::string>& named) {
  for (const std::string& path : named) {
    if (path.empty()) continue;
    bool normal = path.front() != '/' && path.back() != '/';
    for (std::size_t start = 0; normal && start <= path.size();) {
      std::size_t end = std::min(path.find('/', start), path.size());
      std::string_view component = std::string_view(path).substr(start, end - start);
      normal = !component.empty() && component != "." && component != "..";
      start = end + 1;
    }
    if (!normal) {
      throw Error(ErrorCode::kPathEscape, "cannot restore " + quote_path(path) +
                                              ": not a path relative to the workspace root");
    }
  }
}

bool under_named(const std::string& path, const std::vector<std::string>& named) {
  for (const std::string& top : named) {
    if (top.empty() || path == top ||
        (path.size() > top.size() && path.compare(0, top.size(), top) == 0 &&
         path[top.size()] == '/')) {
      return true;
    }
  }
  return false;
}

std::set<std::string> paths_to_restore(const std::vector<std::string>& named,
                                       const std::vector<TreeChange>& changes,
                                       const LargeFilePlan& large) {
  std::map<std::string, const TreeChange*> by_path;
  for (const TreeChange& c : changes) by_path.emplace(c.path, &c);
  std::set<std::string> out;
  for (const std::string& top : named) {
    std::vector<std::string> one{top};
    bool changes_something = false;
    for (const TreeChange& c : changes) {
      if (!under_named(c.path, one)) continue;
      out.insert(c.path);
      changes_something = true;
    }
    for (const TreeChange& c : large.changes) {
      if (!under_named(c.path, one)) continue;
      out.insert(c.path);
      changes_something = true;
    }
    for (const UnrestoredPath& u : large.unrestored) {
      if (under_named(u.path, one)) out.insert(u.path);  // still said, though not put back
    }
    if (!changes_something) continue;
    // The directories above it: made when the target adds them; a file in the way of
    // one is not the named path's to replace.
    for (std::size_t slash = top.find('/'); slash != std::string::npos;
         slash = top.find('/', slash + 1)) {
      auto above = by_path.find(top.substr(0, slash));
      if (above == by_path.end() || !above->second->after ||
          above->second->after->type != EntryType::kDirectory) {
        continue;
      }
      if (above->second->kind == TreeChange::Kind::kAdded) {
        out.insert(above->first);
      } else if (above->second->before && above->second->before->type != EntryType::kDirectory) {
        throw Error(ErrorCode::kConflict,
                    "cannot restore " + quote_path(top) + ": " + quote_path(above->first) +
                        " is not a directory in the workspace; restore " +
                        quote_path(above->first) + " itself (nothing changed)");
      }
    }
  }
  return out;
}

}  // namespace fsnap
