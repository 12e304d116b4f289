// The agent's preserved HOME: what HomePreserver keeps (and redacts), rebuild_home
// brings back, the preservation skipped when nothing changed, and the time of the last
// preservation (resume measures a run's last activity with it).
#include <unistd.h>

#include <gtest/gtest.h>

#include <boost/filesystem.hpp>

#include "fsnap/shadow_repo.hpp"
#include "fsnap/store.hpp"
#include "fsnap/store_layout.hpp"
#include "git_objects.hpp"
#include "runs/home_preservation.hpp"
#include "sandbox/errors.hpp"
#include "test_support.hpp"

namespace {

namespace fs = boost::filesystem;

const std::vector<std::string> kParts = {".claude/projects", ".claude/todos"};

class HomePreservationTest : public ::testing::Test {
 protected:
  HomePreservationTest() {
    fs::create_directories(temp_ / "ws");
    store_ = fsnap::Store::open(temp_ / "store", temp_ / "ws", true);
    repo_ = std::make_shared<fsnap::ShadowRepo>(fsnap::ShadowRepo::open(store_->repo_dir(), false));
  }
  runs::HomePreserver preserver(std::vector<std::string> secrets = {}) {
    return runs::HomePreserver(*store_, repo_, "r", home_, kParts, std::move(secrets));
  }
  std::optional<std::string> preserved_tree() { return runs::preserved_home(*repo_, "r"); }

  testing_support::TempDir temp_;
  fs::path home_ = temp_ / "home";
  std::optional<fsnap::Store> store_;
  std::shared_ptr<fsnap::ShadowRepo> repo_;
};

TEST_F(HomePreservationTest, SessionDataIsKeptRedactedAndNothingElse) {
  testing_support::write_file(home_ / ".claude/projects/p/s1.jsonl",
                              "{\"key\":\"sk-secret-123456\"}\n");
  testing_support::write_file(home_ / ".claude/todos/t.json", "[]");
  testing_support::write_file(home_ / ".claude/settings.json", "{}");
  testing_support::write_file(home_ / ".ssh/id_rsa", "private");
  EXPECT_FALSE(runs::home_preserved_at(*repo_, "r").has_value());
  preserver({"sk-secret-123456"}).preserve_now();
  EXPECT_TRUE(runs::home_preserved_at(*repo_, "r").has_value());
  EXPECT_FALSE(fs::exists(fsnap::layout::staging_dir(store_->dir(), "r", ::getpid())))
      << "the staging copy is gone";
  fs::path rebuilt = temp_ / "rebuilt";
  runs::rebuild_home(*repo_, "r", rebuilt);
  EXPECT_EQ(testing_support::read_file(rebuilt / ".claude/projects/p/s1.jsonl"),
            "{\"key\":\"[REDACTED]\"}\n");
  EXPECT_TRUE(fs::exists(rebuilt / ".claude/todos/t.json"));
  EXPECT_FALSE(fs::exists(rebuilt / ".claude/settings.json"));
  EXPECT_FALSE(fs::exists(rebuilt / ".ssh"));
  try {
    runs::rebuild_home(*repo_, "other", temp_ / "none");
    FAIL() << "a run without preserved data was rebuilt";
  } catch (const sandbox::Error& e) {
    EXPECT_EQ(e.code(), sandbox::ErrorCode::kNotFound);
  }
}

TEST_F(HomePreservationTest, ASecretJsonEscapedInATranscriptIsRedacted) {
  // Agents write their transcripts as JSON lines: a '"' or '\' of a secret is escaped.
  const std::string secret = "pa\"ss\\word-0123";
  const std::string escaped = "pa\\\"ss\\\\word-0123";
  testing_support::write_file(home_ / ".claude/projects/p/s1.jsonl",
                              "{\"input\":{\"password\":\"" + escaped + "\"}}\n");
  preserver({secret}).preserve_now();
  fs::path rebuilt = temp_ / "rebuilt";
  runs::rebuild_home(*repo_, "r", rebuilt);
  EXPECT_EQ(testing_support::read_file(rebuilt / ".claude/projects/p/s1.jsonl"),
            "{\"input\":{\"password\":\"[REDACTED]\"}}\n");
  EXPECT_EQ(testing_support::objects_containing(store_->repo_dir(), {secret, escaped}),
            std::vector<std::string>{});
}

TEST_F(HomePreservationTest, PreserverSkipsUnchangedHomes) {
  testing_support::write_file(home_ / ".claude/projects/p/s1.jsonl", "line 1\n");
  runs::HomePreserver keeper = preserver();
  EXPECT_TRUE(keeper.preserve());
  std::optional<std::string> first = preserved_tree();
  ASSERT_TRUE(first.has_value());
  EXPECT_FALSE(keeper.preserve()) << "nothing changed";

  testing_support::write_file(home_ / ".claude/projects/p/s1.jsonl", "line 1\nline 2\n");
  EXPECT_TRUE(keeper.preserve());
  EXPECT_NE(preserved_tree(), first);
  testing_support::write_file(home_ / ".claude/projects/p/s2.jsonl", "another session\n");
  EXPECT_TRUE(keeper.preserve()) << "a new file is a change";
  fs::path rebuilt = temp_ / "rebuilt";
  runs::rebuild_home(*repo_, "r", rebuilt);
  EXPECT_EQ(testing_support::read_file(rebuilt / ".claude/projects/p/s1.jsonl"),
            "line 1\nline 2\n");
  EXPECT_TRUE(fs::exists(rebuilt / ".claude/projects/p/s2.jsonl"));
}

}  // namespace
