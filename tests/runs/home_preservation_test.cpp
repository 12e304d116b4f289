// The agent's preserved HOME: what HomePreserver keeps (and redacts), rebuild_home
// brings back, the preservation skipped when nothing changed, and the time of the last
// preservation (resume measures a run's last activity with it).
#include <unistd.h>

#include <gtest/gtest.h>

#include <boost/filesystem.hpp>

#include "fsnap/clock.hpp"
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
  runs::HomePreserver preserver(std::vector<std::string> secrets = {},
                                std::shared_ptr<const fsnap::Clock> clock = nullptr) {
    return runs::HomePreserver(*store_, repo_, "r", home_, kParts, std::move(secrets),
                               std::move(clock));
  }
  // A clock by which every file just written is old enough to be trusted.
  static std::shared_ptr<const fsnap::Clock> later() {
    return std::make_shared<fsnap::OffsetClock>(std::chrono::seconds(10));
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
  EXPECT_FALSE(fs::exists(fsnap::layout::run_dir(store_->dir(), "r")))
      << "no copy of the HOME is made on its way into the store";
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

TEST_F(HomePreservationTest, AFileUnchangedSinceItWasKeptIsNotReadAgain) {
  testing_support::write_file(home_ / ".claude/projects/p/s1.jsonl", "line 1\n");
  testing_support::write_file(home_ / ".claude/todos/t.json", "[]");
  runs::HomePreserver keeper = preserver({}, later());
  std::string first = keeper.preserve_now();
  EXPECT_EQ(keeper.files_read(), 2u);
  EXPECT_EQ(keeper.preserve_now(), first);
  EXPECT_EQ(keeper.files_read(), 0u) << "both files are as they were kept";

  testing_support::write_file(home_ / ".claude/projects/p/s1.jsonl", "line 1\nline 2\n");
  EXPECT_NE(keeper.preserve_now(), first);
  EXPECT_EQ(keeper.files_read(), 1u) << "only the transcript changed";
  fs::path rebuilt = temp_ / "rebuilt";
  runs::rebuild_home(*repo_, "r", rebuilt);
  EXPECT_EQ(testing_support::read_file(rebuilt / ".claude/projects/p/s1.jsonl"),
            "line 1\nline 2\n");
  EXPECT_EQ(testing_support::read_file(rebuilt / ".claude/todos/t.json"), "[]");
}

TEST_F(HomePreservationTest, AFileWrittenWithinTheClocksMarginIsReadEveryTime) {
  // Written again within the file system's clock tick, a file keeps its stat data: one
  // that young is never taken as it was.
  testing_support::write_file(home_ / ".claude/projects/p/s1.jsonl", "line 1\n");
  runs::HomePreserver keeper = preserver();
  keeper.preserve_now();
  EXPECT_EQ(keeper.files_read(), 1u);
  keeper.preserve_now();
  EXPECT_EQ(keeper.files_read(), 1u);
}

TEST_F(HomePreservationTest, AKeptBlobGoneFromTheStoreIsReadAgain) {
  testing_support::write_file(home_ / ".claude/projects/p/s1.jsonl", "kept line\n");
  runs::HomePreserver keeper = preserver({}, later());
  keeper.preserve_now();
  std::string blob = repo_->write_blob("kept line\n");  // its id (it exists)
  fs::path loose = store_->repo_dir() / "objects" / blob.substr(0, 2) / blob.substr(2);
  ASSERT_TRUE(fs::remove(loose)) << "a small blob is written loose";
  ASSERT_FALSE(repo_->has_object(blob));
  keeper.preserve_now();
  EXPECT_EQ(keeper.files_read(), 1u);
  EXPECT_TRUE(repo_->has_object(blob));
}

TEST_F(HomePreservationTest, NoLinkBelowTheHomeIsFollowed) {
  // The agent writes its HOME: a link there must not bring a file from elsewhere into
  // the store — whether it is a part, a directory above one, or a file in one.
  fs::path outside = temp_ / "outside";
  testing_support::write_file(outside / "projects/p/stolen.jsonl", "outside-secret-1\n");
  testing_support::write_file(outside / "todos.json", "outside-secret-2\n");
  fs::create_directories(home_);
  fs::create_symlink(outside, home_ / ".claude");
  runs::HomePreserver keeper = preserver();
  keeper.preserve_now();
  EXPECT_EQ(keeper.files_read(), 0u);

  fs::remove(home_ / ".claude");
  testing_support::write_file(home_ / ".claude/projects/p/s1.jsonl", "mine\n");
  fs::create_symlink(outside / "todos.json", home_ / ".claude/projects/p/link.jsonl");
  fs::create_symlink(outside / "projects", home_ / ".claude/todos");
  keeper.preserve_now();
  EXPECT_EQ(keeper.files_read(), 1u);
  fs::path rebuilt = temp_ / "rebuilt";
  runs::rebuild_home(*repo_, "r", rebuilt);
  EXPECT_EQ(testing_support::read_file(rebuilt / ".claude/projects/p/s1.jsonl"), "mine\n");
  EXPECT_FALSE(fs::exists(rebuilt / ".claude/projects/p/link.jsonl"));
  EXPECT_FALSE(fs::exists(rebuilt / ".claude/todos"));
  EXPECT_EQ(testing_support::objects_containing(store_->repo_dir(),
                                                {"outside-secret-1", "outside-secret-2"}),
            std::vector<std::string>{});
}

}  // namespace
