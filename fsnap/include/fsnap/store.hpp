// Store — the directory, outside the workspace, where shadowbox keeps one workspace's
// history: the bare shadow repository, the stat cache, the writer lock and the run
// directories. store_layout.hpp names every file and ref in it.
//
// Thread-safety: a Store is an immutable description. StoreLock is re-entrant within a
// thread and exclusive between threads and processes.
#pragma once

#include <memory>

#include <boost/filesystem/path.hpp>

#include "fsnap/store_layout.hpp"

namespace fsnap {

// Exclusive hold on a store's writer lock; released on destruction. Other processes and
// other threads of this one block until it is released. The thread holding it may take
// it again (a step that takes the lock can call operations that take it too); the lock
// is released when the outermost hold ends. Must be released by the thread that took it.
class StoreLock {
 public:
  explicit StoreLock(const boost::filesystem::path& lock_file);
  ~StoreLock();
  StoreLock(StoreLock&& other) noexcept;
  StoreLock& operator=(StoreLock&&) = delete;
  StoreLock(const StoreLock&) = delete;
  StoreLock& operator=(const StoreLock&) = delete;

  struct Shared;

 private:
  std::shared_ptr<Shared> shared_;  // null once moved from
};

// The store of one workspace.
class Store {
 public:
  // Where the store of workspace lives by default: $SHADOWBOX_STORE if set, else
  // $XDG_DATA_HOME/shadowbox/<name>-<hash> (XDG_DATA_HOME defaults to
  // ~/.local/share), the key derived from the workspace's real path.
  static boost::filesystem::path default_location(const boost::filesystem::path& workspace);

  // Opens the store at dir for workspace. With create, makes the directory and its
  // shadow repository if missing; without, a missing store is kNotFound. A store that
  // belongs to another workspace is kInvalidArgument. The workspace must exist. The
  // store's directory is private (0700, whatever the umask): it holds copies of every
  // file of the workspace, ignored .env files included. One found with wider modes is
  // tightened (tightened() says so).
  static Store open(const boost::filesystem::path& dir, const boost::filesystem::path& workspace,
                    bool create);

  // Whether dir is an existing store of workspace: outside it, its shadow repository
  // there, and its workspace file naming workspace's real path. Reads only (open may
  // tighten modes): for a store named by someone else, such as a project's settings.
  static bool is_store_of(const boost::filesystem::path& dir,
                          const boost::filesystem::path& workspace);

  const boost::filesystem::path& dir() const { return dir_; }
  // The workspace's real (canonical) path.
  const boost::filesystem::path& workspace() const { return workspace_; }
  boost::filesystem::path repo_dir() const { return layout::repo_dir(dir_); }
  boost::filesystem::path stat_cache_file() const { return layout::stat_cache_file(dir_); }
  boost::filesystem::path lock_file() const { return layout::lock_file(dir_); }

  // Takes the writer lock (blocking).
  StoreLock lock() const { return StoreLock(lock_file()); }

  // Whether open found this existing store readable by others and made it private.
  bool tightened() const { return tightened_; }

 private:
  Store(boost::filesystem::path dir, boost::filesystem::path workspace)
      : dir_(std::move(dir)), workspace_(std::move(workspace)) {}
  boost::filesystem::path dir_;
  boost::filesystem::path workspace_;
  bool tightened_ = false;
};

}  // namespace fsnap
