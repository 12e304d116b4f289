// WorkspaceCapture — writes the whole workspace into the shadow repository as a tree,
// reading only files the stat cache cannot vouch for. Private to fsnap.
#pragma once

#include <git2/oid.h>

#include <string>
#include <vector>

#include "fsnap/capture_options.hpp"
#include "fsnap/ignore_rules.hpp"
#include "fsnap/shadow_repo.hpp"
#include "fsnap/snapshot.hpp"
#include "stat_cache.hpp"

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

// Captures the workspace at root (a real directory path) into repo.
// Throws kIo for an unreadable entry (naming it) — never returns a partial tree.
CaptureResult capture_workspace(const std::string& root, ShadowRepo::Impl& repo,
                                const CaptureOptions& options, const StatCache& previous);

// The exclude rules of options (config excludes only; .gitignore files are read
// during a capture when options.respect_gitignore is set).
IgnoreRules exclude_rules(const CaptureOptions& options);

}  // namespace fsnap
