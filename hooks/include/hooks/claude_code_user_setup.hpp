// The user's own Claude Code setup, carried into an agent run's ephemeral HOME: where it
// is (HOME, or $CLAUDE_CONFIG_DIR), copying the configured paths (config run.home.carry)
// into the run's HOME, and removing the copies when the run ends.
//
// Of ~/.claude.json only the "projects" entries of the workspace and of the directories
// above it are carried: trust, allowed tools and MCP servers of this project come along,
// other projects' history does not. A settings.json that is not a JSON object is not
// carried (shadowbox's hooks could not be merged into it).
//
// Thread-safety: plain functions of the filesystem.
#pragma once

#include <string>
#include <vector>

#include <boost/filesystem/path.hpp>

namespace hooks {

// Where a user's Claude Code setup lives.
struct UserClaudeSetup {
  boost::filesystem::path home;        // the user's HOME
  boost::filesystem::path config_dir;  // $CLAUDE_CONFIG_DIR, or empty for <home>/.claude

  // This process's user: $HOME (or the password database) and $CLAUDE_CONFIG_DIR.
  static UserClaudeSetup from_environment();

  // Where carried (a path relative to HOME, as run.home.carry has it) is in this setup:
  // .claude.json and .claude/... move to $CLAUDE_CONFIG_DIR when it is set.
  boost::filesystem::path source_of(const std::string& carried) const;
  // The OAuth login (.claude/.credentials.json) of this setup.
  boost::filesystem::path credentials_file() const { return source_of(kCredentialsPath); }

  static constexpr const char* kCredentialsPath = ".claude/.credentials.json";
};

// What carry_user_setup did.
struct CarriedSetup {
  std::vector<std::string> carried;  // the paths copied (relative to the run's HOME)
  std::vector<std::string> skipped;  // what was left out, each with why ("x: not valid JSON")
};

// Copies each of carry that exists in user into run_home (files, or directories with
// what they hold, symbolic links followed; permission bits kept). workspace selects the
// projects entries of .claude.json. Never changes the user's files. What cannot be
// read or copied is left out and said in skipped: the run goes on without it.
CarriedSetup carry_user_setup(const UserClaudeSetup& user, const std::vector<std::string>& carry,
                              const boost::filesystem::path& run_home,
                              const boost::filesystem::path& workspace);

// Removes from run_home what carry_user_setup carried into it, and what Claude Code
// derived from it there (backups of .claude.json). Never throws; returns the paths it
// could not remove.
std::vector<std::string> remove_carried_setup(const boost::filesystem::path& run_home,
                                              const std::vector<std::string>& carried);

// The text of a ~/.claude.json with only the projects entries of workspace (given as
// it is and as its canonical path) and of the directories above it. Error
// kInvalidArgument if text is not a JSON object.
std::string claude_json_for_workspace(const std::string& text,
                                      const std::vector<std::string>& workspace_paths);

}  // namespace hooks
