// Deferring termination: a process that records a step (`shadowbox hook`) finishes it
// when its agent is being stopped, instead of dying half way through.
#pragma once

namespace cli {

// Blocks SIGTERM, SIGINT and SIGHUP for the rest of this process's life: they stay
// pending and are discarded at its exit; SIGKILL still ends it. Call it before any
// thread starts (threads inherit the mask). Error kIo if the mask cannot be set.
void defer_termination();

}  // namespace cli
