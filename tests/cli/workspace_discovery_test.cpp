// Started in a subdirectory, shadowbox protects the whole project: without --workspace
// the workspace is the directory above with a store, else the root of the enclosing git
// work tree (a real repository made with plain git), else the current directory — and it
// says which when it is not the current directory. --workspace overrides; the user's HOME
// and / are refused for every command that records, with the reason and a hint.
#include <algorithm>

#include <gtest/gtest.h>
#include <boost/filesystem.hpp>

#include "fsnap/store.hpp"
#include "test_support.hpp"

namespace {

namespace fs = boost::filesystem;
using testing_support::CommandResult;
using testing_support::read_file;
using testing_support::run_command;
using testing_support::write_file;

class WorkspaceDiscoveryTest : public ::testing::Test {
 protected:
  WorkspaceDiscoveryTest() {
    root_ = fs::canonical(temp_.path());
    for (const fs::path& p : {home_, data_, proj_ / "docs" / "api"}) fs::create_directories(p);
    write_file(proj_ / "CMakeLists.txt", "project(p)\n");
    write_file(proj_ / "docs" / "index.md", "# docs\n");
    write_file(config_, "watch: {daemon: off}\nmaintenance: {auto: false}\n");
  }

  std::vector<std::string> env(std::vector<std::string> more = {}) const {
    std::vector<std::string> out = {"HOME=" + home_.string(),
                                    "XDG_DATA_HOME=" + data_.string(),
                                    "XDG_STATE_HOME=" + (root_ / "state").string(),
                                    "SHADOWBOX_STORE=",
                                    "SHADOWBOX_CONFIG=" + config_.string(),
                                    "SHADOWBOX_NO_PROGRESS=1",
                                    "GIT_CEILING_DIRECTORIES=" + root_.parent_path().string()};
    out.insert(out.end(), more.begin(), more.end());
    return out;
  }
  // shadowbox run in cwd, with no --workspace unless args name one.
  CommandResult in(const fs::path& cwd, std::vector<std::string> args,
                   std::vector<std::string> more_env = {}) const {
    args.insert(args.begin(), SHADOWBOX_BIN);
    return run_command(args, cwd, env(std::move(more_env)));
  }
  std::string ok_in(const fs::path& cwd, std::vector<std::string> args) const {
    CommandResult r = in(cwd, args);
    EXPECT_EQ(r.exit_code, 0) << "shadowbox " << args.at(0) << ": " << r.err;
    return r.out;
  }
  void git(const fs::path& dir, std::vector<std::string> args) const {
    args.insert(args.begin(), "git");
    CommandResult r = run_command(args, dir, env({"GIT_CONFIG_GLOBAL=/dev/null"}));
    ASSERT_EQ(r.exit_code, 0) << r.err;
  }
  // The workspaces that have a store under the data directory.
  std::vector<std::string> stores() const {
    std::vector<std::string> out;
    if (!fs::is_directory(data_ / "shadowbox")) return out;
    for (const fs::directory_entry& e : fs::directory_iterator(data_ / "shadowbox")) {
      out.push_back(read_file(e.path() / "workspace"));
    }
    std::sort(out.begin(), out.end());
    return out;
  }

