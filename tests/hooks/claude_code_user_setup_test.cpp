// Carrying the user's Claude Code setup into a run's HOME: what is copied (and what not),
// ~/.claude.json narrowed to this project, $CLAUDE_CONFIG_DIR, symbolic links, files
// that cannot be carried, the user's files left as they were, and the copies removed
// again at the run's end.
#include <sys/stat.h>

#include <Poco/JSON/Object.h>
#include <Poco/JSON/Parser.h>

#include <gtest/gtest.h>
#include <boost/filesystem.hpp>

#include "hooks/agent_home.hpp"
#include "hooks/claude_code_user_setup.hpp"
#include "runs/run_settings.hpp"
#include "test_support.hpp"

namespace {

namespace fs = boost::filesystem;
using testing_support::read_file;
using testing_support::write_file;

class UserSetupTest : public ::testing::Test {
 protected:
  UserSetupTest() {
    fs::create_directories(ws_);
    fs::create_directories(run_home_);
    user_.home = user_home_;
  }

  // A user's setup as a real one looks: configuration, and their own session data.
  void typical_user_setup() {
    write_file(user_home_ / ".claude.json", R"({
  "hasCompletedOnboarding": true,
  "theme": "dark",
  "customApiKeyResponses": {"approved": ["0123456789abcdefghij"], "rejected": []},
  "mcpServers": {"docs": {"type": "http", "url": "http://127.0.0.1:9/mcp"}},
  "projects": {
    ")" + ws_.string() + R"(": {"hasTrustDialogAccepted": true, "allowedTools": ["Bash"]},
    ")" + temp_.path().string() + R"(": {"hasTrustDialogAccepted": true},
    "/elsewhere/project": {"history": [{"display": "OTHER-PROJECT-PROMPT"}]},
    ")" + ws_.string() + R"(-sibling": {"history": []}
  }
})");
    write_file(user_home_ / ".claude/settings.json",
               R"js({"model": "opus", "permissions": {"allow": ["Bash(ls:*)"]}})js");
    write_file(user_home_ / ".claude/CLAUDE.md", "Always answer in haiku.\n");
    write_file(user_home_ / ".claude/agents/reviewer.md", "---\nname: reviewer\n---\n");
    write_file(user_home_ / ".claude/commands/ship.md", "Ship it.\n");
    write_file(user_home_ / ".claude/skills/pdf/SKILL.md", "PDF skill\n");
    write_file(user_home_ / ".claude/plugins/cache/p/run.sh", "#!/bin/sh\n");
    fs::permissions(user_home_ / ".claude/plugins/cache/p/run.sh",
                    fs::owner_all | fs::group_read | fs::others_read);
    write_file(user_home_ / ".claude/.credentials.json", R"({"claudeAiOauth":{}})");
    write_file(user_home_ / ".claude/history.jsonl", "{\"display\":\"OTHER-PROJECT-PROMPT\"}\n");
    write_file(user_home_ / ".claude/projects/-elsewhere-project/s.jsonl", "{}\n");
  }

  hooks::CarriedSetup carry() {
    return hooks::carry_user_setup(user_, runs::HomeSettings{}.carry, run_home_, ws_);
  }
  static Poco::JSON::Object::Ptr json(const std::string& text) {
    Poco::JSON::Parser parser;
    return parser.parse(text).extract<Poco::JSON::Object::Ptr>();
  }

  testing_support::TempDir temp_;
  fs::path ws_ = temp_ / "ws";
  fs::path user_home_ = temp_ / "user";
  fs::path run_home_ = temp_ / "store/runs/r1/home";
  hooks::UserClaudeSetup user_;
};

