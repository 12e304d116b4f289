// The workspace of a command started anywhere in a project, found as git finds its
// repository: an existing store above wins, else the enclosing git work tree's root,
// else the directory itself. Real directories, stores and git repositories.
#include <git2.h>

#include <cstdlib>
#include <functional>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include <gtest/gtest.h>
#include <boost/filesystem.hpp>

#include "fsnap/error.hpp"
#include "fsnap/store.hpp"
#include "fsnap/workspace_discovery.hpp"
#include "test_support.hpp"

namespace {

namespace fs = boost::filesystem;
using fsnap::WorkspaceFound;

// Sets environment variables for one test and puts the old values back.
class ScopedEnv {
 public:
  void set(const std::string& name, const std::string& value) {
    const char* old = std::getenv(name.c_str());
    saved_.emplace_back(name, old ? std::optional<std::string>(old) : std::nullopt);
    ::setenv(name.c_str(), value.c_str(), 1);
  }
  ~ScopedEnv() {
    for (auto it = saved_.rbegin(); it != saved_.rend(); ++it) {
      if (it->second) {
        ::setenv(it->first.c_str(), it->second->c_str(), 1);
      } else {
        ::unsetenv(it->first.c_str());
      }
    }
  }

 private:
  std::vector<std::pair<std::string, std::optional<std::string>>> saved_;
};

class WorkspaceDiscoveryTest : public ::testing::Test {
 protected:
  WorkspaceDiscoveryTest() {
    git_libgit2_init();
    root_ = fs::canonical(temp_.path());
    fs::create_directories(root_ / "proj" / "docs" / "deep");
  }
  ~WorkspaceDiscoveryTest() override { git_libgit2_shutdown(); }

  static void git_init(const fs::path& dir, bool bare = false) {
    git_repository* repo = nullptr;
    ASSERT_EQ(git_repository_init(&repo, dir.c_str(), bare ? 1 : 0), 0);
    git_repository_free(repo);
  }
  // Stores live in one folder outside every workspace, one per workspace, as the
  // default location puts them.
  fs::path store_of(const fs::path& dir) const {
    return stores_ / std::to_string(std::hash<std::string>()(dir.string()));
  }
  void make_store(const fs::path& dir) const { fsnap::Store::open(store_of(dir), dir, true); }
  fsnap::FoundWorkspace find(
      const fs::path& start,
      const fsnap::PassedOver& passed_over = [](const fs::path&) { return false; }) const {
    return fsnap::find_workspace(
        start, [this](const fs::path& dir) { return std::optional<fs::path>(store_of(dir)); },
        passed_over);
  }

