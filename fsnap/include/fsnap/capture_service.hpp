// CaptureService — another process that captures the workspace for a HostFilesystem,
// so that a short-lived command does not walk the tree itself (the watch daemon,
// watch_daemon.hpp). A HostFilesystem given one asks it first and scans on its own
// whenever it has no answer; both give the same tree.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "fsnap/capture_options.hpp"
#include "fsnap/snapshot.hpp"

namespace fsnap {

// A capture written into the store but not recorded as a checkpoint.
struct CaptureReport {
  std::string tree;                     // hex id of the workspace's tree
  std::vector<SkippedPath> skipped;     // present but not captured (size, type)
  std::vector<std::string> uncaptured;  // excluded paths that exist
  CaptureProgress progress;             // what the capture looked at
};

// Captures on behalf of a HostFilesystem.
class CaptureService {
 public:
  virtual ~CaptureService() = default;
  // Captures the workspace with options into the store and returns what it wrote, or
  // nullopt if it cannot answer now (the caller then scans). Called while the caller
  // holds the store lock, so the service must not take it. Must never answer with a
  // capture older than the call; must not throw. options.on_progress, if set, is called
  // as a scan would call it.
  virtual std::optional<CaptureReport> capture(const CaptureOptions& options) = 0;
};

}  // namespace fsnap
