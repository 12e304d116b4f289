// CaptureOptions — what a workspace capture includes, and how it reports progress.
//
// Plain struct with documented defaults (config/shadowbox.yaml maps onto it).
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

namespace fsnap {

// Counters a long capture reports through CaptureOptions::on_progress.
struct CaptureProgress {
  std::uint64_t entries_seen = 0;  // files, symlinks and directories examined so far
  // Files whose content was read and stored (stat cache misses; a file the checkout's
  // index vouches for is read only to confirm the index, and not counted).
  std::uint64_t files_hashed = 0;
  std::uint64_t bytes_hashed = 0;
  bool done = false;  // true on the last call of a capture
};

// Default size limit: files larger than this are skipped (and reported as skipped).
inline constexpr std::uint64_t kDefaultMaxFileSize = 100ull << 20;

// What a capture takes and leaves out. `.git` directories (and `.git` files of
// worktrees and submodules), at any depth, are never captured.
struct CaptureOptions {
  // gitignore-style patterns, relative to the workspace root ("build/", "*.log",
  // "/secrets/**", "!keep.log"). Matched paths are neither captured nor touched by
  // restore.
  std::vector<std::string> excludes;
  // Files larger than this many bytes are skipped and reported; 0 means no limit.
  std::uint64_t max_file_size = kDefaultMaxFileSize;
  // When true, the workspace's .gitignore files exclude too. Off by default so an
  // ignored `.env` still comes back after a rollback.
  bool respect_gitignore = false;
  // When the workspace is a git checkout, a capture without a stat cache (the first)
  // takes the blob id of each file whose stat matches the checkout's index from the
  // index — once it has hashed the file and found that id: the index is the
  // workspace's, which anyone who writes the workspace can forge. Such a blob, when
  // the repository's packs hold it whole, is written into the store's own pack as the
  // bytes git compressed, once they decompress to the file's content (the packs are
  // the workspace's too), and is not compressed again; nothing of the repository is
  // linked or copied into the store. Files that differ from the index, untracked and
  // ignored files are read and stored as always.
  bool use_git_index = true;
  // Called every 200 ms during a capture, from a reporting thread, and once at the
  // end (with done = true) from the capturing thread. Must not throw.
  std::function<void(const CaptureProgress&)> on_progress;
};

}  // namespace fsnap
