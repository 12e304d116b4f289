// The slice the Claude Code integration keeps in a run's session (ADAPTER_STATE.md):
// the agent's session as SessionStart reported it (LOG: every session a run had,
// newest last), what `resume` finds the session to resume in.
#pragma once

#include <string>

namespace hooks {

// One Claude Code session of a run, as its SessionStart hook reported it.
struct ClaudeCodeSession {
  std::string session_id;
  std::string transcript_path;
  std::string source;  // startup, resume, clear, compact, fork
  std::string cwd;
  std::string captured_at;  // ISO-8601 UTC
  friend bool operator==(const ClaudeCodeSession&, const ClaudeCodeSession&) = default;
};

// Registers the Claude Code slice types (this one, and AgentSpend) in
// sandbox::SliceTypes. Idempotent.
void register_claude_code_slice_types();

}  // namespace hooks
