// FilesystemSnapshot and the Snapshotable protocol.
//
// A FilesystemSnapshot is an immutable value naming one captured state of a
// filesystem. For a HostFilesystem it names a checkpoint commit in the shadow
// repository; for an InMemoryFilesystem it holds the frozen tree it shares with the
// live filesystem. Snapshots are cheap to copy. Thread-safety: immutable values.
#pragma once

#include <chrono>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace fsnap {

// The copy a store keeps of a file over the size limit (large_file_copies.hpp): no tree
// holds such a file, so a restore puts it back from this copy — a reflink, a hard link
// or a plain copy, the cheapest the filesystems allow.
struct LargeFileCopy {
  std::string name;           // its name in the store (40 hex digits)
  std::int64_t mtime_ns = 0;  // the file's mtime when copied: a copy that has another one,
                              // or another size, was written in place since (a hard link)

  friend bool operator==(const LargeFileCopy&, const LargeFileCopy&) = default;
};

// A path a snapshot did not capture, and why (over the size limit, unsupported type…).
struct SkippedPath {
  std::string path;
  std::string reason;
  std::uint64_t size = 0;
  // A file over the size limit, in a host workspace: the copy the store keeps of it;
  // nullopt if none could be made (or the checkpoint is older than copies).
  std::optional<LargeFileCopy> copy = std::nullopt;

  friend bool operator==(const SkippedPath&, const SkippedPath&) = default;
};

// A path a restore could not make as it is in the target, and why (a file over the size
// limit whose copy is gone or was written in place since, a socket...).
struct UnrestoredPath {
  std::string path;
  std::string why;

  friend bool operator==(const UnrestoredPath&, const UnrestoredPath&) = default;
};

// SkippedPath::reason of a file over the size limit, and of a path that is no regular
// file, directory or symlink (a socket, a FIFO, a device).
inline constexpr std::string_view kOverMaxFileSize = "over-max-file-size";
inline constexpr std::string_view kUnsupportedType = "unsupported-type";

// The paths of files over the size limit that differ between two captures that skipped
// from and to: there in one only, or another version (another copy; without copies, another
// size). Such files are in no tree, so a diff of trees does not see them.
std::vector<std::string> large_file_changes(const std::vector<SkippedPath>& from,
                                            const std::vector<SkippedPath>& to);

// One captured state of a filesystem.
struct FilesystemSnapshot {
  std::string id;      // checkpoint id (host) or content id (in memory)
  std::string commit;  // the shadow commit (host); empty for an in-memory snapshot
  std::string tree;    // git tree id of the content: equal trees, equal files
  std::string tag;     // a host checkpoint's tag (a git ref name; CheckpointMeta::tag)
  std::string label;   // free text it was taken with (CheckpointMeta::label)
  std::chrono::system_clock::time_point created_at;
  std::vector<SkippedPath> skipped;
  // In-memory snapshots: the frozen tree shared with the live filesystem. Opaque.
  std::shared_ptr<const void> state;
};

// Anything whose state can be captured and put back: filesystems, and in the sandbox
// library sessions and budgets.
template <typename SnapshotT>
class Snapshotable {
 public:
  virtual ~Snapshotable() = default;
  // Captures the current state, labelled with free text (any bytes; labels may repeat).
  // Never returns an older state: failure throws.
  virtual SnapshotT snapshot(std::string_view label) = 0;
  // Makes the current state exactly the captured one.
  virtual void restore(const SnapshotT& snapshot) = 0;
};

}  // namespace fsnap
