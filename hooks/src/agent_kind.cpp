#include "hooks/agent_kind.hpp"

#include <boost/filesystem/path.hpp>

namespace hooks {

namespace {

constexpr AgentKind kAllKinds[] = {AgentKind::kClaudeCode, AgentKind::kClaudeSdk, AgentKind::kCodex,
                                   AgentKind::kGemini};

}  // namespace

std::string_view agent_kind_name(AgentKind kind) {
  switch (kind) {
    case AgentKind::kClaudeCode:
      return "claude-code";
    case AgentKind::kClaudeSdk:
      return "claude-sdk";
    case AgentKind::kCodex:
      return "codex";
    case AgentKind::kGemini:
      return "gemini";
  }
  return "claude-code";
}

std::optional<AgentKind> parse_agent_kind(std::string_view text) {
  for (AgentKind kind : kAllKinds) {
    if (agent_kind_name(kind) == text) return kind;
  }
  return std::nullopt;
}

std::string agent_kind_names() {
  std::string out;
  for (AgentKind kind : kAllKinds) {
    out += (out.empty() ? "" : ", ") + std::string(agent_kind_name(kind));
  }
  return out;
}

std::optional<AgentKind> detect_agent_kind(const std::vector<std::string>& command) {
  if (command.empty()) return std::nullopt;
  std::string program = boost::filesystem::path(command.front()).filename().string();
  if (program == "claude" || program.rfind("claude-", 0) == 0) return AgentKind::kClaudeCode;
  if (program == "codex") return AgentKind::kCodex;
  if (program == "gemini") return AgentKind::kGemini;
  return std::nullopt;
}

AgentKind recorded_agent_kind(std::string_view agent, const std::vector<std::string>& command) {
  if (std::optional<AgentKind> kind = parse_agent_kind(agent)) return *kind;
  if (command.empty()) return AgentKind::kClaudeCode;
  return detect_agent_kind(command).value_or(AgentKind::kClaudeSdk);
}

}  // namespace hooks
