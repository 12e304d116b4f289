// Applying a list of TreeChanges to the workspace on disk. Private to fsnap.
//
// Every path is reached component by component from the workspace's root directory
// with O_NOFOLLOW, so a restore never writes through a symlink. Files are written to
// a temporary name (restore_temp_names.hpp) and renamed into place, so each file is
// either old or new, never half-written.
#pragma once

#include <set>
#include <string>
#include <vector>

#include "fsnap/ignore_rules.hpp"
#include "fsnap/tree_change.hpp"
#include "large_file_restore.hpp"
#include "shadow_repo_impl.hpp"

namespace fsnap {

// Paths a restore must not touch: what the current capture left out.
struct Untouchable {
  std::set<std::string> paths;  // skipped or excluded paths that exist now
  IgnoreRules excludes;         // the configured excludes (for paths that do not exist yet)

  // True if path, or a directory above it, must not be touched.
  bool covers(const std::string& path, bool is_dir) const;
};

// Drops the changes that would touch an untouchable path, adding their top paths to
// kept, and those to a name reserved for restore's temporary files (restore_temp_names.hpp;
// an older checkpoint may hold a leftover), which are never written back.
std::vector<TreeChange> without_untouchable(const std::vector<TreeChange>& changes,
                                            const Untouchable& untouchable,
                                            std::vector<std::string>& kept);

// The files over the size limit a restore removes and puts back (large_file_restore.hpp),
// where their copies are, and where one that cannot go where it belongs is named.
struct LargeFileWork {
  const LargeFilePlan& plan;
  const LargeFileCopies& copies;
  std::vector<UnrestoredPath>& unrestored;
};

// Makes the workspace at root match the changes' "after" sides, and carries out large:
// its files removed before anything else, put back after everything else (their
// directories are there then). Directories that cannot be removed because uncaptured
// entries are inside are left, and reported in kept (with everything that would have
// gone where they are); a file of large that cannot be put back because such a
// directory is where it belongs, or its copy changed meanwhile, goes to
// large.unrestored. Throws on I/O errors.
void apply_changes(const std::string& root, const ShadowRepo::Impl& repo,
                   const std::vector<TreeChange>& changes, const LargeFileWork& large,
                   std::vector<std::string>& kept);

}  // namespace fsnap
