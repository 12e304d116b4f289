// WatchSettings — whether the short-lived commands use the per-store watch daemon
// (watch_daemon.hpp), and how long one waits for requests (config watch.*).
//
// Thread-safety: a plain value.
#pragma once

#include <chrono>

namespace fsnap {

// The watch daemon's settings, with their defaults.
struct WatchSettings {
  bool daemon = true;  // watch.daemon: auto (true: a command starts one when none runs) or off
  // watch.idle_exit: the daemon exits after this long without a request (0: never).
  std::chrono::seconds idle_exit{600};
};

}  // namespace fsnap
