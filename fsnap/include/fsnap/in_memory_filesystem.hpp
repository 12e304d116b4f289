// InMemoryFilesystem — a Filesystem held in memory, with O(1) snapshots.
//
// The tree is persistent: directories are immutable nodes shared between versions,
// and a write copies only the directories on the path to the changed entry. A
// snapshot keeps a reference to the current root, so taking one never copies a file,
// and restoring one swaps the root back. Snapshot ids are content hashes: two
// snapshots of identical trees have the same id.
//
// Thread-safety: const methods may run concurrently with each other; mutations,
// snapshot and restore need external synchronisation.
#pragma once

#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "fsnap/clock.hpp"
#include "fsnap/filesystem.hpp"
#include "fsnap/snapshot.hpp"

namespace fsnap {

// A filesystem in memory whose snapshots share structure with the live state.
class InMemoryFilesystem : public Filesystem, public Snapshotable<FilesystemSnapshot> {
 public:
  // Snapshot times come from clock (the system clock if not given).
  explicit InMemoryFilesystem(std::shared_ptr<const Clock> clock = nullptr);
  ~InMemoryFilesystem() override;

  std::string read(std::string_view path) const override;
  void write(std::string_view path, std::string_view data) override;
  void remove(std::string_view path) override;
  std::vector<DirEntry> list(std::string_view path) const override;
  EntryStat stat(std::string_view path) const override;
  void mkdir(std::string_view path) override;
  bool exists(std::string_view path) const override;
  void symlink(std::string_view path, std::string_view target) override;
  std::string readlink(std::string_view path) const override;
  void set_executable(std::string_view path, bool executable) override;

  // O(1): references the current tree. The id is a hash of the tree's content.
  FilesystemSnapshot snapshot(std::string_view tag) override;
  // O(1): makes the snapshot's tree current. A snapshot of another kind of
  // filesystem is kInvalidArgument.
  void restore(const FilesystemSnapshot& snapshot) override;

  struct Node;

 private:
  std::shared_ptr<const Node> root_;
  std::shared_ptr<const Clock> clock_;
};

}  // namespace fsnap
