// The slice the Claude Code integration keeps in a run's session
// (docs/conformance/ADAPTER_STATE.md): the adapter state of each agent session the run
// had (a LOG slice, in the order they started), kept up to date as the session goes on —
// what `resume` finds the session to resume in, and what `runs` lists.
#pragma once

#include <cstddef>
#include <string>

#include "sandbox/session.hpp"

namespace hooks {

// One Claude Code session of a run: as its SessionStart hook reported it, then brought
// up to date at each of its tool calls and at its end.
struct ClaudeCodeSession {
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

  // Whether it can be resumed: it has an id and did not end.
  bool resumable() const { return !session_id.empty() && !complete; }
  friend bool operator==(const ClaudeCodeSession&, const ClaudeCodeSession&) = default;
};

// A session's activity, dispatched at its tool calls: updates the session with the
// same id (nothing if there is none).
struct ClaudeCodeActivity {
  std::string session_id;
  std::string at;  // ISO-8601 UTC
  std::size_t message_count = 0;
  bool ended = false;  // SessionEnd
};

// The reducers of the ClaudeCodeSession slice: a session that starts is appended, or —
// started again under the same id (a resume that continues it) — replaces its item,
// keeping when it first started and what started it; activity updates its session.
statekit::Slice<ClaudeCodeSession> start_session(const statekit::Slice<ClaudeCodeSession>& slice,
                                                 const ClaudeCodeSession& started);
statekit::Slice<ClaudeCodeSession> note_activity(const statekit::Slice<ClaudeCodeSession>& slice,
                                                 const ClaudeCodeActivity& activity);
// Registers those reducers in session (once).
void install_claude_code_reducers(sandbox::Session& session);

// Registers ClaudeCodeSession as the slice type "claude_code.session" (LOG). Idempotent;
// register_agent_run_slice_types (hooks/run_slice_types.hpp) does it.
void register_claude_code_slice_types();

}  // namespace hooks
