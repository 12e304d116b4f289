// The kinds of agent `shadowbox run` supervises. They differ in how a run is resumed:
// Claude Code itself is started again with its own resume options, while an application
// that embeds Claude Code through the Claude Agent SDK is started again exactly as given
// and learns the session to resume from its environment (kResumeSessionVariable,
// kResumeForkVariable), which it passes to the SDK's `resume` and `forkSession` options.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace hooks {

// How an agent is resumed.
enum class AgentKind {
  kClaudeCode,  // the `claude` CLI
  kClaudeSdk,   // an application embedding Claude Code (Claude Agent SDK), or a wrapper
};

// "claude-code", "claude-sdk".
std::string_view agent_kind_name(AgentKind kind);
// The kind named text, or nullopt.
std::optional<AgentKind> parse_agent_kind(std::string_view text);
// The kind of an agent command that was not named: the `claude` CLI if the program's
// file name is claude (or starts with claude-, as claude-code does), else an
// application around it. Meaningful once the run has recorded a Claude Code session.
AgentKind detect_agent_kind(const std::vector<std::string>& command);

// What a resumed agent finds in its environment: the agent session to resume, and
// whether to fork it ("1", the default) or continue it ("0", resume --continue).
inline constexpr const char* kResumeSessionVariable = "SHADOWBOX_RESUME_SESSION_ID";
inline constexpr const char* kResumeForkVariable = "SHADOWBOX_RESUME_FORK";

}  // namespace hooks
