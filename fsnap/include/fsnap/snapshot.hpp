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
#include <string>
#include <string_view>
#include <vector>

namespace fsnap {

// A path a snapshot did not capture, and why (over the size limit, unsupported type…).
struct SkippedPath {
  std::string path;
  std::string reason;
  std::uint64_t size = 0;

  friend bool operator==(const SkippedPath&, const SkippedPath&) = default;
};

// One captured state of a filesystem.
struct FilesystemSnapshot {
  std::string id;      // checkpoint id (host) or content id (in memory)
  std::string commit;  // the shadow commit (host); empty for an in-memory snapshot
  std::string tree;    // git tree id of the content: equal trees, equal files
  std::string tag;
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
  // Captures the current state. Never returns an older state: failure throws.
  virtual SnapshotT snapshot(std::string_view tag) = 0;
  // Makes the current state exactly the captured one.
  virtual void restore(const SnapshotT& snapshot) = 0;
};

}  // namespace fsnap
