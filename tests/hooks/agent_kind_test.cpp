// Which agent a command is: detected from the program's name, else named with --agent;
// what an older run.json that kept no kind is taken for.
#include <gtest/gtest.h>

#include "hooks/agent_kind.hpp"

namespace {

using hooks::AgentKind;
using hooks::detect_agent_kind;
using hooks::recorded_agent_kind;

TEST(AgentKind, TheAgentCommandsAreKnownByTheirProgramsName) {
  EXPECT_EQ(detect_agent_kind({"claude", "-p", "go"}), AgentKind::kClaudeCode);
  EXPECT_EQ(detect_agent_kind({"/opt/tools/bin/claude"}), AgentKind::kClaudeCode);
  EXPECT_EQ(detect_agent_kind({"claude-code"}), AgentKind::kClaudeCode);
  EXPECT_EQ(detect_agent_kind({"codex", "exec", "go"}), AgentKind::kCodex);
  EXPECT_EQ(detect_agent_kind({"/usr/local/bin/gemini", "-p", "go"}), AgentKind::kGemini);
}

TEST(AgentKind, AnyOtherProgramIsNotGuessed) {
  EXPECT_EQ(detect_agent_kind({"node", "claude-app.mjs"}), std::nullopt);
  EXPECT_EQ(detect_agent_kind({"python3", "-m", "agent"}), std::nullopt);
  EXPECT_EQ(detect_agent_kind({"/usr/bin/myclaude"}), std::nullopt);
  EXPECT_EQ(detect_agent_kind({"codex-wrapper.sh"}), std::nullopt);
  EXPECT_EQ(detect_agent_kind({}), std::nullopt);
}

TEST(AgentKind, ARunsRecordedKindWinsAndOldRunsAreTakenForWhatTheyWere) {
  EXPECT_EQ(recorded_agent_kind("gemini", {"sh", "-c", "gemini -p go"}), AgentKind::kGemini);
  EXPECT_EQ(recorded_agent_kind("", {"codex", "exec"}), AgentKind::kCodex);
  // Before kinds were kept, a command that was not claude was an SDK application.
  EXPECT_EQ(recorded_agent_kind("", {"node", "app.mjs"}), AgentKind::kClaudeSdk);
  EXPECT_EQ(recorded_agent_kind("", {}), AgentKind::kClaudeCode);
}

TEST(AgentKind, NamesRoundTripAndOthersAreRefused) {
  for (AgentKind kind :
       {AgentKind::kClaudeCode, AgentKind::kClaudeSdk, AgentKind::kCodex, AgentKind::kGemini}) {
    EXPECT_EQ(hooks::parse_agent_kind(hooks::agent_kind_name(kind)), kind);
  }
  EXPECT_EQ(hooks::agent_kind_name(AgentKind::kClaudeSdk), "claude-sdk");
  EXPECT_EQ(hooks::agent_kind_names(), "claude-code, claude-sdk, codex, gemini");
  EXPECT_FALSE(hooks::parse_agent_kind("cursor").has_value());
  EXPECT_FALSE(hooks::parse_agent_kind("").has_value());
}

}  // namespace
