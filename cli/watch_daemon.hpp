// The CLI's side of the watch daemon (fsnap/watch_daemon.hpp): the client every
// command that captures hands its HostFilesystem, and how a daemon is started —
// `shadowbox daemon serve`, detached, in a session of its own, its output appended to
// the store's watch.log.
#pragma once

#include <chrono>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include <boost/filesystem/path.hpp>

#include "fsnap/watch_daemon.hpp"

namespace cli {

// The daemon's version: the program's, and which build of it (a daemon from an
// earlier build of the same version is replaced too).
std::string daemon_version();
// How a daemon for a store is started: the store's folder, and this program's command
// line for it (Context::self_command: the workspace, store and configuration it was
// given), to which `daemon serve` is added.
struct DaemonLaunch {
  boost::filesystem::path store_dir;
  std::vector<std::string> self_command;
};

// A client for store; it starts a daemon as launch says when none answers (without
// launch, it scans when none answers).
std::shared_ptr<fsnap::WatchDaemonClient> watch_client(const fsnap::Store& store,
                                                       std::optional<DaemonLaunch> launch);
// At most this many daemons are started for a store within this window: a daemon that
// keeps dying at its start is not started by every command.
inline constexpr std::size_t kDaemonStartsPerWindow = 3;
inline constexpr std::chrono::seconds kDaemonStartWindow{60};

// Whether a daemon may be started for the store at store_dir now; if so, the start is
// counted (<store>/watch.spawns).
bool daemon_start_allowed(const boost::filesystem::path& store_dir);
// Starts `shadowbox daemon serve` for launch's store, detached, unless
// daemon_start_allowed says no; never throws.
void start_daemon_detached(const DaemonLaunch& launch);

}  // namespace cli
