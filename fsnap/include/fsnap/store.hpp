// Store — the directory, outside the workspace, where shadowbox keeps one workspace's
// history: the bare shadow repository, the stat cache, the writer lock and the run
// directories.
//
//   <store>/repo.git      bare shadow repository (what `shadowbox path` prints)
//   <store>/workspace     the real path of the workspace this store belongs to
//   <store>/stat-cache    stat data and object ids of the last capture
//   <store>/lock          flock(2) target serialising writers
//
// Thread-safety: a Store is an immutable description; StoreLock is per holder.
#pragma once

#include <boost/filesystem/path.hpp>

namespace fsnap {

// Exclusive hold on a store's writer lock; released on destruction. Other processes
// (and other StoreLock objects in this process) block until it is released.
class StoreLock {
 public:
  explicit StoreLock(const boost::filesystem::path& lock_file);
  ~StoreLock();
  StoreLock(StoreLock&& other) noexcept;
  StoreLock& operator=(StoreLock&&) = delete;
  StoreLock(const StoreLock&) = delete;
  StoreLock& operator=(const StoreLock&) = delete;

 private:
  int fd_ = -1;
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
  // belongs to another workspace is kInvalidArgument. The workspace must exist.
  static Store open(const boost::filesystem::path& dir, const boost::filesystem::path& workspace,
                    bool create);

  const boost::filesystem::path& dir() const { return dir_; }
  // The workspace's real (canonical) path.
  const boost::filesystem::path& workspace() const { return workspace_; }
  boost::filesystem::path repo_dir() const { return dir_ / "repo.git"; }
  boost::filesystem::path stat_cache_file() const { return dir_ / "stat-cache"; }
  boost::filesystem::path lock_file() const { return dir_ / "lock"; }

  // Takes the writer lock (blocking).
  StoreLock lock() const { return StoreLock(lock_file()); }

 private:
  Store(boost::filesystem::path dir, boost::filesystem::path workspace)
      : dir_(std::move(dir)), workspace_(std::move(workspace)) {}
  boost::filesystem::path dir_;
  boost::filesystem::path workspace_;
};

}  // namespace fsnap
