// Starting a helper that outlives the command: `shadowbox maintenance --auto`, the
// watch daemon.
#pragma once

#include <sys/types.h>

#include <string>
#include <vector>

namespace cli {

// Runs argv (argv[0] a path) detached and returns once it has begun to (exec'd, so it
// holds none of this process's descriptors or locks): a double fork, so nobody
// waits for it and init adopts it (or this process, if it is a subreaper, until it
// ends); a session of its own, so no signal to this command's process group reaches
// it; no blocked signals (a hook process blocks SIGTERM while it records); the user's
// umask (fsnap/user_umask.hpp); stdin from /dev/null; stdout and stderr appended to
// output (0600), or /dev/null if output is empty. Returns the helper's pid, or -1 if
// it could not be started. Never throws: a helper that cannot be started is started
// again by a later command.
pid_t spawn_detached(std::vector<std::string> argv, const std::string& output = "");

}  // namespace cli
