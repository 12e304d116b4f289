#include "termination.hpp"

#include <signal.h>

#include <cerrno>
#include <cstring>

#include "fsnap/error.hpp"

namespace cli {

void defer_termination() {
  sigset_t set;
  sigemptyset(&set);
  sigaddset(&set, SIGTERM);
  sigaddset(&set, SIGINT);
  sigaddset(&set, SIGHUP);
  if (sigprocmask(SIG_BLOCK, &set, nullptr) != 0) {
    throw fsnap::Error(fsnap::ErrorCode::kIo,
                       std::string("cannot block termination signals: ") + std::strerror(errno));
  }
}

}  // namespace cli
