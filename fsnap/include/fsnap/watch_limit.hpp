// WatchLimit — how many inotify watches a watched workspace may hold, and where the
// system's own limit is read from to say what to raise it to when it is too low.
//
// A workspace with more directories than the per-user limit
// (fs.inotify.max_user_watches) leaves allows is still captured exactly: the watch
// gives its watches back and every capture looks at the whole tree, as an unwatched
// one does (HostFilesystem::watch).
#pragma once

#include <cstddef>
#include <string>

namespace fsnap {

struct WatchLimit {
  // Watches added at most (0: as many as the kernel grants). Past it, adding one fails
  // as the kernel fails it at its limit (ENOSPC): for tests, which change no sysctl.
  std::size_t max_watches = 0;
  // The file that holds the kernel's per-user limit.
  std::string limit_file = "/proc/sys/fs/inotify/max_user_watches";
};

}  // namespace fsnap
