// The agent's preserved HOME: what preserve_home keeps (and redacts), rebuild_home
// brings back, and HomePreserver skipping the work when nothing changed.
#include <gtest/gtest.h>

#include <boost/filesystem.hpp>

#include "fsnap/shadow_repo.hpp"
#include "fsnap/store.hpp"
#include "hooks/agent_home.hpp"
#include "test_support.hpp"

namespace {

namespace fs = boost::filesystem;

class AgentHomeTest : public ::testing::Test {
 protected:
  AgentHomeTest() {
    fs::create_directories(temp_ / "ws");
    store_ = fsnap::Store::open(temp_ / "store", temp_ / "ws", true);
    fsnap::ShadowRepo::open(store_->repo_dir(), true);
  }
  std::optional<std::string> preserved_tree() {
    return fsnap::ShadowRepo::open(store_->repo_dir(), false).ref_tree(hooks::home_ref("r"));
  }

  testing_support::TempDir temp_;
  fs::path home_ = temp_ / "home";
  std::optional<fsnap::Store> store_;
};

TEST_F(AgentHomeTest, SessionDataIsKeptRedactedAndNothingElse) {
  testing_support::write_file(home_ / ".claude/projects/p/s1.jsonl",
                              "{\"key\":\"sk-secret-123456\"}\n");
  testing_support::write_file(home_ / ".claude/todos/t.json", "[]");
  testing_support::write_file(home_ / ".claude/settings.json", "{}");
  testing_support::write_file(home_ / ".ssh/id_rsa", "private");
  hooks::preserve_home(*store_, "r", home_, {"sk-secret-123456"});
  fs::path rebuilt = temp_ / "rebuilt";
  hooks::rebuild_home(*store_, "r", rebuilt);
  EXPECT_EQ(testing_support::read_file(rebuilt / ".claude/projects/p/s1.jsonl"),
            "{\"key\":\"[REDACTED]\"}\n");
  EXPECT_TRUE(fs::exists(rebuilt / ".claude/todos/t.json"));
  EXPECT_FALSE(fs::exists(rebuilt / ".claude/settings.json"));
  EXPECT_FALSE(fs::exists(rebuilt / ".ssh"));
  EXPECT_THROW(hooks::rebuild_home(*store_, "other", temp_ / "none"), std::runtime_error);
}

TEST_F(AgentHomeTest, PreserverSkipsUnchangedHomes) {
  testing_support::write_file(home_ / ".claude/projects/p/s1.jsonl", "line 1\n");
  hooks::HomePreserver preserver(*store_, "r", home_, {});
  EXPECT_TRUE(preserver.preserve());
  std::optional<std::string> first = preserved_tree();
  ASSERT_TRUE(first.has_value());
  EXPECT_FALSE(preserver.preserve()) << "nothing changed";

  testing_support::write_file(home_ / ".claude/projects/p/s1.jsonl", "line 1\nline 2\n");
  EXPECT_TRUE(preserver.preserve());
  EXPECT_NE(preserved_tree(), first);
  testing_support::write_file(home_ / ".claude/projects/p/s2.jsonl", "another session\n");
  EXPECT_TRUE(preserver.preserve()) << "a new file is a change";
  fs::path rebuilt = temp_ / "rebuilt";
  hooks::rebuild_home(*store_, "r", rebuilt);
  EXPECT_EQ(testing_support::read_file(rebuilt / ".claude/projects/p/s1.jsonl"),
            "line 1\nline 2\n");
  EXPECT_TRUE(fs::exists(rebuilt / ".claude/projects/p/s2.jsonl"));
}

}  // namespace
