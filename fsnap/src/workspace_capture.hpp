// WorkspaceCapture — writes the whole workspace into the shadow repository as a tree,
// reading only files the stat cache cannot vouch for. Private to fsnap.
#pragma once

#include <git2/oid.h>

#include <set>
#include <string>
#include <unordered_set>
#include <vector>

#include "fsnap/capture_options.hpp"
#include "fsnap/ignore_rules.hpp"
#include "fsnap/shadow_repo.hpp"
#include "fsnap/snapshot.hpp"
#include "large_file_copies.hpp"
#include "stat_cache.hpp"
#include "workspace_watcher.hpp"

namespace fsnap {

// The outcome of one capture.
struct CaptureResult {
  git_oid tree{};
  std::vector<SkippedPath> skipped;     // present but not captured (size, type)
  std::vector<std::string> uncaptured;  // excluded paths that exist (not descended into)
  CaptureProgress progress;
  StatCache cache;             // the new stat cache
  bool cache_changed = false;  // whether cache differs from the one loaded
};

// Which directories a capture reads again when a watcher says what changed; every
// other directory is taken as the stat cache recorded it.
class CaptureScope {
 public:
  // A scope covering changes, which happened since the capture that produced the
  // stat cache; skipped and uncaptured are what that capture reported.
  CaptureScope(const ChangedDirs& changes, std::vector<SkippedPath> skipped,
               std::vector<std::string> uncaptured);
  // True if dir must be read again: it changed, holds a change below it, or is new.
  bool must_walk(const std::string& dir) const;
  // True if dir's own entries must be listed again: they changed, or dir is new. A
  // directory walked only for a change below it is taken from the stat cache.
  bool must_read(const std::string& dir) const;
  // What the previous capture reported.
  const std::vector<SkippedPath>& skipped() const { return skipped_; }
  const std::vector<std::string>& uncaptured() const { return uncaptured_; }

 private:
  // Whether dir is one of the new directories or below one.
  bool in_new_subtree(const std::string& dir) const;

  bool everything_;
  std::unordered_set<std::string> walk_;  // changed directories and their ancestors
  std::unordered_set<std::string> read_;  // changed directories
  std::set<std::string> subtrees_;        // new directories: everything below is walked
  std::vector<SkippedPath> skipped_;
  std::vector<std::string> uncaptured_;
};

// Captures the workspace at root (a real directory path) into repo. previous is the
// stat cache of the last capture; with a scope, only the directories it names are
// read and the rest of the tree comes from previous (which must then describe the
// whole workspace as it was at that capture). now_ns is the time the capture starts
// (ns since the epoch, from the injected clock): entries modified within the racy
// margin before it are recorded so that the next capture reads them again.
// With copies (a HostFilesystem's capture, not a directory's kept beside it: the
// workspace's store), a capture with no stat cache to go by (the first) writes its new
// objects into one pack instead of loose files, and takes ids from the user's git index
// when root is a checkout (options.use_git_index); every file over the size limit gets
// its copy there (SkippedPath::copy). It also leaves out the names reserved for restore's
// temporary files (restore_temp_names.hpp) and removes those a killed restore left
// behind: the caller holds the store lock.
// Throws kIo for an unreadable entry (naming it) — never returns a partial tree.
CaptureResult capture_workspace(const std::string& root, ShadowRepo::Impl& repo,
                                const CaptureOptions& options, StatCache previous,
                                std::int64_t now_ns, const CaptureScope* scope = nullptr,
                                const LargeFileCopies* copies = nullptr);

// The exclude rules of options (config excludes only; .gitignore files are read
// during a capture when options.respect_gitignore is set).
IgnoreRules exclude_rules(const CaptureOptions& options);

}  // namespace fsnap
