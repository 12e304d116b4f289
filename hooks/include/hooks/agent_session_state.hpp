// The slice every agent's integration (Claude Code, Codex, Gemini) keeps in a run's
// session (docs/conformance/ADAPTER_STATE.md): the adapter state of each agent session
// the run had (a LOG slice, in the order they started), kept up to date as the session goes on —
// what `resume` finds the session to resume in, and what `runs` lists.
#pragma once

#include <cstddef>
#include <string>

#include "sandbox/session.hpp"

namespace hooks {

// One agent session of a run (a Claude Code session, a Codex thread, a Gemini chat): as
// its SessionStart hook reported it, then brought
// up to date at each of its tool calls and at its end.
struct AgentSession {
  std::string session_id;
  std::string transcript_path;
  std::string source;  // startup, resume, clear, compact, fork
  std::string cwd;
  std::string captured_at;        // ISO-8601 UTC: when it started
  std::string started_by;         // the command line of the run's agent that started it
  std::string last_activity_at;   // ISO-8601 UTC: its newest hook event
  std::size_t message_count = 0;  // user and assistant messages in its transcript
  bool complete = false;          // it ended (SessionEnd, not /clear)
  std::string resumed_from;       // the session a `shadowbox resume` started it from
  // The agent it is a session of (agent_kind_name: claude-code, codex, gemini,
  // claude-sdk), as the hook event that started it was read; "" for sessions recorded
  // before this was kept (run.json's agent then says).
  std::string agent;

  // Whether it can be resumed: it has an id and did not end.
  bool resumable() const { return !session_id.empty() && !complete; }
  friend bool operator==(const AgentSession&, const AgentSession&) = default;
};

// A session's activity, dispatched at its tool calls: updates the session with the
// same id (nothing if there is none).
struct AgentSessionActivity {
  std::string session_id;
  std::string at;  // ISO-8601 UTC
  std::size_t message_count = 0;
  bool ended = false;  // SessionEnd
};

// The reducers of the AgentSession slice: a session that starts is appended, or —
// started again under the same id (a resume that continues it) — replaces its item,
// keeping when it first started and what started it; activity updates its session.
statekit::Slice<AgentSession> start_session(const statekit::Slice<AgentSession>& slice,
                                            const AgentSession& started);
statekit::Slice<AgentSession> note_activity(const statekit::Slice<AgentSession>& slice,
                                            const AgentSessionActivity& activity);
// Registers those reducers in session (once).
void install_agent_session_reducers(sandbox::Session& session);

// Registers AgentSession as the slice type "agent.session" (LOG), and reads it under the
// name sessions stored before it had that one, "claude_code.session", too. Idempotent;
// register_agent_run_slice_types (hooks/run_slice_types.hpp) does it.
void register_agent_session_slice_type();

}  // namespace hooks
