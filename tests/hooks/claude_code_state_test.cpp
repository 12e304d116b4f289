// The adapter state of a run's Claude Code sessions: a session that starts is added, one
// started again under its id keeps where it began, activity brings it up to date.
#include <gtest/gtest.h>

#include "hooks/claude_code_state.hpp"

namespace {

using hooks::ClaudeCodeActivity;
using hooks::ClaudeCodeSession;
using Sessions = statekit::Slice<ClaudeCodeSession>;

ClaudeCodeSession started(const std::string& id, const std::string& at,
                          const std::string& by = "claude -p go") {
  ClaudeCodeSession s{id, "/t/" + id + ".jsonl", "startup", "/ws", at};
  s.started_by = by;
  s.last_activity_at = at;
  return s;
}

TEST(ClaudeCodeState, ActivityUpdatesItsSessionOnly) {
  Sessions sessions = hooks::start_session(Sessions(), started("a", "t1"));
  sessions = hooks::start_session(sessions, started("b", "t2"));
  sessions = hooks::note_activity(sessions, ClaudeCodeActivity{"a", "t3", 6, false});
  ASSERT_EQ(sessions.size(), 2u);
  EXPECT_EQ(sessions[0].last_activity_at, "t3");
  EXPECT_EQ(sessions[0].message_count, 6u);
  EXPECT_EQ(sessions[1].last_activity_at, "t2");
  // A count read before the transcript caught up does not go back; an end is kept.
  sessions = hooks::note_activity(sessions, ClaudeCodeActivity{"a", "t4", 2, true});
  EXPECT_EQ(sessions[0].message_count, 6u);
  EXPECT_TRUE(sessions[0].complete);
  EXPECT_FALSE(sessions[0].resumable());
  EXPECT_TRUE(sessions[1].resumable());
  // A session nobody started is not made up.
  Sessions same = hooks::note_activity(sessions, ClaudeCodeActivity{"zz", "t5", 1, true});
  EXPECT_EQ(same.size(), 2u);
}

TEST(ClaudeCodeState, ASessionStartedAgainKeepsWhereItBegan) {
  Sessions sessions = hooks::start_session(Sessions(), started("a", "t1", "node app.mjs"));
  sessions = hooks::note_activity(sessions, ClaudeCodeActivity{"a", "t2", 8, true});
  ClaudeCodeSession again = started("a", "t9", "");
  again.source = "resume";
  sessions = hooks::start_session(sessions, again);
  ASSERT_EQ(sessions.size(), 1u) << "resumed under its own id (--continue): one session";
  EXPECT_EQ(sessions[0].captured_at, "t1");
  EXPECT_EQ(sessions[0].started_by, "node app.mjs");
  EXPECT_EQ(sessions[0].source, "resume");
  EXPECT_EQ(sessions[0].message_count, 8u);
  EXPECT_FALSE(sessions[0].complete) << "it goes on";
}

}  // namespace
