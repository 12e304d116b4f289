// WorkspaceWatcher — which directories of a workspace changed, learned from inotify
// instead of walking the tree (like git's fsmonitor). Private to fsnap.
//
// Every directory under the root (except `.git` ones and those the config excludes)
// carries an inotify watch, added through a descriptor opened from the root without
// following symlinks (never through a path, which a symlink could redirect). An event
// on a directory's entries marks that directory changed; a directory created or moved
// in marks its whole subtree new (and is watched from then on); a queue overflow, a
// failed watch or the root itself moving marks everything changed. When the kernel's
// limit on watches (or WatchLimit::max_watches) is reached, it gives every watch back
// and reports everything changed from then on — captures scan, as unwatched ones do —
// and says, once (limit_message), what to raise the limit to. The kernel queues
// events while the writing system call runs, so everything written before
// take_changes() is in its answer.
//
// Not seen, as with any inotify watcher: writes through a shared mmap, writes through
// a hard link from outside the workspace, and mounts inside it.
//
// Thread-safety: one thread at a time.
#pragma once

#include <cstdint>
#include <map>
#include <set>
#include <string>
#include <unordered_map>

#include "fsnap/ignore_rules.hpp"
#include "fsnap/posix.hpp"
#include "fsnap/watch_limit.hpp"

namespace fsnap {

// What changed since the last look (paths relative to the root, "" is the root).
struct ChangedDirs {
  bool everything = false;         // walk the whole tree
  std::set<std::string> dirs;      // the entries of these directories changed
  std::set<std::string> subtrees;  // these directories are new: walk all below them

  // Adds other's changes to these.
  void merge(const ChangedDirs& other);
  bool empty() const { return !everything && dirs.empty() && subtrees.empty(); }
};

// An inotify watch over a workspace's directories.
class WorkspaceWatcher {
 public:
  // Starts watching root. The first take_changes() reports everything. Throws kIo if
  // inotify is unavailable or the root cannot be watched; past the watch limit it
  // scans instead (see above).
  WorkspaceWatcher(std::string root, IgnoreRules excludes, WatchLimit limit = {});
  ~WorkspaceWatcher();
  WorkspaceWatcher(const WorkspaceWatcher&) = delete;
  WorkspaceWatcher& operator=(const WorkspaceWatcher&) = delete;

  // Reads the events queued so far and returns what they changed since the last call.
  ChangedDirs take_changes();
  // Number of directories watched.
  std::size_t watched() const { return dirs_.size(); }
  // Whether the watch limit was reached: every answer is "everything".
  bool scanning() const { return scanning_; }
  // Once the limit was reached: what happened and what to raise, in a sentence.
  const std::string& limit_message() const { return limit_message_; }

 private:
  // Watches dir and every directory below it, reached from the root without following
  // symlinks; false if a watch could not be added.
  bool watch_tree(const std::string& dir);
  // The same for dir open as fd, depth levels below the directory watch_tree started at.
  bool watch_tree(const std::string& dir, UniqueFd fd, std::size_t depth);
  // Forgets the watches of dir and everything below it.
  void forget_tree(const std::string& dir);
  // Drops every watch and watches the whole tree again (after an overflow).
  void rewatch_all();
  // Adds a watch on the directory open as fd; -1 with errno set if it cannot (ENOSPC
  // past the limit).
  int add_watch(int fd);
  // Gives every watch back and scans from now on, the limit having been reached after
  // `added` watches; counts the directories and sets limit_message_.
  void give_up(std::size_t added);
  // Directories under the root that a watch would cover (the walk, without watching).
  std::size_t count_directories();
  void handle(int wd, std::uint32_t mask, const std::string& name);

  std::string root_;
  IgnoreRules excludes_;
  UniqueFd inotify_;
  WatchLimit limit_;
  bool broken_ = false;      // a watch could not be added: every answer is "everything"
  bool scanning_ = false;    // past the watch limit: no watches, every answer "everything"
  bool counting_ = false;    // in count_directories(): walking without watching
  std::size_t counted_ = 0;  // directories it walked
  std::string limit_message_;
  // Directory -> watch descriptor, and each descriptor's entry there (so that a daemon
  // holds every watched directory's path once). Each maps to the other.
  using Watched = std::map<std::string, int>;
  Watched wds_;
  std::unordered_map<int, Watched::iterator> dirs_;
  ChangedDirs pending_;
};

}  // namespace fsnap
