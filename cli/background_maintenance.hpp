// Maintenance for the short-lived commands: when a command leaves the store with
// enough loose objects, it starts `shadowbox maintenance --auto` detached (its own
// session, no terminal, output to the run-independent store log) and returns at once:
// no command waits for packing.
#pragma once

#include "context.hpp"

namespace cli {

// Starts a detached maintenance of the store if the config allows it and it is due —
// or, once the agent's session has ended, if anything at all is left loose (the next
// session may be days away; until then each loose object takes a block of its own) or
// retention limits are set (that maintenance applies them).
// Never throws: maintenance is an optimisation.
void maintain_in_background(const Context& context, bool session_ended = false);

}  // namespace cli