  testing_support::TempDir temp_;
  testing_support::TempDir stores_;
  fs::path root_;
};

TEST_F(WorkspaceDiscoveryTest, ASubdirectoryOfAGitWorkTreeFindsItsRoot) {
  git_init(root_ / "proj");
  fsnap::FoundWorkspace found = find(root_ / "proj" / "docs" / "deep");
  EXPECT_EQ(found.path, root_ / "proj");
  EXPECT_EQ(found.how, WorkspaceFound::kGitWorkTree);
  // At the root itself, it is the start.
  found = find(root_ / "proj");
  EXPECT_EQ(found.path, root_ / "proj");
  EXPECT_EQ(found.how, WorkspaceFound::kStart);
  // Through a relative path and a symbolic link, the real path.
  fs::create_symlink(root_ / "proj" / "docs", root_ / "link");
  EXPECT_EQ(find(root_ / "link").path, root_ / "proj");
}

TEST_F(WorkspaceDiscoveryTest, NothingAboveIsTheStartItself) {
  fsnap::FoundWorkspace found = find(root_ / "proj" / "docs");
  EXPECT_EQ(found.path, root_ / "proj" / "docs");
  EXPECT_EQ(found.how, WorkspaceFound::kStart);
  // A bare repository has no work tree to be in.
  git_init(root_ / "proj", /*bare=*/true);
  EXPECT_EQ(find(root_ / "proj" / "docs").how, WorkspaceFound::kStart);
}

TEST_F(WorkspaceDiscoveryTest, TheNearestExistingStoreAboveWins) {
  git_init(root_ / "proj");
  make_store(root_);  // above the work tree
  fsnap::FoundWorkspace found = find(root_ / "proj" / "docs" / "deep");
  EXPECT_EQ(found.path, root_) << "a store above wins over the work tree";
  EXPECT_EQ(found.how, WorkspaceFound::kStore);
  make_store(root_ / "proj" / "docs");  // nearer
  EXPECT_EQ(find(root_ / "proj" / "docs" / "deep").path, root_ / "proj" / "docs");
  // The start's own store: the start.
  found = find(root_ / "proj" / "docs");
  EXPECT_EQ(found.path, root_ / "proj" / "docs");
  EXPECT_EQ(found.how, WorkspaceFound::kStart);
  // A store folder naming another workspace is not one of this directory's.
  fs::remove_all(store_of(root_ / "proj" / "docs"));
  fs::remove_all(store_of(root_));
  fs::create_directories(root_ / "elsewhere");
  fsnap::Store::open(store_of(root_ / "proj"), root_ / "elsewhere", true);
  found = find(root_ / "proj" / "docs");
  EXPECT_EQ(found.path, root_ / "proj");
  EXPECT_EQ(found.how, WorkspaceFound::kGitWorkTree);
}

TEST_F(WorkspaceDiscoveryTest, PassedOverDirectoriesAreNeverChosenFromBelow) {
  // A HOME that is a git work tree (dotfiles) and has a store: a project below it with
  // neither is its own workspace.
  fs::path home = root_ / "proj";
  git_init(home);
  make_store(home);
  auto is_home = [&](const fs::path& dir) { return dir == home; };
  fsnap::FoundWorkspace found = find(home / "docs", is_home);
  EXPECT_EQ(found.path, home / "docs");
  EXPECT_EQ(found.how, WorkspaceFound::kStart);
  // Started in it, it is the start (for the caller to refuse).
  EXPECT_EQ(find(home, is_home).path, home);
}

TEST_F(WorkspaceDiscoveryTest, GitCeilingDirectoriesStopTheSearch) {
  git_init(root_ / "proj");
  ScopedEnv env;
  env.set("GIT_CEILING_DIRECTORIES", (root_ / "proj").string());
  fsnap::FoundWorkspace found = find(root_ / "proj" / "docs");
  EXPECT_EQ(found.path, root_ / "proj" / "docs");
  EXPECT_EQ(found.how, WorkspaceFound::kStart);
  EXPECT_EQ(fsnap::enclosing_git_work_tree(root_ / "proj" / "docs"), std::nullopt);
  EXPECT_EQ(fsnap::enclosing_git_work_tree(root_ / "proj"), root_ / "proj");
}

TEST_F(WorkspaceDiscoveryTest, GitLeavesOutWhatItIgnoresAndDoesNotTrack) {
  fs::path file = root_ / "proj" / ".claude" / "settings.local.json";
  testing_support::write_file(file, "{}\n");
  EXPECT_EQ(fsnap::git_leaves_out(file), std::nullopt) << "no work tree";
  git_init(root_ / "proj");
  EXPECT_EQ(fsnap::git_leaves_out(file), false);
  // The repository's own rules.
  testing_support::write_file(root_ / "proj" / ".gitignore", ".claude/settings.local.json\n");
  EXPECT_EQ(fsnap::git_leaves_out(file), true);
  // Ignored, but tracked: git keeps it.
  git_repository* raw = nullptr;
  ASSERT_EQ(git_repository_open(&raw, (root_ / "proj").c_str()), 0);
  git_index* index = nullptr;
  ASSERT_EQ(git_repository_index(&index, raw), 0);
  ASSERT_EQ(git_index_add_bypath(index, ".claude/settings.local.json"), 0);
  ASSERT_EQ(git_index_write(index), 0);
  git_index_free(index);
  git_repository_free(raw);
  EXPECT_EQ(fsnap::git_leaves_out(file), false);
  // The user's global ignore file, as git reads it ($XDG_CONFIG_HOME/git/ignore).
  fs::path other = root_ / "proj" / "docs" / "machine.json";
  testing_support::write_file(other, "{}\n");
  EXPECT_EQ(fsnap::git_leaves_out(other), false);
  ScopedEnv env;
  env.set("XDG_CONFIG_HOME", (root_ / "config").string());
  env.set("HOME", (root_ / "home").string());
  testing_support::write_file(root_ / "config" / "git" / "ignore", "machine.json\n");
  EXPECT_EQ(fsnap::git_leaves_out(other), true);
}

TEST_F(WorkspaceDiscoveryTest, AStartThatIsNoDirectoryIsNotFound) {
  testing_support::write_file(root_ / "file", "x");
  for (const fs::path& start : {root_ / "missing", root_ / "file"}) {
    try {
      find(start);
      ADD_FAILURE() << start;
    } catch (const fsnap::Error& e) {
      EXPECT_EQ(e.code(), fsnap::ErrorCode::kNotFound);
      EXPECT_NE(std::string(e.what()).find(start.string()), std::string::npos) << e.what();
    }
  }
}

}  // namespace
