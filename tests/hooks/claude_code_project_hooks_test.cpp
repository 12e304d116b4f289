// Which of a project's Claude Code hooks a hook for every project (`hooks install --scope
// user`) stands aside for: only shadowbox's own, exactly as `hooks install --scope
// project` writes them, running this shadowbox into a store of the workspace. The
// project's settings are hostile input: anything else that merely looks like shadowbox's
// hooks must not switch the recording off.
#include <sys/stat.h>

#include <string>
#include <vector>

#include <gtest/gtest.h>
#include <boost/filesystem.hpp>

#include "fsnap/store.hpp"
#include "hooks/claude_code_project_hooks.hpp"
#include "hooks/claude_code_settings.hpp"
#include "test_support.hpp"

namespace {

namespace fs = boost::filesystem;
using testing_support::write_file;

constexpr const char* kAllEvents[] = {"PreToolUse",   "PostToolUse", "PostToolUseFailure",
                                      "SessionStart", "Stop",        "SessionEnd"};

// Settings with hook (a JSON object) in a group of matcher for each of events.
std::string settings_with(const std::string& hook, std::vector<std::string> events = {},
                          const std::string& matcher = "\"matcher\":\"*\",",
                          const std::string& top = "") {
  if (events.empty()) events.assign(std::begin(kAllEvents), std::end(kAllEvents));
  std::string out = "{" + top + "\"hooks\":{";
  for (std::size_t i = 0; i < events.size(); ++i) {
    out += (i ? "," : "") + ("\"" + events[i] + "\":[{" + matcher + "\"hooks\":[" + hook + "]}]");
  }
  return out + "}}";
}

std::string command_hook(const std::string& command, const std::string& more = "") {
  std::string escaped;
  for (char c : command) {
    if (c == '"' || c == '\\') escaped += '\\';
    if (c == '\n') {
      escaped += "\\n";
      continue;
    }
    escaped += c;
  }
  return "{\"type\":\"command\",\"command\":\"" + escaped + "\",\"timeout\":600" + more + "}";
}

TEST(ProjectHookCommandsTest, TakesTheEntriesHooksInstallWrites) {
  // A path with a space and a quote, quoted as `hooks install` quotes it.
  std::string command =
      "'/opt/sb dir/shadowbox-hook' --store '/data/it'\\''s store' hook claude-code";
  std::string settings = hooks::install_hooks("{\"model\":\"opus\"}", command);
  for (const char* event : kAllEvents) {
    SCOPED_TRACE(event);
    std::vector<hooks::ProjectHookCommand> found = hooks::project_hook_commands(settings, event);
    ASSERT_EQ(found.size(), 1u) << settings;
    EXPECT_EQ(found[0].program, "/opt/sb dir/shadowbox-hook");
    EXPECT_EQ(found[0].store, "/data/it's store");
  }
  EXPECT_TRUE(hooks::project_hook_commands(settings, "Notification").empty());
  // Written by hand: plain words, double quotes, no matcher, an empty one, a longer timeout.
  for (const std::string& s :
       {settings_with(command_hook("/opt/shadowbox --store /data/s hook claude-code")),
        settings_with(command_hook("\"/opt/shadowbox\" --store /data/s hook  claude-code")),
        settings_with(command_hook("/opt/shadowbox --store /data/s hook claude-code"), {}, ""),
        settings_with(command_hook("/opt/shadowbox --store /data/s hook claude-code"), {},
                      "\"matcher\":\"\","),
        settings_with("{\"type\":\"command\",\"command\":\"/opt/shadowbox --store /data/s hook "
                      "claude-code\",\"timeout\":3600}"),
        settings_with(command_hook("/opt/shadowbox --store /data/s hook claude-code"), {}, "",
                      "\"disableAllHooks\":false,")}) {
    SCOPED_TRACE(s);
    std::vector<hooks::ProjectHookCommand> found = hooks::project_hook_commands(s, "PreToolUse");
    ASSERT_EQ(found.size(), 1u);
    EXPECT_EQ(found[0].program, "/opt/shadowbox");
    EXPECT_EQ(found[0].store, "/data/s");
  }
}

TEST(ProjectHookCommandsTest, RefusesWhatOnlyLooksLikeThem) {
  const std::string good = "/opt/shadowbox --store /data/s hook claude-code";
  std::vector<std::string> lookalikes;
  // Commands the shell would run otherwise, or that are not shadowbox's form.
  for (const char* command : {
           "true # shadowbox hook claude-code",
           "echo shadowbox hook claude-code",
           "/opt/shadowbox --store /data/s hook claude-code; rm -f x",
           "/opt/shadowbox --store /data/s hook claude-code # note",
           "/opt/shadowbox --store /data/s hook claude-code &",
           "/opt/shadowbox --store /data/s hook claude-code || true",
           "/opt/shadowbox --store /data/s hook claude-code > /dev/null",
           "/opt/shadowbox --store /data/s hook claude-code\n/bin/true",
           "$HOME/shadowbox --store /data/s hook claude-code",
           "/opt/shadowbox --store \"$STORE\" hook claude-code",
           "`which shadowbox` --store /data/s hook claude-code",
           "~/shadowbox --store /data/s hook claude-code",
           "/opt/sh*dowbox --store /data/s hook claude-code",
           "/opt/shadowbox --store '/data/s hook claude-code",
           "/opt/shadowbox --store /data/s hook claude-code extra",
           "/opt/shadowbox --store /data/s hook codex",
           "/opt/shadowbox --workspace /data/s hook claude-code",
           "/opt/shadowbox hook claude-code",
           "shadowbox --store /data/s hook claude-code",
           "/opt/shadowbox --store data/s hook claude-code",
           "FOO=1 /opt/shadowbox --store /data/s hook claude-code",
       }) {
    lookalikes.push_back(settings_with(command_hook(command)));
  }
  // The right command in an entry Claude Code runs otherwise, or not for every tool.
  for (const std::string& hook : std::vector<std::string>{
           command_hook(good, ",\"async\":true"),
           command_hook(good, ",\"args\":[]"),
           "{\"type\":\"command\",\"command\":\"" + good + "\"}",
           "{\"type\":\"command\",\"command\":\"" + good + "\",\"timeout\":1}",
           "{\"type\":\"command\",\"command\":\"" + good + "\",\"timeout\":\"600\"}",
           "{\"type\":\"command\",\"command\":\"" + good + "\",\"timeout\":true}",
           "{\"command\":\"" + good + "\",\"timeout\":600}",
           "{\"type\":\"http\",\"url\":\"http://127.0.0.1:9/hook/x\",\"timeout\":600}",
           // JSON keeps the last of a repeated key: Claude Code would run `true`.
           "{\"type\":\"command\",\"command\":\"" + good +
               "\",\"command\":\"true\",\"timeout\":600}",
       }) {
    lookalikes.push_back(settings_with(hook));
  }
  lookalikes.push_back(settings_with(command_hook(good), {}, "\"matcher\":\"NoSuchTool\","));
  lookalikes.push_back(settings_with(command_hook(good), {}, "\"matcher\":7,"));
  lookalikes.push_back(settings_with(command_hook(good), {}, "\"matcher\":\"*\",\"x\":1,"));
  lookalikes.push_back(settings_with(command_hook(good), {}, "", "\"disableAllHooks\":true,"));
  lookalikes.push_back(settings_with(command_hook(good), {}, "", "\"disableAllHooks\":\"no\","));
  // Not a JSON object Claude Code would read.
  lookalikes.push_back(settings_with(command_hook(good)) + " trailing");
  lookalikes.push_back(settings_with(command_hook(good)) + ",");
  lookalikes.push_back("[" + settings_with(command_hook(good)) + "]");
  for (const std::string& settings : lookalikes) {
    SCOPED_TRACE(settings);
    EXPECT_TRUE(hooks::project_hook_commands(settings, "PreToolUse").empty());
  }
}

TEST(ProjectHookCommandsTest, UninstallStillTakesOutEveryFormOfOurs) {
  // What counts for standing aside is narrow; what `hooks uninstall` (and install, which
  // replaces ours) takes out is not: older installs and lookalikes go too.
  std::string settings =
      "{\"hooks\":{\"PreToolUse\":[{\"matcher\":\"*\",\"hooks\":["
      "{\"type\":\"command\",\"command\":\"'/old/shadowbox' hook claude-code\"},"
      "{\"type\":\"command\",\"command\":\"true # shadowbox hook claude-code\"},"
      "{\"type\":\"http\",\"url\":\"http://127.0.0.1:4000/hook/t\"},"
      "{\"type\":\"command\",\"command\":\"my-linter\"}]}]}}";
  std::string after = hooks::uninstall_hooks(settings);
  EXPECT_EQ(after.find("shadowbox"), std::string::npos) << after;
  EXPECT_EQ(after.find("127.0.0.1"), std::string::npos) << after;
  EXPECT_NE(after.find("my-linter"), std::string::npos) << after;
}

// A workspace with stores, and the programs a genuine hook may run.
class FindProjectHooksTest : public ::testing::Test {
 protected:
  FindProjectHooksTest() {
    fs::create_directories(ws_);
    fs::create_directories(other_ws_);
    write_file(program_, "#!/bin/sh\n", true);
    write_file(thin_, "#!/bin/sh\n", true);
    fs::create_symlink(program_, temp_ / "bin" / "link-to-shadowbox");
    fsnap::Store::open(store_, ws_, true);
    fsnap::Store::open(second_store_, ws_, true);
    fsnap::Store::open(other_store_, other_ws_, true);
  }