TEST_F(UserSetupTest, TheConfigurationComesAlongAndNothingElse) {
  typical_user_setup();
  testing_support::Manifest before = testing_support::take_manifest(user_home_);
  hooks::CarriedSetup carried = carry();
  EXPECT_TRUE(carried.skipped.empty());
  EXPECT_EQ(carried.carried,
            (std::vector<std::string>{".claude.json", ".claude/settings.json", ".claude/CLAUDE.md",
                                      ".claude/agents", ".claude/commands", ".claude/skills",
                                      ".claude/plugins"}))
      << "what the user does not have is not carried";
  for (const char* same : {".claude/settings.json", ".claude/CLAUDE.md",
                           ".claude/agents/reviewer.md", ".claude/commands/ship.md",
                           ".claude/skills/pdf/SKILL.md", ".claude/plugins/cache/p/run.sh"}) {
    EXPECT_EQ(read_file(run_home_ / same), read_file(user_home_ / same)) << same;
  }
  struct stat st {};
  ASSERT_EQ(::stat((run_home_ / ".claude/plugins/cache/p/run.sh").c_str(), &st), 0);
  EXPECT_TRUE(st.st_mode & S_IXUSR) << "a plugin's script stays executable";
  // Session data, prompt history and the login are not carried.
  EXPECT_FALSE(fs::exists(run_home_ / ".claude/.credentials.json"));
  EXPECT_FALSE(fs::exists(run_home_ / ".claude/history.jsonl"));
  EXPECT_FALSE(fs::exists(run_home_ / ".claude/projects"));
  // .claude.json: everything, but of the projects only this one and those above it.
  Poco::JSON::Object::Ptr config = json(read_file(run_home_ / ".claude.json"));
  EXPECT_TRUE(config->getValue<bool>("hasCompletedOnboarding"));
  EXPECT_TRUE(config->has("mcpServers"));
  EXPECT_TRUE(config->has("customApiKeyResponses"));
  Poco::JSON::Object::Ptr projects = config->getObject("projects");
  std::vector<std::string> kept = projects->getNames();
  std::sort(kept.begin(), kept.end());
  EXPECT_EQ(kept, (std::vector<std::string>{temp_.path().string(), ws_.string()}));
  EXPECT_EQ(read_file(run_home_ / ".claude.json").find("OTHER-PROJECT-PROMPT"), std::string::npos);
  // The user's files are as they were.
  EXPECT_EQ(
      testing_support::describe_difference(before, testing_support::take_manifest(user_home_)), "");
}

TEST_F(UserSetupTest, ClaudeConfigDirIsWhereTheSetupIsWhenSet) {
  fs::path config_dir = temp_ / "elsewhere";
  write_file(config_dir / ".claude.json", R"({"hasCompletedOnboarding": true})");
  write_file(config_dir / "CLAUDE.md", "from the config dir\n");
  write_file(user_home_ / ".claude/CLAUDE.md", "from HOME\n");
  write_file(user_home_ / ".gitconfig", "[user]\n\tname = U\n");
  user_.config_dir = config_dir;
  EXPECT_EQ(user_.credentials_file(), config_dir / ".credentials.json");
  hooks::carry_user_setup(user_, {".claude.json", ".claude/CLAUDE.md", ".gitconfig"}, run_home_,
                          ws_);
  EXPECT_EQ(read_file(run_home_ / ".claude/CLAUDE.md"), "from the config dir\n");
  EXPECT_TRUE(
      json(read_file(run_home_ / ".claude.json"))->getValue<bool>("hasCompletedOnboarding"));
  EXPECT_EQ(read_file(run_home_ / ".gitconfig"), "[user]\n\tname = U\n") << "other paths: HOME";
}

TEST_F(UserSetupTest, FilesThatCannotBeUsedAreLeftOutWithAReason) {
  write_file(user_home_ / ".claude/settings.json", "{\"model\": ");
  write_file(user_home_ / ".claude.json", "[1, 2]");
  write_file(user_home_ / ".claude/CLAUDE.md", "fine\n");
  hooks::CarriedSetup carried = carry();
  EXPECT_EQ(carried.carried, (std::vector<std::string>{".claude/CLAUDE.md"}));
  ASSERT_EQ(carried.skipped.size(), 2u);
  EXPECT_NE(carried.skipped[0].find(".claude.json: .claude.json is not a JSON object"),
            std::string::npos)
      << carried.skipped[0];
  EXPECT_NE(carried.skipped[1].find("settings.json is not valid JSON"), std::string::npos)
      << carried.skipped[1];
  EXPECT_FALSE(fs::exists(run_home_ / ".claude/settings.json"));
  EXPECT_FALSE(fs::exists(run_home_ / ".claude.json"));
}

