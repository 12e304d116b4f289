// The adapter state of a run's agent sessions: a session that starts is added, one
// started again under its id keeps where it began, activity brings it up to date; a
// session stored under the slices' former Claude Code names reads as before.
#include <gtest/gtest.h>

#include "hooks/agent_session_state.hpp"
#include "hooks/agent_spend.hpp"
#include "hooks/run_slice_types.hpp"

namespace {

using hooks::AgentSession;
using hooks::AgentSessionActivity;
using Sessions = statekit::Slice<AgentSession>;

AgentSession started(const std::string& id, const std::string& at,
                     const std::string& by = "claude -p go") {
  AgentSession s{id, "/t/" + id + ".jsonl", "startup", "/ws", at};
  s.started_by = by;
  s.last_activity_at = at;
  return s;
}

TEST(AgentSessionState, ActivityUpdatesItsSessionOnly) {
  Sessions sessions = hooks::start_session(Sessions(), started("a", "t1"));
  sessions = hooks::start_session(sessions, started("b", "t2"));
  sessions = hooks::note_activity(sessions, AgentSessionActivity{"a", "t3", 6, false});
  ASSERT_EQ(sessions.size(), 2u);
  EXPECT_EQ(sessions[0].last_activity_at, "t3");
  EXPECT_EQ(sessions[0].message_count, 6u);
  EXPECT_EQ(sessions[1].last_activity_at, "t2");
  // A count read before the transcript caught up does not go back; an end is kept.
  sessions = hooks::note_activity(sessions, AgentSessionActivity{"a", "t4", 2, true});
  EXPECT_EQ(sessions[0].message_count, 6u);
  EXPECT_TRUE(sessions[0].complete);
  EXPECT_FALSE(sessions[0].resumable());
  EXPECT_TRUE(sessions[1].resumable());
  // A session nobody started is not made up.
  Sessions same = hooks::note_activity(sessions, AgentSessionActivity{"zz", "t5", 1, true});
  EXPECT_EQ(same.size(), 2u);
}

TEST(AgentSessionState, ASessionStartedAgainKeepsWhereItBegan) {
  Sessions sessions = hooks::start_session(Sessions(), started("a", "t1", "node app.mjs"));
  sessions = hooks::note_activity(sessions, AgentSessionActivity{"a", "t2", 8, true});
  AgentSession again = started("a", "t9", "");
  again.source = "resume";
  sessions = hooks::start_session(sessions, again);
  ASSERT_EQ(sessions.size(), 1u) << "resumed under its own id (--continue): one session";
  EXPECT_EQ(sessions[0].captured_at, "t1");
  EXPECT_EQ(sessions[0].started_by, "node app.mjs");
  EXPECT_EQ(sessions[0].source, "resume");
  EXPECT_EQ(sessions[0].message_count, 8u);
  EXPECT_FALSE(sessions[0].complete) << "it goes on";
}

TEST(AgentSessionState, ASessionKeepsItsAgentAndOneRecordedBeforeHasNone) {
  hooks::register_agent_run_slice_types();
  sandbox::Session session;
  session.register_slice<AgentSession>(sandbox::SlicePolicy::kLog);
  AgentSession codex = started("thread-1", "2026-11-25T10:00:00Z", "codex exec go");
  codex.agent = "codex";
  session.seed<AgentSession>({codex});
  std::string json = session.snapshot({}, true).to_json();
  sandbox::SessionSnapshot back = sandbox::SessionSnapshot::from_json(json);
  ASSERT_EQ(back.slice<AgentSession>().size(), 1u);
  EXPECT_EQ(back.slice<AgentSession>()[0].agent, "codex");
  // As a store written before sessions named their agent holds it.
  std::string stored = json;
  std::size_t at = stored.find(",\"agent\":\"codex\"");
  ASSERT_NE(at, std::string::npos) << stored;
  stored.erase(at, std::string(",\"agent\":\"codex\"").size());
  sandbox::SessionSnapshot old = sandbox::SessionSnapshot::from_json(stored);
  EXPECT_EQ(old.slice<AgentSession>()[0].agent, "");
  EXPECT_EQ(old.slice<AgentSession>()[0].session_id, "thread-1");
}

TEST(AgentSessionState, ASessionStoredUnderTheFormerClaudeCodeNamesIsRestored) {
  hooks::register_agent_run_slice_types();
  sandbox::Session session;
  session.register_slice<AgentSession>(sandbox::SlicePolicy::kLog);
  session.register_slice<hooks::AgentSpend>(sandbox::SlicePolicy::kLog);
  session.seed<AgentSession>({started("thread-1", "2026-11-25T10:00:00Z", "codex exec go")});
  session.seed<hooks::AgentSpend>({hooks::AgentSpend{1.5, 2.0, 2.0, 3, {}}});
  std::string json = session.snapshot({}, true).to_json();
  ASSERT_NE(json.find("\"agent.session\""), std::string::npos);
  ASSERT_NE(json.find("\"agent.spend\""), std::string::npos);
  // As a store written before the rename holds it.
  std::string stored = json;
  stored.replace(stored.find("\"agent.session\""), 15, "\"claude_code.session\"");
  stored.replace(stored.find("\"agent.spend\""), 13, "\"claude_code.spend\"");
  sandbox::SessionSnapshot back = sandbox::SessionSnapshot::from_json(stored);
  ASSERT_EQ(back.slice<AgentSession>().size(), 1u);
  EXPECT_EQ(back.slice<AgentSession>()[0], *session.latest<AgentSession>());
  EXPECT_EQ(hooks::agent_spend(back), session.latest<hooks::AgentSpend>());
  sandbox::Session restored;
  restored.register_slice<AgentSession>(sandbox::SlicePolicy::kLog);
  restored.register_slice<hooks::AgentSpend>(sandbox::SlicePolicy::kLog);
  restored.rollback(back, /*preserve_logs=*/false);
  EXPECT_EQ(restored.latest<AgentSession>()->started_by, "codex exec go");
  EXPECT_EQ(restored.latest<hooks::AgentSpend>()->charged_usd, 2.0);
  EXPECT_EQ(back.to_json(), json) << "written under the new names from then on";
}

}  // namespace
