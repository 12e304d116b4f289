// A run recovered at another path: what the agents keep of their sessions by working
// directory moves with it — Claude Code's ~/.claude/projects/<path as dashes>/, Gemini
// CLI's projects.json entry and its directories' .project_root markers — and nothing
// else is touched.
#include <gtest/gtest.h>

#include <boost/filesystem.hpp>

#include "hooks/agent_adapter.hpp"
#include "hooks/claude_code_home.hpp"
#include "test_support.hpp"

namespace {

namespace fs = boost::filesystem;
using testing_support::read_file;
using testing_support::write_file;

TEST(SessionRekey, ClaudeCodesProjectDirectoryNameIsThePathWithDashes) {
  EXPECT_EQ(hooks::claude_code_project_dir("/home/ana/src/my_app.v2"), "-home-ana-src-my-app-v2");
}

TEST(SessionRekey, ClaudeCodesSessionsMoveToTheNewPath) {
  testing_support::TempDir home;
  const hooks::AgentAdapter& claude = hooks::adapter_for(hooks::AgentKind::kClaudeCode);
  fs::path old_dir = home.path() / ".claude/projects/-srv-a-ws";
  write_file(old_dir / "s1.jsonl", "{\"cwd\":\"/srv/a/ws\"}\n");
  write_file(home.path() / ".claude/projects/-other/s0.jsonl", "other project\n");
  claude.rekey_session_data(home.path(), "/srv/a/ws", "/data/b/ws");
  EXPECT_FALSE(fs::exists(old_dir));
  EXPECT_EQ(read_file(home.path() / ".claude/projects/-data-b-ws/s1.jsonl"),
            "{\"cwd\":\"/srv/a/ws\"}\n");
  EXPECT_EQ(read_file(home.path() / ".claude/projects/-other/s0.jsonl"), "other project\n");
  // Sessions the new path has already are not overwritten; nothing to move is nothing.
  write_file(old_dir / "s2.jsonl", "x\n");
  claude.rekey_session_data(home.path(), "/srv/a/ws", "/data/b/ws");
  EXPECT_TRUE(fs::exists(old_dir / "s2.jsonl"));
  claude.rekey_session_data(home.path(), "/nowhere", "/data/c/ws");
  EXPECT_FALSE(fs::exists(home.path() / ".claude/projects/-data-c-ws"));
}

TEST(SessionRekey, GeminisProjectKeepsItsSlugAtTheNewPath) {
  testing_support::TempDir home;
  const hooks::AgentAdapter& gemini = hooks::adapter_for(hooks::AgentKind::kGemini);
  write_file(home.path() / ".gemini/projects.json",
             R"({"projects":{"/srv/a/ws":"ws","/srv/other":"other"}})");
  write_file(home.path() / ".gemini/tmp/ws/.project_root", "/srv/a/ws");
  write_file(home.path() / ".gemini/tmp/ws/chats/session-1-abcdef12.jsonl", "chat\n");
  write_file(home.path() / ".gemini/history/ws/.project_root", "/srv/a/ws");
  gemini.rekey_session_data(home.path(), "/srv/a/ws", "/data/b/ws");
  std::string registry = read_file(home.path() / ".gemini/projects.json");
  EXPECT_NE(registry.find("\"/data/b/ws\": \"ws\""), std::string::npos) << registry;
  EXPECT_EQ(registry.find("/srv/a/ws"), std::string::npos) << registry;
  EXPECT_NE(registry.find("\"/srv/other\": \"other\""), std::string::npos) << registry;
  EXPECT_EQ(read_file(home.path() / ".gemini/tmp/ws/.project_root"), "/data/b/ws");
  EXPECT_EQ(read_file(home.path() / ".gemini/history/ws/.project_root"), "/data/b/ws");
  EXPECT_EQ(read_file(home.path() / ".gemini/tmp/ws/chats/session-1-abcdef12.jsonl"), "chat\n");
}

TEST(SessionRekey, CodexKeepsSessionsByIdAndIsLeftAlone) {
  testing_support::TempDir home;
  write_file(home.path() / ".codex/sessions/2026/11/25/rollout-x.jsonl", "r\n");
  hooks::adapter_for(hooks::AgentKind::kCodex)
      .rekey_session_data(home.path(), "/srv/a/ws", "/data/b/ws");
  EXPECT_EQ(read_file(home.path() / ".codex/sessions/2026/11/25/rollout-x.jsonl"), "r\n");
}

}  // namespace
