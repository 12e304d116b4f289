#include "termination.hpp"

#include <signal.h>

#include <cerrno>

#include "fsnap/error.hpp"
#include "fsnap/posix.hpp"

namespace cli {

void defer_termination() {
  sigset_t set;
  sigemptyset(&set);
  sigaddset(&set, SIGTERM);
  sigaddset(&set, SIGINT);
  sigaddset(&set, SIGHUP);
  if (sigprocmask(SIG_BLOCK, &set, nullptr) != 0) {
    throw fsnap::system_error("cannot block termination signals", errno);
  }
}

}  // namespace cli
