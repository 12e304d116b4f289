// Maintenance for the commands: when a command leaves the store with enough loose
// objects, it starts `shadowbox maintenance --auto` detached (its own session, no
// terminal) and returns at once: no command waits for packing. `shadowbox run` asks
// the same while its agent runs, and once it has ended (AgentRunSpec::maintain_detached).
#pragma once

#include <sys/types.h>

#include "context.hpp"

namespace cli {

// Starts a detached maintenance of the store if the config allows it and it is due —
// or, once the agent's session has ended, if anything at all is left loose (the next
// session may be days away; until then each loose object takes a block of its own) or
// retention limits are set (that maintenance applies them).
// Returns the pid of the process started, or -1. Never throws: maintenance is an
// optimisation.
pid_t maintain_in_background(const Context& context, bool session_ended = false);

}  // namespace cli