TEST_F(UserSetupTest, SettingsThatWouldSwitchOffShadowboxsHooksLoseThatKey) {
  write_file(user_home_ / ".claude/settings.json", R"({"disableAllHooks": true, "model": "x"})");
  hooks::CarriedSetup carried = carry();
  ASSERT_EQ(carried.skipped.size(), 1u);
  EXPECT_NE(carried.skipped[0].find("disableAllHooks"), std::string::npos);
  Poco::JSON::Object::Ptr settings = json(read_file(run_home_ / ".claude/settings.json"));
  EXPECT_FALSE(settings->has("disableAllHooks"));
  EXPECT_EQ(settings->getValue<std::string>("model"), "x");
}

TEST_F(UserSetupTest, CarriedPluginsAreLoadedFromTheCopy) {
  fs::path plugins = user_home_ / ".claude/plugins";
  write_file(plugins / "installed_plugins.json",
             R"({"plugins": {"p@m": [{"installPath": ")" + (plugins / "cache/m/p/1.0").string() +
                 R"("}]}, "other": ")" + plugins.string() + R"(-not-this"})");
  write_file(plugins / "known_marketplaces.json",
             R"({"m": {"installLocation": ")" + (plugins / "marketplaces/m").string() + R"("}})");
  carry();
  fs::path copy = run_home_ / ".claude/plugins";
  EXPECT_EQ(read_file(copy / "installed_plugins.json"),
            R"({"plugins": {"p@m": [{"installPath": ")" + (copy / "cache/m/p/1.0").string() +
                R"("}]}, "other": ")" + plugins.string() + R"(-not-this"})");
  EXPECT_EQ(read_file(copy / "known_marketplaces.json"),
            R"({"m": {"installLocation": ")" + (copy / "marketplaces/m").string() + R"("}})");
  EXPECT_NE(read_file(plugins / "known_marketplaces.json").find(plugins.string()),
            std::string::npos)
      << "the user's registry is as it was";
}

TEST_F(UserSetupTest, WhatCannotBeCopiedIsLeftOutAndTheRestCarried) {
  write_file(user_home_ / ".claude/agents/locked/a.md", "agent a\n");
  write_file(user_home_ / ".claude/agents/open/b.md", "agent b\n");
  write_file(user_home_ / ".claude/CLAUDE.md", "memory\n");
  fs::create_directories(run_home_ / ".claude/agents/locked");
  if (!testing_support::lock_directory(run_home_ / ".claude/agents/locked")) {
    GTEST_SKIP() << "this filesystem cannot make a directory unwritable";
  }
  hooks::CarriedSetup carried = carry();
  testing_support::unlock_directory(run_home_ / ".claude/agents/locked");
  ASSERT_EQ(carried.skipped.size(), 1u);
  EXPECT_NE(carried.skipped[0].find(".claude/agents: "), std::string::npos) << carried.skipped[0];
  EXPECT_EQ(read_file(run_home_ / ".claude/agents/open/b.md"), "agent b\n")
      << "the entries beside the one that failed are copied";
  EXPECT_EQ(read_file(run_home_ / ".claude/CLAUDE.md"), "memory\n") << "the rest is carried";
  EXPECT_NE(std::find(carried.carried.begin(), carried.carried.end(), ".claude/agents"),
            carried.carried.end())
      << "what was copied of it is removed at the end with the rest";
}