  testing_support::TempDir temp_;
  fs::path root_;
  fs::path home_ = fs::canonical(temp_.path()) / "home";
  fs::path data_ = fs::canonical(temp_.path()) / "data";
  fs::path proj_ = fs::canonical(temp_.path()) / "proj";
  fs::path config_ = fs::canonical(temp_.path()) / "config.yaml";
};

TEST_F(WorkspaceDiscoveryTest, InASubdirectoryOfAGitWorkTreeTheRootIsProtected) {
  git(proj_, {"init", "-q"});
  // The store is the root's, and the tool says so.
  CommandResult init = in(proj_ / "docs" / "api", {"init"});
  ASSERT_EQ(init.exit_code, 0) << init.err;
  EXPECT_EQ(stores(), std::vector<std::string>{proj_.string()});
  EXPECT_EQ(init.err, "shadowbox: workspace " + proj_.string() +
                          " (the git work tree enclosing the current directory)\n");
  // A failed call from the subdirectory: its damage to ../CMakeLists.txt is rolled back.
  ok_in(proj_ / "docs", {"snapshot", "--phase", "pre_tool", "--tool-call-id", "c1"});
  write_file(proj_ / "CMakeLists.txt", "broken\n");
  fs::remove(proj_ / "docs" / "index.md");
  ok_in(proj_ / "docs", {"rollback", "c1"});
  EXPECT_EQ(read_file(proj_ / "CMakeLists.txt"), "project(p)\n");
  EXPECT_EQ(read_file(proj_ / "docs" / "index.md"), "# docs\n");
  // An agent run from the subdirectory starts in the root, whose files it records.
  CommandResult run = in(proj_ / "docs", {"run", "--agent", "claude-sdk", "--run-id", "r1", "--",
                                          "sh", "-c", "pwd > where.txt"});
  ASSERT_EQ(run.exit_code, 0) << run.err;
  EXPECT_EQ(read_file(proj_ / "where.txt"), proj_.string() + "\n");
  EXPECT_EQ(stores(), std::vector<std::string>{proj_.string()});
  // --json readers get no notice.
  CommandResult json = in(proj_ / "docs", {"--json", "runs"});
  ASSERT_EQ(json.exit_code, 0) << json.err;
  EXPECT_EQ(json.err.find("shadowbox: workspace"), std::string::npos) << json.err;
  // At the root itself: nothing to say.
  CommandResult at_root = in(proj_, {"log"});
  ASSERT_EQ(at_root.exit_code, 0) << at_root.err;
  EXPECT_EQ(at_root.err, "");
}

TEST_F(WorkspaceDiscoveryTest, AnExistingStoreAboveWins) {
  // A store made for the project (no git anywhere): its subdirectories use it.
  ok_in(root_, {"--workspace", proj_.string(), "init"});
  CommandResult snap = in(proj_ / "docs" / "api", {"snapshot", "--tag", "from-below"});
  ASSERT_EQ(snap.exit_code, 0) << snap.err;
  EXPECT_NE(snap.err.find("shadowbox: workspace " + proj_.string() +
                          " (the directory above the current directory that has a "
                          "shadowbox store)"),
            std::string::npos)
      << snap.err;
  EXPECT_EQ(stores(), std::vector<std::string>{proj_.string()});
  // Above a git work tree's root, too: a store made for docs wins over the root for
  // what is below docs (the nearest store).
  git(proj_, {"init", "-q"});
  ok_in(root_, {"--workspace", (proj_ / "docs").string(), "init"});
  CommandResult nearer = in(proj_ / "docs" / "api", {"log"});
  ASSERT_EQ(nearer.exit_code, 0) << nearer.err;
  EXPECT_NE(nearer.err.find("workspace " + (proj_ / "docs").string() + " ("), std::string::npos)
      << nearer.err;
  // A store named with --store (or $SHADOWBOX_STORE) is found by its workspace too.
  fs::path named = root_ / "named-store";
  ok_in(root_, {"--workspace", proj_.string(), "--store", named.string(), "init"});
  CommandResult by_store = in(proj_ / "docs" / "api", {"--store", named.string(), "log"});
  ASSERT_EQ(by_store.exit_code, 0) << by_store.err;
  EXPECT_NE(by_store.err.find("workspace " + proj_.string() + " ("), std::string::npos)
      << by_store.err;
  CommandResult by_env = in(proj_ / "docs", {"log"}, {"SHADOWBOX_STORE=" + named.string()});
  ASSERT_EQ(by_env.exit_code, 0) << by_env.err;
  EXPECT_NE(by_env.err.find("workspace " + proj_.string() + " ("), std::string::npos) << by_env.err;
}

TEST_F(WorkspaceDiscoveryTest, WorkspaceOptionOverrides) {
  git(proj_, {"init", "-q"});
  ok_in(proj_, {"init"});
  CommandResult r = in(proj_ / "docs", {"--workspace", ".", "init"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(r.err, "") << "named: nothing to say";
  EXPECT_EQ(stores(), (std::vector<std::string>{proj_.string(), (proj_ / "docs").string()}));
}

TEST_F(WorkspaceDiscoveryTest, HomeAndRootAreRefusedForEveryCommandThatRecords) {
  write_file(home_ / "notes.txt", "mine\n");
  auto expect_refused = [&](const fs::path& cwd, std::vector<std::string> args,
                            const std::string& what) {
    SCOPED_TRACE(args.at(0) + " in " + cwd.string());
    CommandResult r = in(cwd, args);
    EXPECT_EQ(r.exit_code, 1) << r.out << r.err;
    EXPECT_NE(r.err.find("refusing " + what), std::string::npos) << r.err;
    EXPECT_NE(r.err.find("as a workspace"), std::string::npos) << r.err;
    EXPECT_NE(r.err.find("--workspace DIR"), std::string::npos) << r.err;
  };
  const std::string home = home_.string() + " (your HOME)";
  for (std::vector<std::string> args : std::vector<std::vector<std::string>>{
           {"init"},
           {"snapshot"},
           {"run", "--agent", "claude-sdk", "--", "sh", "-c", "echo ran > ran.txt"},
           {"hooks", "install"},
           {"hooks", "install", "--scope", "shared"},
           {"resume", "r1"},
           {"log"}}) {
    expect_refused(home_, args, home);
  }
  expect_refused(proj_, {"--workspace", home_.string(), "init"}, home);
  expect_refused(proj_, {"--workspace", "/", "init"}, "/ (the root directory)");
  expect_refused(proj_, {"--workspace", root_.string(), "snapshot"},
                 root_.string() + " (it holds your HOME)");
  EXPECT_FALSE(fs::exists(home_ / "ran.txt")) << "no agent ran";
  EXPECT_EQ(stores(), std::vector<std::string>{}) << "no store made";
  EXPECT_FALSE(fs::exists(home_ / ".claude")) << "no settings written";
  // Hooks for every project are the user's own settings: installed from HOME.
  CommandResult user = in(home_, {"hooks", "install", "--scope", "user"});
  EXPECT_EQ(user.exit_code, 0) << user.err;
  // Their events in a session started in HOME are refused too: a call is blocked (it
  // could not be undone), saying why.
  CommandResult hook = run_command(
      {SHADOWBOX_BIN, "hook", "claude-code"}, home_, env({"CLAUDE_PROJECT_DIR=" + home_.string()}),
      "{\"hook_event_name\":\"PreToolUse\",\"session_id\":\"s\",\"cwd\":\"" + home_.string() +
          "\",\"tool_name\":\"Bash\",\"tool_use_id\":\"t1\",\"tool_input\":{}}");
  EXPECT_EQ(hook.exit_code, 2) << hook.err;
  EXPECT_NE(hook.err.find("refusing " + home), std::string::npos) << hook.err;
  EXPECT_EQ(stores(), std::vector<std::string>{});
}

TEST_F(WorkspaceDiscoveryTest, AStoreOfHomeMadeBeforeCanStillBeReadAndRestoredFrom) {
  // As an earlier version made it, outside HOME.
  fs::path store = root_ / "home-store";
  write_file(home_ / "notes.txt", "mine\n");
  fsnap::Store::open(store, home_, true);
  // Reading commands work; recording ones are refused.
  CommandResult log = in(home_, {"--store", store.string(), "log"});
  EXPECT_EQ(log.exit_code, 0) << log.err;
  CommandResult snap = in(home_, {"--store", store.string(), "snapshot"});
  EXPECT_EQ(snap.exit_code, 1);
  EXPECT_NE(snap.err.find("refusing " + home_.string() + " (your HOME)"), std::string::npos)
      << snap.err;
}

TEST_F(WorkspaceDiscoveryTest, AProjectInAHomeThatIsAGitWorkTreeIsItsOwnWorkspace) {
  // Dotfiles kept in git at HOME: a project below it with no repository of its own is
  // not HOME.
  fs::path project = home_ / "notes";
  fs::create_directories(project / "sub");
  git(home_, {"init", "-q"});
  CommandResult r = in(project, {"init"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(r.err, "");
  EXPECT_EQ(stores(), std::vector<std::string>{project.string()});
  // Below it, its store is found.
  CommandResult below = in(project / "sub", {"log"});
  ASSERT_EQ(below.exit_code, 0) << below.err;
  EXPECT_NE(below.err.find("workspace " + project.string() + " ("), std::string::npos) << below.err;
}

TEST_F(WorkspaceDiscoveryTest, HookEventsFromASubdirectoryRecordTheProject) {
  git(proj_, {"init", "-q"});
  ASSERT_EQ(in(proj_, {"hooks", "install", "--scope", "user"}).exit_code, 0);
  // Claude Code started in docs: its project directory and cwd are docs.
  auto fire = [&](const std::string& event, const std::string& call) {
    std::string json = "{\"hook_event_name\":\"" + event +
                       "\",\"session_id\":\"s\",\"transcript_path\":\"/nowhere/t.jsonl\","
                       "\"cwd\":\"" +
                       (proj_ / "docs").string() + "\",\"tool_name\":\"Bash\",\"tool_use_id\":\"" +
                       call + "\",\"tool_input\":{\"command\":\"x\"},\"tool_response\":{}}";
    return run_command({SHADOWBOX_BIN, "hook", "claude-code"}, proj_ / "docs",
                       env({"CLAUDE_PROJECT_DIR=" + (proj_ / "docs").string()}), json);
  };
  CommandResult pre = fire("PreToolUse", "toolu_1");
  ASSERT_EQ(pre.exit_code, 0) << pre.err;
  EXPECT_EQ(pre.err, "") << "nothing written over the agent's screen";
  write_file(proj_ / "CMakeLists.txt", "broken\n");
  CommandResult failed = fire("PostToolUseFailure", "toolu_1");
  ASSERT_EQ(failed.exit_code, 0) << failed.err;
  EXPECT_EQ(read_file(proj_ / "CMakeLists.txt"), "project(p)\n") << "rolled back";
  EXPECT_EQ(stores(), std::vector<std::string>{proj_.string()});
}

}  // namespace
