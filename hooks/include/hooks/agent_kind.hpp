// The kinds of agent `shadowbox run` supervises: Claude Code, an application embedding
// Claude Code through the Claude Agent SDK, Codex CLI and Gemini CLI. Each has its
// adapter (agent_adapter.hpp); the kind is what a run records (run.json's "agent") and
// what `resume` goes by.
//
// An SDK application is started again exactly as given and learns the session to
// resume from its environment (kResumeSessionVariable, kResumeForkVariable), which it
// passes to the SDK's `resume` and `forkSession` options.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace hooks {

// An agent shadowbox has an adapter for.
enum class AgentKind {
  kClaudeCode,  // the `claude` CLI
  kClaudeSdk,   // an application embedding Claude Code (Claude Agent SDK), or a wrapper
  kCodex,       // OpenAI's Codex CLI (`codex`)
  kGemini,      // Google's Gemini CLI (`gemini`)
};

// "claude-code", "claude-sdk", "codex", "gemini".
std::string_view agent_kind_name(AgentKind kind);
// The kind named text, or nullopt.
std::optional<AgentKind> parse_agent_kind(std::string_view text);
// Every kind's name, for messages: "claude-code, claude-sdk, codex, gemini".
std::string agent_kind_names();
// The kind of an agent command from its program's file name: claude (or claude-...,
// as claude-code), codex, gemini; nullopt for any other program (an SDK application
// or a wrapper script must be named with --agent).
std::optional<AgentKind> detect_agent_kind(const std::vector<std::string>& command);
// The kind of a run whose run.json says agent (possibly "") and command: the recorded
// kind, else the detected one, else what runs recorded before the kind was kept: an
// application around Claude Code.
AgentKind recorded_agent_kind(std::string_view agent, const std::vector<std::string>& command);

// What a resumed agent finds in its environment: the agent session to resume, and
// whether to fork it ("1", the default) or continue it ("0", resume --continue).
inline constexpr const char* kResumeSessionVariable = "SHADOWBOX_RESUME_SESSION_ID";
inline constexpr const char* kResumeForkVariable = "SHADOWBOX_RESUME_FORK";

}  // namespace hooks
