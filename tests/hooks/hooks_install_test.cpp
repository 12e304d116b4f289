// `shadowbox hooks install|uninstall` as a team lives with it: a project's hooks go to
// this machine's own .claude/settings.local.json, never into the .claude/settings.json a
// team commits; --scope shared writes there only what every clone resolves; uninstall
// takes away what install added — a file it created too, once nothing else is in it —
// and keeps everything of the user's. Hooks fired the way Claude Code fires them: the
// settings' command through the shell, the event on stdin.
#include <Poco/JSON/Object.h>
#include <Poco/JSON/Parser.h>

#include <sstream>

#include <gtest/gtest.h>
#include <boost/filesystem.hpp>

#include "fsnap/shadow_repo.hpp"
#include "fsnap/store.hpp"
#include "hooks/claude_code_settings.hpp"
#include "test_support.hpp"

namespace {

namespace fs = boost::filesystem;
using testing_support::CommandResult;
using testing_support::read_file;
using testing_support::run_command;
using testing_support::write_file;

Poco::JSON::Object::Ptr parse(const std::string& text) {
  Poco::JSON::Parser parser;
  return parser.parse(text).extract<Poco::JSON::Object::Ptr>();
}

// The commands of the hooks for event in a settings file that are shadowbox's.
std::vector<std::string> our_commands(const fs::path& settings, const std::string& event) {
  std::vector<std::string> out;
  Poco::JSON::Object::Ptr hooks_object = parse(read_file(settings))->getObject("hooks");
  Poco::JSON::Array::Ptr groups = hooks_object->getArray(event);
  for (std::size_t i = 0; !groups.isNull() && i < groups->size(); ++i) {
    Poco::JSON::Array::Ptr list = groups->getObject(static_cast<unsigned>(i))->getArray("hooks");
    for (std::size_t k = 0; k < list->size(); ++k) {
      Poco::JSON::Object::Ptr hook = list->getObject(static_cast<unsigned>(k));
      std::string command = hook->optValue<std::string>("command", "");
      if (command.find("hook claude-code") != std::string::npos) out.push_back(command);
    }
  }
  return out;
}

class HooksInstallTest : public ::testing::Test {
 protected:
  HooksInstallTest() {
    for (const fs::path& p : {home_, data_, bin_, project_}) fs::create_directories(p);
    write_file(project_ / "a.txt", "one\n");
    write_file(config_, "watch: {daemon: off}\nmaintenance: {auto: false}\n");
    // `shadowbox` on the PATH, as every clone of a team has it.
    fs::create_symlink(SHADOWBOX_BIN, bin_ / "shadowbox");
  }

  std::vector<std::string> env(std::vector<std::string> more = {}) const {
    std::vector<std::string> out = {"HOME=" + home_.string(),
                                    "XDG_DATA_HOME=" + data_.string(),
                                    "XDG_STATE_HOME=",
                                    "SHADOWBOX_STORE=",
                                    "SHADOWBOX_CONFIG=" + config_.string(),
                                    "CLAUDE_PROJECT_DIR=" + project_.string(),
                                    "PATH=" + bin_.string() + ":/usr/bin:/bin"};
    out.insert(out.end(), more.begin(), more.end());
    return out;
  }
  CommandResult shadowbox(std::vector<std::string> args) const {
    args.insert(args.begin(), SHADOWBOX_BIN);
    return run_command(args, project_, env());
  }
  void ok(std::vector<std::string> args) const {
    CommandResult r = shadowbox(args);
    ASSERT_EQ(r.exit_code, 0) << r.err;
  }
  // Fires shadowbox's hook of settings for one tool event of the project.
  CommandResult fire(const fs::path& settings, const std::string& event,
                     const std::string& call) const {
    std::vector<std::string> commands = our_commands(settings, event);
    EXPECT_EQ(commands.size(), 1u) << settings;
    std::string json = "{\"hook_event_name\":\"" + event +
                       "\",\"session_id\":\"s\",\"transcript_path\":\"/nowhere/t.jsonl\","
                       "\"cwd\":\"" +
                       project_.string() + "\",\"tool_name\":\"Bash\",\"tool_use_id\":\"" + call +
                       // Each call its own command: the same one again and again is a loop
                       // (policy.repeat).
                       "\",\"tool_input\":{\"command\":\"echo " + call +
                       "\"},\"tool_response\":{}}";
    return run_command({"/bin/sh", "-c", commands.empty() ? "false" : commands[0]}, project_, env(),
                       json);
  }
  // The calls the project's store recorded, by checkpoint (hooks that name no run record
  // each agent session as a run of its own).
  std::vector<std::string> recorded() const {
    std::vector<std::string> out;
    if (!fs::is_directory(data_ / "shadowbox")) return out;
    for (const fs::directory_entry& e : fs::directory_iterator(data_ / "shadowbox")) {
      fsnap::ShadowRepo repo = fsnap::ShadowRepo::open(e.path() / "repo.git", false);
      for (const fsnap::Checkpoint& c : repo.log("", 0)) {
        out.insert(out.begin(),
                   std::string(fsnap::to_string(c.meta.phase)) + " " + c.meta.tool_call_id);
      }
    }
    return out;
  }

