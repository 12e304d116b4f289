// Containment in the runtime: a run's policy::ContainmentState kept in its session (a
// LOG slice, newest item current: no rollback gives back steps, retries or spend, and
// a process that joins the run — the next hook, a resume — continues the count), and the
// JSON of SafetyEvents in ledger records.
//
// Thread-safety: plain functions; the slice type is registered once, thread-safely.
#pragma once

#include <optional>

#include <Poco/Dynamic/Var.h>

#include "policy/execution_context.hpp"
#include "policy/safety_event.hpp"
#include "sandbox/session.hpp"

namespace sandbox {

// The newest events a persisted state keeps (older ones are in earlier records).
inline constexpr std::size_t kPersistedSafetyEvents = 20;

// Registers policy::ContainmentState as the slice type "policy.containment" (LOG).
// Idempotent; record_containment, containment_state and register_builtin_slice_types
// call it.
void register_containment_slice_type();

// Replaces the session's containment state with state (its newest events only).
void record_containment(Session& session, policy::ContainmentState state);
// The containment state a session snapshot holds, or nullopt.
std::optional<policy::ContainmentState> containment_state(const SessionSnapshot& session);
// The same, of a live session.
std::optional<policy::ContainmentState> containment_state(const Session& session);

// A SafetyEvent as JSON, and back (Error kInvalidArgument if malformed).
Poco::Dynamic::Var safety_event_json(const policy::SafetyEvent& event);
policy::SafetyEvent safety_event_from_json(const Poco::Dynamic::Var& json);

}  // namespace sandbox
