// Every slice type an agent run's session holds, registered in one call: the core's
// built-in ones (sandbox/builtin_slices.hpp), the run's status and lifecycle
// (runs/run_lifecycle.hpp), AgentSession (hooks/agent_session_state.hpp) and
// AgentSpend (hooks/agent_spend.hpp). Every program that writes or reads agent runs
// calls it once, at its start (the shadowbox executable: `run` in cli/main.cpp, which
// every command and hook goes through), so a ledger session of any run decodes. The
// library's functions do not register types on their own: a program that skips the
// call gets an error naming the slice type ("has no registered JSON codec", "which this
// process has not registered") when it writes or reads such a session, never a session
// written or read without its slices.
//
// Thread-safety: idempotent and thread-safe.
#pragma once

namespace hooks {

// Registers the slice types above in sandbox::SliceTypes.
void register_agent_run_slice_types();

}  // namespace hooks
