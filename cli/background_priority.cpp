#include "background_priority.hpp"

#include <sys/resource.h>
#include <sys/syscall.h>
#include <unistd.h>

namespace cli {

namespace {

// linux/ioprio.h, which glibc does not wrap.
constexpr int kIoprioWhoProcess = 1;
constexpr int kIoprioClassBestEffort = 2;
constexpr int kIoprioClassShift = 13;
constexpr int kIoprioLowestLevel = 7;

}  // namespace

void use_background_priority() {
  (void)::setpriority(PRIO_PROCESS, 0, 19);
  (void)::syscall(SYS_ioprio_set, kIoprioWhoProcess, 0,
                  (kIoprioClassBestEffort << kIoprioClassShift) | kIoprioLowestLevel);
}

}  // namespace cli