  static std::string command(const fs::path& program, const fs::path& store) {
    return program.string() + " --store " + store.string() + " hook claude-code";
  }
  void settings(const std::string& name, const std::string& text) const {
    write_file(ws_ / ".claude" / name, text);
  }
  hooks::ProjectHooksQuery query() const {
    hooks::ProjectHooksQuery q;
    q.workspace = ws_;
    q.project = ws_;
    q.programs = {program_, thin_};
    q.path = "/nonexistent:" + (temp_ / "bin").string();
    return q;
  }
  hooks::ProjectHooksFinding find(const std::string& event) const {
    return hooks::find_project_hooks(query(), event);
  }
  bool records(const std::string& event) const { return find(event).records_event; }

  testing_support::TempDir temp_;
  fs::path ws_ = temp_ / "ws";
  fs::path other_ws_ = temp_ / "other-ws";
  fs::path program_ = temp_ / "bin" / "shadowbox";
  fs::path thin_ = temp_ / "bin" / "shadowbox-hook";
  fs::path store_ = temp_ / "store";
  fs::path second_store_ = temp_ / "second-store";
  fs::path other_store_ = temp_ / "other-store";
};

TEST_F(FindProjectHooksTest, GenuineHooksRecordEveryEvent) {
  EXPECT_FALSE(records("PreToolUse")) << "no settings";
  EXPECT_EQ(find("PreToolUse").lookalike, "");
  for (const fs::path& program : {program_, thin_, temp_ / "bin" / "link-to-shadowbox"}) {
    SCOPED_TRACE(program.string());
    settings("settings.json", settings_with(command_hook(command(program, store_))));
    for (const char* event : kAllEvents) EXPECT_TRUE(records(event)) << event;
    EXPECT_EQ(find("PreToolUse").lookalike, "");
  }
  // Hooks merge across the two files: a tool's events may be split between them.
  settings("settings.json", settings_with(command_hook(command(program_, second_store_)),
                                          {"PreToolUse", "PostToolUse"}));
  settings("settings.local.json",
           settings_with(command_hook(command(thin_, second_store_)), {"PostToolUseFailure"}));
  EXPECT_TRUE(records("PreToolUse"));
  EXPECT_TRUE(records("PostToolUseFailure"));
  EXPECT_FALSE(records("Stop")) << "no project hook records a Stop";
}

TEST_F(FindProjectHooksTest, HooksThatWouldNotRecordDoNotCount) {
  auto expect_recorded_by_neither = [&](const std::string& why) {
    SCOPED_TRACE(why);
    for (const char* event : {"PreToolUse", "PostToolUse", "PostToolUseFailure"}) {
      hooks::ProjectHooksFinding f = find(event);
      EXPECT_FALSE(f.records_event) << event;
      EXPECT_NE(f.lookalike.find("look like shadowbox's"), std::string::npos) << f.lookalike;
    }
    fs::remove_all(ws_ / ".claude");
  };
  settings("settings.json",
           "{\"hooks\":{\"Notification\":[{\"hooks\":[{\"type\":\"command\","
           "\"command\":\"true # shadowbox hook claude-code\"}]}]}}");
  expect_recorded_by_neither("the marker in a comment");
  settings("settings.json", settings_with(command_hook("/bin/true --store " + store_.string() +
                                                       " hook claude-code")));
  expect_recorded_by_neither("another program");
  settings("settings.json", settings_with(command_hook(command(program_, other_store_))));
  expect_recorded_by_neither("another workspace's store");
  settings("settings.json",
           settings_with(command_hook(command(program_, temp_ / "no-such-store"))));
  expect_recorded_by_neither("no store");
  settings("settings.json", settings_with(command_hook(command(program_, program_))));
  expect_recorded_by_neither("a file for a store");
  // A store inside the workspace, crafted to name it (shadowbox never opens one there).
  fs::create_directories(ws_ / "inner" / "repo.git");
  write_file(ws_ / "inner" / "workspace", fs::canonical(ws_).string());
  settings("settings.json", settings_with(command_hook(command(program_, ws_ / "inner"))));
  expect_recorded_by_neither("a store inside the workspace");
  // Only some of a tool's events, or each into another store: no call would be whole.
  settings("settings.json", settings_with(command_hook(command(program_, store_)), {"PreToolUse"}));
  expect_recorded_by_neither("only the before");
  settings("settings.json",
           settings_with(command_hook(command(program_, store_)), {"PreToolUse", "PostToolUse"}));
  settings("settings.local.json",
           settings_with(command_hook(command(program_, second_store_)), {"PostToolUseFailure"}));
  expect_recorded_by_neither("the failure into another store");
  // Every hook switched off by the other file.
  settings("settings.json", settings_with(command_hook(command(program_, store_))));
  settings("settings.local.json", "{\"disableAllHooks\":true}");
  EXPECT_NE(find("PreToolUse").lookalike.find("switch every hook off"), std::string::npos);
  expect_recorded_by_neither("hooks switched off");
}

TEST_F(FindProjectHooksTest, SharedHooksCountWhenTheirShadowboxIsThisOne) {
  std::string shared = command_hook(hooks::kSharedHookCommand);
  std::vector<hooks::ProjectHookCommand> found =
      hooks::project_hook_commands(settings_with(shared), "PreToolUse");
  ASSERT_EQ(found.size(), 1u);
  EXPECT_EQ(found[0].program, "shadowbox");
  EXPECT_EQ(found[0].store, "") << "the workspace's own";
  settings("settings.json", settings_with(shared));
  // `shadowbox` on the hook's PATH is program_ (bin/shadowbox).
  for (const char* event : kAllEvents) EXPECT_TRUE(records(event)) << event;
  // Found first on the PATH: another program of that name.
  write_file(temp_ / "other" / "shadowbox", "#!/bin/sh\n", true);
  hooks::ProjectHooksQuery q = query();
  q.path = (temp_ / "other").string() + ":" + q.path;
  EXPECT_FALSE(hooks::find_project_hooks(q, "PreToolUse").records_event);
  EXPECT_NE(hooks::find_project_hooks(q, "PreToolUse").lookalike, "");
  // A relative entry is the project's own directory: a repository's file there is not
  // this shadowbox either.
  write_file(ws_ / "tools" / "shadowbox", "#!/bin/sh\n", true);
  q.path = "tools:" + query().path;
  EXPECT_FALSE(hooks::find_project_hooks(q, "PreToolUse").records_event);
  // No PATH: not told.
  q.path = "";
  EXPECT_FALSE(hooks::find_project_hooks(q, "PreToolUse").records_event);
  // A shared hook asking stands aside for local hooks only, never for itself.
  q = query();
  q.count_shared = false;
  EXPECT_FALSE(hooks::find_project_hooks(q, "PreToolUse").records_event);
  EXPECT_EQ(hooks::find_project_hooks(q, "PreToolUse").lookalike, "");
  settings("settings.local.json", settings_with(command_hook(command(thin_, store_))));
  EXPECT_TRUE(hooks::find_project_hooks(q, "PreToolUse").records_event);
  // Anything more or less than the exact words does not count.
  for (const char* command :
       {"shadowbox hook claude-code", "shadowbox hook claude-code --shared extra",
        "/usr/bin/shadowbox hook claude-code --shared", "shadowbox hook codex --shared",
        "shadowbox hook claude-code --shared; true"}) {
    EXPECT_TRUE(
        hooks::project_hook_commands(settings_with(command_hook(command)), "PreToolUse").empty())
        << command;
  }
}

TEST_F(FindProjectHooksTest, FromASubdirectoryOnlyTheFilesClaudeCodeRunsCount) {
  // Claude Code started in ws/docs runs the hooks of docs' settings and of the
  // workspace's settings.local.json — not of the workspace's settings.json.
  fs::create_directories(ws_ / "docs");
  hooks::ProjectHooksQuery q = query();
  q.project = ws_ / "docs";
  settings("settings.json", settings_with(command_hook(command(program_, store_))));
  EXPECT_FALSE(hooks::find_project_hooks(q, "PreToolUse").records_event);
  fs::remove(ws_ / ".claude" / "settings.json");
  settings("settings.local.json", settings_with(command_hook(command(program_, store_))));
  EXPECT_TRUE(hooks::find_project_hooks(q, "PreToolUse").records_event);
  fs::remove(ws_ / ".claude" / "settings.local.json");
  for (const char* name : {"settings.json", "settings.local.json"}) {
    SCOPED_TRACE(name);
    write_file(ws_ / "docs" / ".claude" / name,
               settings_with(command_hook(command(program_, store_))));
    EXPECT_TRUE(hooks::find_project_hooks(q, "PreToolUse").records_event);
    fs::remove(ws_ / "docs" / ".claude" / name);
  }
}

TEST_F(FindProjectHooksTest, SettingsThatAreNotFilesAreNotRead) {
  fs::create_directories(ws_ / ".claude");
  // A FIFO is not waited on (nobody writes it: a read would block for good).
  ASSERT_EQ(::mkfifo((ws_ / ".claude" / "settings.json").c_str(), 0600), 0);
  fs::create_symlink("/dev/zero", ws_ / ".claude" / "settings.local.json");
  EXPECT_FALSE(records("PreToolUse"));
  EXPECT_FALSE(hooks::read_project_settings(ws_ / ".claude" / "settings.json").has_value());
  fs::remove(ws_ / ".claude" / "settings.local.json");
  std::string big = settings_with(command_hook(command(program_, store_)));
  big.insert(1, "\"pad\":\"" + std::string(hooks::kMaxSettingsSize, 'x') + "\",");
  write_file(ws_ / ".claude" / "settings.local.json", big);
  EXPECT_FALSE(records("PreToolUse")) << "larger than a settings file";
}

TEST(StoreOfWorkspaceTest, IsStoreOfReadsWithoutChanging) {
  testing_support::TempDir temp;
  fs::create_directories(temp / "ws");
  fs::create_directories(temp / "elsewhere");
  fsnap::Store::open(temp / "store", temp / "ws", true);
  ::chmod((temp / "store").c_str(), 0755);
  EXPECT_TRUE(fsnap::Store::is_store_of(temp / "store", temp / "ws"));
  EXPECT_EQ(fs::status(temp / "store").permissions() & 0777, 0755) << "not tightened";
  EXPECT_FALSE(fsnap::Store::is_store_of(temp / "store", temp / "elsewhere"));
  EXPECT_FALSE(fsnap::Store::is_store_of(temp / "missing", temp / "ws"));
  EXPECT_FALSE(fs::exists(temp / "missing")) << "not created";
  EXPECT_FALSE(fsnap::Store::is_store_of(temp / "store", temp / "no-workspace"));
}

}  // namespace
