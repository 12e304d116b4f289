// The diff of two adapter states: sessions started and gone, messages added, an end;
// and the files of the preserved session data that changed between two times.
#include <gtest/gtest.h>
#include <boost/filesystem.hpp>

#include "fsnap/store.hpp"
#include "hooks/adapter_state_diff.hpp"
#include "hooks/claude_code_home.hpp"
#include "runs/home_preservation.hpp"
#include "test_support.hpp"

namespace {

namespace fs = boost::filesystem;
using hooks::AgentSession;
using Sessions = statekit::Slice<AgentSession>;

AgentSession session(const std::string& id, std::size_t messages, bool complete = false) {
  AgentSession s{id, "/t/" + id + ".jsonl", "startup", "/ws", "t0"};
  s.message_count = messages;
  s.complete = complete;
  s.last_activity_at = "t" + std::to_string(messages);
  return s;
}

TEST(AdapterStateDiff, SessionsAreComparedById) {
  Sessions before =
      Sessions().append(session("a", 2)).append(session("b", 4)).append(session("c", 1));
  Sessions after = Sessions()
                       .append(session("a", 2))
                       .append(session("b", 9, /*complete=*/true))
                       .append(session("d", 0));
  hooks::AdapterStateDiff d = hooks::diff_adapter_states(before, after);
  ASSERT_EQ(d.added.size(), 1u);
  EXPECT_EQ(d.added[0].session_id, "d");
  ASSERT_EQ(d.removed.size(), 1u);
  EXPECT_EQ(d.removed[0].session_id, "c");
  ASSERT_EQ(d.changed.size(), 1u) << "a did not change";
  EXPECT_EQ(d.changed[0].session_id, "b");
  EXPECT_EQ(d.changed[0].messages_added(), 5u);
  EXPECT_TRUE(d.changed[0].ended);
  EXPECT_EQ(d.changed[0].last_activity_after, "t9");
  EXPECT_TRUE(hooks::diff_adapter_states(after, after).empty());
}

TEST(AdapterStateDiff, SessionDataChangesAreThoseOfTheRunsPreservedHome) {
  testing_support::TempDir temp;
  fs::path ws = temp / "ws";
  fs::path home = temp / "home";
  fs::create_directories(ws);
  testing_support::write_file(home / ".claude/projects/p/s.jsonl", "{\"turn\":1}\n");
  fsnap::Store store = fsnap::Store::open(temp / "store", ws, true);
  auto repo = std::make_shared<fsnap::ShadowRepo>(fsnap::ShadowRepo::open(store.repo_dir(), false));
  auto before_any = std::chrono::system_clock::now() - std::chrono::seconds(10);
  runs::HomePreserver(store, repo, "r", home, hooks::claude_code_preserved_parts(), {})
      .preserve_now();
  auto now = std::chrono::system_clock::now();
  std::vector<fsnap::TreeChange> changes = hooks::session_data_changes(*repo, "r", before_any, now);
  // Nothing was preserved before: everything is new, the transcript too.
  ASSERT_FALSE(changes.empty());
  bool transcript = false;
  for (const fsnap::TreeChange& c : changes) {
    EXPECT_EQ(c.kind, fsnap::TreeChange::Kind::kAdded) << c.path;
    transcript = transcript || c.path == ".claude/projects/p/s.jsonl";
  }
  EXPECT_TRUE(transcript);
  EXPECT_TRUE(hooks::session_data_changes(*repo, "r", now, now).empty());
  // Within the same second, too: what was preserved by then, to the microsecond.
  testing_support::write_file(home / ".claude/projects/p/s.jsonl", "{\"turn\":1}\n{\"turn\":2}\n");
  runs::HomePreserver(store, repo, "r", home, hooks::claude_code_preserved_parts(), {})
      .preserve_now();
  changes = hooks::session_data_changes(*repo, "r", now, std::chrono::system_clock::now());
  ASSERT_EQ(changes.size(), 1u);
  EXPECT_EQ(changes[0].kind, fsnap::TreeChange::Kind::kModified);
  EXPECT_EQ(changes[0].path, ".claude/projects/p/s.jsonl");
  EXPECT_TRUE(hooks::session_data_changes(*repo, "other", before_any, now).empty());
}

}  // namespace
