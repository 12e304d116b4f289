#include "hooks/agent_kind.hpp"

#include <boost/filesystem/path.hpp>

#include "fsnap/enum_names.hpp"

namespace hooks {

namespace {

constexpr fsnap::EnumName<AgentKind> kKindNames[] = {{AgentKind::kClaudeCode, "claude-code"},
                                                     {AgentKind::kClaudeSdk, "claude-sdk"},
                                                     {AgentKind::kCodex, "codex"},
                                                     {AgentKind::kGemini, "gemini"}};

}  // namespace

std::string_view agent_kind_name(AgentKind kind) {
  return fsnap::name_of(kKindNames, kind, "claude-code");
}

std::optional<AgentKind> parse_agent_kind(std::string_view text) {
  return fsnap::value_of(kKindNames, text);
}

std::string agent_kind_names() {
  std::string out;
  for (const fsnap::EnumName<AgentKind>& kind : kKindNames) {
    out += (out.empty() ? "" : ", ") + std::string(kind.name);
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
