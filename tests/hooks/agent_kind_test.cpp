// Which kind of agent a command is, and so how `resume` starts it again.
#include <gtest/gtest.h>

#include "hooks/agent_kind.hpp"

namespace {

using hooks::AgentKind;
using hooks::detect_agent_kind;

TEST(AgentKind, TheClaudeCliIsClaudeCodeAndAnythingElseAnApplication) {
  EXPECT_EQ(detect_agent_kind({"claude", "-p", "go"}), AgentKind::kClaudeCode);
  EXPECT_EQ(detect_agent_kind({"/opt/tools/bin/claude"}), AgentKind::kClaudeCode);
  EXPECT_EQ(detect_agent_kind({"claude-code"}), AgentKind::kClaudeCode);
  EXPECT_EQ(detect_agent_kind({"node", "claude-app.mjs"}), AgentKind::kClaudeSdk);
  EXPECT_EQ(detect_agent_kind({"python3", "-m", "agent"}), AgentKind::kClaudeSdk);
  EXPECT_EQ(detect_agent_kind({"/usr/bin/myclaude"}), AgentKind::kClaudeSdk);
  EXPECT_EQ(detect_agent_kind({}), AgentKind::kClaudeCode);
}

TEST(AgentKind, NamesRoundTripAndOthersAreRefused) {
  for (AgentKind kind : {AgentKind::kClaudeCode, AgentKind::kClaudeSdk}) {
    EXPECT_EQ(hooks::parse_agent_kind(hooks::agent_kind_name(kind)), kind);
  }
  EXPECT_EQ(hooks::agent_kind_name(AgentKind::kClaudeSdk), "claude-sdk");
  EXPECT_FALSE(hooks::parse_agent_kind("codex").has_value());
  EXPECT_FALSE(hooks::parse_agent_kind("").has_value());
}

}  // namespace
