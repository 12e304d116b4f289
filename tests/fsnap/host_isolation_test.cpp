// What a capture leaves alone and what a restore never touches:
// `.git` directories and files at any depth, config excludes, oversize files, and
// (only when asked) .gitignore'd paths; and isolation from the user's git: GIT_*
// variables, git config and hooks have no effect, and the store stays outside.
#include <cstdlib>

#include "fsnap/error.hpp"
#include "fsnap/shadow_repo.hpp"
#include "host_fixture.hpp"

namespace fsnap_test {
namespace {

using testing_support::run_command;

// Runs git in dir (tests may run git; the product never does).
void git(const fs::path& dir, std::vector<std::string> args) {
  std::vector<std::string> argv = {"git", "-c", "user.name=t", "-c", "user.email=t@localhost"};
  argv.insert(argv.end(), args.begin(), args.end());
  testing_support::CommandResult r = run_command(argv, dir);
  ASSERT_EQ(r.exit_code, 0) << r.err;
}

// Entries of a manifest whose path has a `.git` component.
Manifest git_entries(const Manifest& m) {
  Manifest out;
  for (const auto& [path, entry] : m) {
    std::string p = "/" + path + "/";
    if (p.find("/.git/") != std::string::npos) out.emplace(path, entry);
  }
  return out;
}

// Every path in the tree of a checkpoint.
std::vector<std::string> captured_paths(fsnap::HostFilesystem& fs, const fsnap::Checkpoint& c) {
  std::vector<std::string> out;
  for (const fsnap::TreeChange& change : fs.repo().diff_trees("", c.tree))
    out.push_back(change.path);
  return out;
}

bool contains(const std::vector<std::string>& v, const std::string& s) {
  return std::find(v.begin(), v.end(), s) != v.end();
}

TEST_F(HostTest, GitDirectoriesAreNeverCapturedOrTouched) {
  write("README", "top\n");
  git(ws_, {"init", "-q", "-b", "main"});
  git(ws_, {"add", "README"});
  git(ws_, {"commit", "-q", "-m", "user commit"});
  write("nested/lib.c", "nested\n");
  git(ws_ / "nested", {"init", "-q"});
  git(ws_ / "nested", {"add", "-A"});
  git(ws_ / "nested", {"commit", "-q", "-m", "nested commit"});
  write("worktree/.git", "gitdir: /somewhere/else\n");  // a .git file (worktree/submodule)
  Manifest git_before = git_entries(manifest(/*include_git=*/true));
  ASSERT_FALSE(git_before.empty());

  fsnap::HostFilesystem fs = open();
  fsnap::Checkpoint cp = fs.checkpoint({});
  for (const std::string& path : captured_paths(fs, cp)) {
    EXPECT_EQ(("/" + path + "/").find("/.git/"), std::string::npos) << "captured " << path;
  }
  EXPECT_TRUE(contains(captured_paths(fs, cp), "nested/lib.c"));

  write("README", "changed\n");
  write("nested/lib.c", "changed\n");
  remove("worktree");
  fs.restore_checkpoint(cp, {});
  EXPECT_EQ(testing_support::read_file(ws_ / "README"), "top\n");
  EXPECT_EQ(testing_support::read_file(ws_ / "nested/lib.c"), "nested\n");
  // The .git file was not captured, so restore does not bring it back either...
  EXPECT_FALSE(fs::exists(ws_ / "worktree/.git"));
  // ...and every real .git directory is byte-for-byte as before.
  Manifest git_after = git_entries(manifest(true));
  git_before.erase("worktree/.git");
  EXPECT_EQ(testing_support::describe_difference(git_before, git_after), "");
}

TEST_F(HostTest, RestoreKeepsADirectoryThatHoldsANestedRepository) {
  write("a.txt", "a");
  fsnap::HostFilesystem fs = open();
  fsnap::Checkpoint cp = fs.checkpoint({});
  write("newproj/file", "x");
  git(ws_ / "newproj", {"init", "-q"});
  fsnap::RestoreReport report = fs.restore_checkpoint(cp, {});
  EXPECT_FALSE(fs::exists(ws_ / "newproj/file"));
  EXPECT_TRUE(fs::is_directory(ws_ / "newproj/.git"));
  EXPECT_TRUE(contains(report.kept, "newproj"));
}

TEST_F(HostTest, IgnoredEnvFileComesBackAfterRollback) {
  write(".gitignore", ".env\n");
  write(".env", "SECRET=1\n");
  fsnap::HostFilesystem fs = open();
  fsnap::Checkpoint cp = fs.checkpoint({});
  remove(".env");
  fs.restore_checkpoint(cp, {});
  EXPECT_EQ(testing_support::read_file(ws_ / ".env"), "SECRET=1\n");
}

TEST_F(HostTest, RespectGitignoreExcludesAndLeavesIgnoredPathsAlone) {
  write(".gitignore", ".env\nbuild/\n");
  write("sub/.gitignore", "*.tmp\n!keep.tmp\n");
  write(".env", "SECRET=1\n");
  write("build/out.o", "obj");
  write("sub/x.tmp", "tmp");
  write("sub/keep.tmp", "keep");
  write("src.c", "code");
  fsnap::HostFilesystem fs = open({.respect_gitignore = true});
  fsnap::Checkpoint cp = fs.checkpoint({});
  std::vector<std::string> paths = captured_paths(fs, cp);
  EXPECT_FALSE(contains(paths, ".env"));
  EXPECT_FALSE(contains(paths, "build"));
  EXPECT_FALSE(contains(paths, "sub/x.tmp"));
  EXPECT_TRUE(contains(paths, "sub/keep.tmp"));
  EXPECT_TRUE(contains(paths, "src.c"));

  write(".env", "SECRET=2\n");
  write("build/new.o", "new");
  write("src.c", "changed");
  fs.restore_checkpoint(cp, {});
  EXPECT_EQ(testing_support::read_file(ws_ / ".env"), "SECRET=2\n");
  EXPECT_TRUE(fs::exists(ws_ / "build/new.o"));
  EXPECT_EQ(testing_support::read_file(ws_ / "src.c"), "code");
}

TEST_F(HostTest, ExcludedPathsAreNeitherCapturedNorTouched) {
  write("node_modules/pkg/index.js", "v1");
  write("logs/app.log", "log1");
  write("keep.log", "kept");
  write("src/main.c", "main");
  fsnap::HostFilesystem fs = open({.excludes = {"node_modules/", "*.log", "!keep.log"}});
  fsnap::Checkpoint cp = fs.checkpoint({});
  std::vector<std::string> paths = captured_paths(fs, cp);
  EXPECT_FALSE(contains(paths, "node_modules"));
  EXPECT_FALSE(contains(paths, "logs/app.log"));
  EXPECT_TRUE(contains(paths, "keep.log"));

  write("node_modules/pkg/index.js", "v2");
  write("node_modules/other/new.js", "new");
  write("logs/app.log", "log2");
  write("logs/new.log", "new log");
  write("src/main.c", "edited");
  fsnap::RestoreReport report = fs.restore_checkpoint(cp, {});
  EXPECT_EQ(testing_support::read_file(ws_ / "node_modules/pkg/index.js"), "v2");
  EXPECT_TRUE(fs::exists(ws_ / "node_modules/other/new.js"));
  EXPECT_EQ(testing_support::read_file(ws_ / "logs/app.log"), "log2");
  EXPECT_TRUE(fs::exists(ws_ / "logs/new.log"));
  EXPECT_EQ(testing_support::read_file(ws_ / "src/main.c"), "main");
  for (const fsnap::TreeChange& c : report.changes) {
    EXPECT_EQ(c.path.rfind("node_modules", 0), std::string::npos) << c.path;
    EXPECT_EQ(c.path.find(".log"), c.path == "keep.log" ? 4u : std::string::npos) << c.path;
  }
}

// (What a restore does with them — they come back from the store's copies — is in
// large_files_test.cpp.)
TEST_F(HostTest, OversizeFilesAreSkippedAndReported) {
  write("small.txt", "tiny");
  write("big/blob.bin", std::string(100, 'b'));
  fsnap::HostFilesystem fs = open({.max_file_size = 10});
  fsnap::Checkpoint cp = fs.checkpoint({});
  ASSERT_EQ(cp.skipped.size(), 1u);
  EXPECT_EQ(cp.skipped[0].path, "big/blob.bin");
  EXPECT_EQ(cp.skipped[0].size, 100u);
  EXPECT_FALSE(cp.skipped[0].reason.empty());
  EXPECT_FALSE(contains(captured_paths(fs, cp), "big/blob.bin"));
  // The record survives a round trip through the repository.
  EXPECT_EQ(fs.repo().resolve(cp.id).skipped, cp.skipped);
}

TEST_F(HostTest, ADirectoryHoldingOnlyUncapturedFilesIsKept) {
  // Files over the size limit the store cannot copy are not captured at all.
  copies_ = std::make_shared<fsnap::CopyOperations>();  // no way to make a copy
  write("a", "a");
  fsnap::HostFilesystem fs = open({.max_file_size = 10});
  fsnap::Checkpoint cp = fs.checkpoint({});
  write("later/huge", std::string(50, 'h'));
  write("later/small", "s");
  fsnap::RestoreReport report = fs.restore_checkpoint(cp, {});
  EXPECT_TRUE(fs::exists(ws_ / "later/huge"));
  EXPECT_FALSE(fs::exists(ws_ / "later/small"));
  EXPECT_TRUE(contains(report.kept, "later"));
}

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

TEST_F(HostTest, UserGitEnvironmentAndConfigHaveNoEffect) {
  testing_support::TempDir home;
  fs::path marker = home.path() / "hook-ran";
  testing_support::write_file(home.path() / "hooks/pre-commit",
                              "#!/bin/sh\ntouch '" + marker.string() + "'\n", true);
  testing_support::write_file(home.path() / "hooks/post-commit",
                              "#!/bin/sh\ntouch '" + marker.string() + "'\n", true);
  testing_support::write_file(
      home.path() / ".gitconfig",
      "[core]\n\tautocrlf = true\n\thooksPath = " + (home.path() / "hooks").string() +
          "\n[user]\n\tuseConfigOnly = true\n");
  ScopedEnv env;
  env.set("HOME", home.path().string());
  env.set("XDG_CONFIG_HOME", home.path().string());
  env.set("GIT_CONFIG_GLOBAL", (home.path() / ".gitconfig").string());
  env.set("GIT_DIR", (home.path() / "not-a-repo").string());
  env.set("GIT_WORK_TREE", home.path().string());
  env.set("GIT_INDEX_FILE", (home.path() / "index").string());
  env.set("GIT_OBJECT_DIRECTORY", (home.path() / "objects").string());
  env.set("GIT_CEILING_DIRECTORIES", "/");

  write("crlf.txt", "line one\r\nline two\r\n");
  write("lf.txt", "line\n");
  fsnap::HostFilesystem fs = open();
  Manifest before = manifest();
  fsnap::Checkpoint cp = fs.checkpoint({});
  write("crlf.txt", "changed\n");
  remove("lf.txt");
  fs.restore_checkpoint(cp, {});
  EXPECT_WORKSPACE(before);  // byte-exact: no line-ending conversion
  EXPECT_FALSE(fs::exists(marker)) << "a user hook ran";
  EXPECT_FALSE(fs::exists(home.path() / "objects"));
  EXPECT_FALSE(fs::exists(home.path() / "index"));
  EXPECT_EQ(fs.repo().read_blob(fs.repo().diff_trees("", cp.tree).at(0).after->oid),
            "line one\r\nline two\r\n");
}

TEST_F(HostTest, StoreInsideTheWorkspaceIsRefused) {
  try {
    fsnap::Store::open(ws_ / "store", ws_, true);
    FAIL() << "a store inside the workspace was accepted";
  } catch (const fsnap::Error& e) {
    EXPECT_EQ(e.code(), fsnap::ErrorCode::kInvalidArgument);
    EXPECT_NE(std::string(e.what()).find("outside the workspace"), std::string::npos);
  }
  EXPECT_FALSE(fs::exists(ws_ / "store"));
}

TEST_F(HostTest, StoreOfAnotherWorkspaceIsRefused) {
  open();
  testing_support::TempDir other;
  try {
    fsnap::Store::open(store_dir_, other.path(), true);
    FAIL() << "the store was opened for another workspace";
  } catch (const fsnap::Error& e) {
    EXPECT_EQ(e.code(), fsnap::ErrorCode::kInvalidArgument);
  }
}

}  // namespace
}  // namespace fsnap_test