  testing_support::TempDir temp_;
  fs::path root_ = fs::canonical(temp_.path());
  fs::path home_ = root_ / "home";
  fs::path data_ = root_ / "data";
  fs::path bin_ = root_ / "bin";
  fs::path project_ = root_ / "project";
  fs::path config_ = root_ / "config.yaml";
  fs::path local_ = project_ / ".claude" / "settings.local.json";
  fs::path shared_ = project_ / ".claude" / "settings.json";
  fs::path user_ = home_ / ".claude" / "settings.json";
};

TEST_F(HooksInstallTest, ProjectHooksGoToThisMachinesOwnFileNotTheTeams) {
  const std::string team = "{\n  \"permissions\": {\"allow\": [\"Bash(make:*)\"]}\n}\n";
  write_file(shared_, team);
  CommandResult r = shadowbox({"hooks", "install"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.out.find(local_.string()), std::string::npos) << r.out;
  EXPECT_EQ(read_file(shared_), team) << "the team's file is left as it was";
  // The local file names this machine's program and store: it is this machine's.
  std::vector<std::string> commands = our_commands(local_, "PreToolUse");
  ASSERT_EQ(commands.size(), 1u);
  EXPECT_NE(commands[0].find(data_.string()), std::string::npos) << commands[0];
  // And it records.
  ASSERT_EQ(fire(local_, "PreToolUse", "toolu_1").exit_code, 0);
  EXPECT_EQ(recorded(), std::vector<std::string>{"pre_tool toolu_1"});
}

TEST_F(HooksInstallTest, UninstallRemovesTheFilesInstallCreated) {
  for (const char* scope : {"project", "shared", "user"}) {
    SCOPED_TRACE(scope);
    fs::path file = std::string(scope) == "project"  ? local_
                    : std::string(scope) == "shared" ? shared_
                                                     : user_;
    ok({"hooks", "install", "--scope", scope});
    ASSERT_TRUE(fs::exists(file));
    CommandResult r = shadowbox({"hooks", "uninstall", "--scope", scope});
    ASSERT_EQ(r.exit_code, 0) << r.err;
    EXPECT_FALSE(fs::exists(file)) << read_file(file);
    EXPECT_FALSE(fs::exists(file.parent_path())) << "the .claude folder install made";
    EXPECT_NE(r.out.find("removed"), std::string::npos) << r.out;
  }
  // Both a project's files in one folder: the folder goes with the last.
  ok({"hooks", "install"});
  ok({"hooks", "install", "--scope", "shared"});
  ok({"hooks", "uninstall", "--scope", "shared"});
  EXPECT_FALSE(fs::exists(shared_));
  EXPECT_TRUE(fs::exists(local_));
  ok({"hooks", "uninstall"});
  EXPECT_FALSE(fs::exists(project_ / ".claude"));
}

TEST_F(HooksInstallTest, UninstallKeepsWhatTheUserHad) {
  // A file of the user's, with settings: they stay, exactly.
  write_file(local_, "{\n  \"model\": \"opus\"\n}\n");
  write_file(project_ / ".claude" / "agents.md", "mine\n");
  ok({"hooks", "install"});
  ok({"hooks", "uninstall"});
  EXPECT_EQ(read_file(local_), "{\n  \"model\": \"opus\"\n}\n");
  // A file of the user's that held nothing: it stays (it was theirs).
  write_file(user_, "{}\n");
  ok({"hooks", "install", "--scope", "user"});
  ok({"hooks", "uninstall", "--scope", "user"});
  ASSERT_TRUE(fs::exists(user_));
  EXPECT_EQ(parse(read_file(user_))->size(), 0u);
  // A file install made, to which the user then added a setting: the file stays with it,
  // and so does a folder that holds a file of theirs.
  fs::remove(local_);
  ok({"hooks", "install"});
  Poco::JSON::Object::Ptr settings = parse(read_file(local_));
  settings->set("model", "sonnet");
  std::ostringstream text;
  settings->stringify(text);
  write_file(local_, text.str());
  ok({"hooks", "uninstall"});
  ASSERT_TRUE(fs::exists(local_));
  Poco::JSON::Object::Ptr left = parse(read_file(local_));
  EXPECT_EQ(left->getValue<std::string>("model"), "sonnet");
  EXPECT_FALSE(left->has("hooks"));
  EXPECT_EQ(read_file(project_ / ".claude" / "agents.md"), "mine\n");
}

TEST_F(HooksInstallTest, SharedHooksNameOnlyWhatEveryCloneResolves) {
  CommandResult r = shadowbox({"hooks", "install", "--scope", "shared"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(r.err, "") << "the shadowbox on PATH is this one";
  std::string text = read_file(shared_);
  for (const char* event : hooks::kHookEvents) {
    EXPECT_EQ(our_commands(shared_, event),
              std::vector<std::string>{"shadowbox hook claude-code --shared"})
        << event;
  }
  // Nothing of this machine: no path of the program, of HOME, of a store.
  for (const std::string& local : {root_.string(), std::string(SHADOWBOX_BIN), data_.string()}) {
    EXPECT_EQ(text.find(local), std::string::npos) << local << " in " << text;
  }
  EXPECT_FALSE(fs::exists(data_ / "shadowbox")) << "no store made for it";
  EXPECT_FALSE(fs::exists(local_));
  // A store named for every clone would be this machine's only.
  CommandResult with_store =
      shadowbox({"--store", (root_ / "s").string(), "hooks", "install", "--scope", "shared"});
  EXPECT_EQ(with_store.exit_code, 2);
  EXPECT_NE(with_store.err.find("every clone"), std::string::npos) << with_store.err;
  // A PATH without this shadowbox: said.
  fs::remove(bin_ / "shadowbox");
  CommandResult no_program = shadowbox({"hooks", "install", "--scope", "shared"});
  EXPECT_EQ(no_program.exit_code, 0);
  EXPECT_NE(no_program.err.find("no shadowbox on your PATH"), std::string::npos) << no_program.err;
}

TEST_F(HooksInstallTest, EachEventIsRecordedOnceWhateverHooksAreInstalled) {
  ok({"hooks", "install", "--scope", "shared"});
  // The shared hook records into the workspace's own store.
  ASSERT_EQ(fire(shared_, "PreToolUse", "toolu_1").exit_code, 0);
  write_file(project_ / "a.txt", "changed\n");
  ASSERT_EQ(fire(shared_, "PostToolUseFailure", "toolu_1").exit_code, 0);
  EXPECT_EQ(read_file(project_ / "a.txt"), "one\n") << "rolled back";
  std::vector<std::string> so_far = recorded();
  ASSERT_EQ(so_far.size(), 3u) << "pre, failed, post";
  // With hooks for every project as well: those stand aside for the shared ones.
  ok({"hooks", "install", "--scope", "user"});
  for (const fs::path& settings : {user_, shared_}) {
    CommandResult r = fire(settings, "PreToolUse", "toolu_2");
    EXPECT_EQ(r.exit_code, 0) << r.err;
  }
  so_far.push_back("pre_tool toolu_2");
  EXPECT_EQ(recorded(), so_far) << "once";
  // With this machine's own project hooks too: the shared ones stand aside for those.
  ok({"hooks", "install"});
  for (const fs::path& settings : {user_, shared_, local_}) {
    CommandResult r = fire(settings, "PreToolUse", "toolu_3");
    EXPECT_EQ(r.exit_code, 0) << r.err;
  }
  so_far.push_back("pre_tool toolu_3");
  EXPECT_EQ(recorded(), so_far) << "once";
  // A shared hook whose `shadowbox` on the PATH is another program records nothing: the
  // hooks for every project do not stand aside for it.
  ok({"hooks", "uninstall"});
  fs::remove(bin_ / "shadowbox");
  write_file(bin_ / "shadowbox", "#!/bin/sh\ncat > /dev/null\n", true);
  ASSERT_EQ(fire(user_, "PreToolUse", "toolu_4").exit_code, 0);
  so_far.push_back("pre_tool toolu_4");
  EXPECT_EQ(recorded(), so_far);
}

TEST_F(HooksInstallTest, InAGitWorkTreeInstallSaysWhenGitWouldCommitTheLocalFile) {
  CommandResult git = run_command({"git", "init", "-q"}, project_, env());
  ASSERT_EQ(git.exit_code, 0) << git.err;
  CommandResult r = shadowbox({"hooks", "install"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.err.find("git does not ignore " + local_.string()), std::string::npos) << r.err;
  EXPECT_NE(r.err.find(".gitignore"), std::string::npos) << r.err;
  // Ignored as the note says: nothing to say.
  write_file(project_ / ".gitignore", ".claude/settings.local.json\n");
  CommandResult again = shadowbox({"hooks", "install"});
  ASSERT_EQ(again.exit_code, 0) << again.err;
  EXPECT_EQ(again.err, "");
  CommandResult status = run_command({"git", "status", "--porcelain"}, project_, env());
  EXPECT_EQ(status.out.find("settings.local.json"), std::string::npos) << status.out;
}

TEST_F(HooksInstallTest, ProjectInstallTellsOfMachinePathsLeftInTheSharedFile) {
  // As versions before --scope shared wrote a project's hooks: into the team's file.
  std::string old = hooks::install_hooks(
      "{\"model\":\"opus\"}", std::string(SHADOWBOX_BIN) + " --store /data/s hook claude-code");
  write_file(shared_, old);
  CommandResult r = shadowbox({"hooks", "install"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.err.find(shared_.string()), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("shadowbox hooks uninstall --scope shared"), std::string::npos) << r.err;
  CommandResult removed = shadowbox({"hooks", "uninstall", "--scope", "shared"});
  ASSERT_EQ(removed.exit_code, 0) << removed.err;
  EXPECT_EQ(read_file(shared_).find("hook claude-code"), std::string::npos);
  EXPECT_EQ(parse(read_file(shared_))->getValue<std::string>("model"), "opus");
  CommandResult again = shadowbox({"hooks", "install"});
  EXPECT_EQ(again.err, "") << "nothing left to tell";
}

}  // namespace
