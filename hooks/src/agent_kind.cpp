#include "hooks/agent_kind.hpp"

#include <boost/filesystem/path.hpp>

namespace hooks {

std::string_view agent_kind_name(AgentKind kind) {
  switch (kind) {
    case AgentKind::kClaudeCode:
      return "claude-code";
    case AgentKind::kClaudeSdk:
      return "claude-sdk";
  }
  return "claude-code";
}

std::optional<AgentKind> parse_agent_kind(std::string_view text) {
  if (text == "claude-code") return AgentKind::kClaudeCode;
  if (text == "claude-sdk") return AgentKind::kClaudeSdk;
  return std::nullopt;
}

AgentKind detect_agent_kind(const std::vector<std::string>& command) {
  if (command.empty()) return AgentKind::kClaudeCode;
  std::string program = boost::filesystem::path(command.front()).filename().string();
  bool claude = program == "claude" || program.rfind("claude-", 0) == 0;
  return claude ? AgentKind::kClaudeCode : AgentKind::kClaudeSdk;
}

}  // namespace hooks
