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
  FilesystemSnapshot snapshot(std::string_view label) override;
  // O(1): makes the snapshot's tree current. A snapshot of another kind of
  // filesystem is kInvalidArgument.
  void restore(const FilesystemSnapshot& snapshot) override;

  // One entry of an in-memory snapshot's tree: what a snapshot written out (as JSON)
  // must hold to be restored when read back.
  struct FrozenEntry {
    std::string path;  // relative, '/'-separated
    EntryType type = EntryType::kFile;
    bool executable = false;
    std::string data;  // a file's content or a symlink's target
    friend bool operator==(const FrozenEntry&, const FrozenEntry&) = default;
  };
  // The entries of a snapshot taken of an in-memory filesystem, each directory before
  // what it holds, in name order. A snapshot of another kind is kInvalidArgument.
  static std::vector<FrozenEntry> entries_of(const FilesystemSnapshot& snapshot);
  // snapshot, holding the tree entries make (as entries_of lists them), so restore()
  // takes it. kInvalidArgument, naming the entry, if they make no tree, or not the one
  // snapshot.id names.
  static FilesystemSnapshot with_entries(FilesystemSnapshot snapshot,
                                         const std::vector<FrozenEntry>& entries);

  struct Node;

 private:
  std::shared_ptr<const Node> root_;
  std::shared_ptr<const Clock> clock_;
};

}  // namespace fsnap
