// TreeEditor — a git tree changed path by path and written back as a new tree, reading
// and rewriting only the directories on the paths it changes (a branch export builds
// each commit so from the one before). Private to fsnap.
//
// Thread-safety: one thread at a time.
#pragma once

#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "git_handles.hpp"

namespace fsnap {

class TreeEditor {
 public:
  // Edits the tree base of repo (nullopt: an empty tree).
  TreeEditor(git_repository* repo, std::optional<git_oid> base);
  ~TreeEditor();
  TreeEditor(const TreeEditor&) = delete;
  TreeEditor& operator=(const TreeEditor&) = delete;

  // Puts the object id with mode at path ("a/b/c"), making the directories above it and
  // replacing whatever is in the way of one.
  void set(const std::string& path, const git_oid& id, git_filemode_t mode);
  // Removes what is at path (nothing if there is nothing); directories left empty go.
  void remove(const std::string& path);
  // Writes the directories changed since the last write and returns the root tree.
  git_oid write();

 private:
  struct Node;
  struct Entry {
    git_oid id{};
    git_filemode_t mode = GIT_FILEMODE_BLOB;
    std::unique_ptr<Node> child;  // a directory read or changed
  };
  struct Node {
    std::optional<git_oid> original;  // the tree it was read from, while unchanged
    bool loaded = false;
    std::map<std::string, Entry> entries;
  };
  void load(Node& node);
  // The directory at components[0, count), made (or replacing what is in the way) when
  // make; nullptr when it is not there and !make. Every directory on the way is marked
  // changed.
  Node* directory(const std::vector<std::string>& components, std::size_t count, bool make);
  git_oid write(Node& node);

  git_repository* repo_;
  Node root_;
};

}  // namespace fsnap