TEST_F(UserSetupTest, SymbolicLinksAreFollowedAndDanglingOnesLeftOut) {
  write_file(temp_ / "dotfiles/CLAUDE.md", "linked memory\n");
  write_file(temp_ / "dotfiles/agents/a.md", "agent a\n");
  fs::create_directories(user_home_ / ".claude");
  fs::create_symlink(temp_ / "dotfiles/CLAUDE.md", user_home_ / ".claude/CLAUDE.md");
  fs::create_directory_symlink(temp_ / "dotfiles/agents", user_home_ / ".claude/agents");
  fs::create_symlink(temp_ / "nowhere", temp_ / "dotfiles/agents/gone.md");
  fs::create_directory_symlink(temp_ / "dotfiles/agents", temp_ / "dotfiles/agents/loop");
  carry();
  EXPECT_FALSE(fs::is_symlink(run_home_ / ".claude/CLAUDE.md"));
  EXPECT_EQ(read_file(run_home_ / ".claude/CLAUDE.md"), "linked memory\n");
  EXPECT_EQ(read_file(run_home_ / ".claude/agents/a.md"), "agent a\n");
  EXPECT_FALSE(fs::exists(fs::symlink_status(run_home_ / ".claude/agents/gone.md")));
  EXPECT_FALSE(fs::exists(run_home_ / ".claude/agents/loop")) << "a loop is not followed";
  // Changing the copy leaves the linked original alone.
  write_file(run_home_ / ".claude/agents/a.md", "changed in the run\n");
  EXPECT_EQ(read_file(temp_ / "dotfiles/agents/a.md"), "agent a\n");
}

TEST_F(UserSetupTest, TheCopiesGoWhenTheRunEndsAndTheSessionDataStays) {
  typical_user_setup();
  hooks::CarriedSetup carried = carry();
  write_file(run_home_ / ".claude/projects/-ws/s1.jsonl", "{}\n");
  write_file(run_home_ / ".claude/backups/.claude.json.backup.1", "{}");
  EXPECT_TRUE(hooks::remove_carried_setup(run_home_, carried.carried).empty());
  for (const std::string& path : carried.carried) {
    EXPECT_FALSE(fs::exists(run_home_ / path)) << path;
  }
  EXPECT_FALSE(fs::exists(run_home_ / ".claude/backups")) << "they hold .claude.json";
  EXPECT_TRUE(fs::exists(run_home_ / ".claude/projects/-ws/s1.jsonl"));
  EXPECT_TRUE(fs::exists(user_home_ / ".claude/settings.json"));
}

TEST_F(UserSetupTest, AnAgentHomeIsPrivateAndIsolatedMeansEmpty) {
  typical_user_setup();
  runs::HomeSettings isolated;
  isolated.isolate = true;
  {
    hooks::AgentHome home(run_home_, user_, isolated, ws_, nullptr);
    EXPECT_TRUE(home.carried().empty());
    EXPECT_TRUE(fs::is_empty(run_home_));
    EXPECT_EQ(fs::status(run_home_).permissions(), fs::owner_all);
    // A /login inside the isolated run does not outlive it either.
    write_file(run_home_ / ".claude/.credentials.json", R"({"claudeAiOauth":{}})");
    write_file(run_home_ / ".claude/.credentials.json.tmp.1a2b", "{}");
    home.finish();
    EXPECT_FALSE(fs::exists(run_home_ / ".claude/.credentials.json"));
    EXPECT_FALSE(fs::exists(run_home_ / ".claude/.credentials.json.tmp.1a2b"));
  }
  {
    hooks::AgentHome home(run_home_, user_, runs::HomeSettings{}, ws_, nullptr);
    EXPECT_TRUE(fs::exists(run_home_ / ".claude/settings.json"));
    EXPECT_EQ(read_file(run_home_ / ".claude/.credentials.json"),
              read_file(user_home_ / ".claude/.credentials.json"))
        << "the login is there while the run lasts";
    home.finish();
    EXPECT_FALSE(fs::exists(run_home_ / ".claude/settings.json"));
    EXPECT_FALSE(fs::exists(run_home_ / ".claude/.credentials.json"));
  }
}

}  // namespace
