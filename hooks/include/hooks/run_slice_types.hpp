// Every slice type an agent run's session holds, registered in one call: the core's
// built-in ones (sandbox/builtin_slices.hpp), the run's status and lifecycle
// (runs/run_lifecycle.hpp), AgentSession (hooks/agent_session_state.hpp) and
// AgentSpend (hooks/agent_spend.hpp). Every process that writes or reads agent runs
// calls it first, so a ledger session of any run decodes.
//
// Thread-safety: idempotent and thread-safe.
#pragma once

namespace hooks {

// Registers the slice types above in sandbox::SliceTypes.
void register_agent_run_slice_types();

}  // namespace hooks
