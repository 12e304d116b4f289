// What a hook for every project (`shadowbox hooks install --scope user`) makes of the
// shadowbox hooks a project's own Claude Code settings carry (.claude/settings.json,
// .claude/settings.local.json), and what a project's shared hook (`--scope shared`) makes
// of its local ones. A hook stands aside only for hooks that record the event themselves
// — the project's files are anyone's to write (a cloned repository ships them), so a
// hook that merely looks like shadowbox's does not count: only one exactly as `shadowbox
// hooks install` writes it, that runs this shadowbox into an existing store of the
// workspace (--scope project), or this shadowbox found on the hook's PATH into the
// workspace's own store (--scope shared).
#pragma once

#include <optional>
#include <string>
#include <vector>

#include <boost/filesystem/path.hpp>

namespace hooks {

// What the project's settings hold for one event.
struct ProjectHooksFinding {
  // The project's hooks record the event (for a tool event: every tool event, into one
  // store) into a store of the workspace: a hook for every project stands aside, so that
  // nothing is recorded twice.
  bool records_event = false;
  // When they do not, but hold hooks that look like shadowbox's: why those do not count
  // (for a warning); empty otherwise.
  std::string lookalike;
};

// What the project's hooks are compared with.
struct ProjectHooksQuery {
  boost::filesystem::path workspace;  // where the event is recorded
  // The directory Claude Code was started in ($CLAUDE_PROJECT_DIR): the workspace or a
  // directory inside it. Claude Code runs the hooks of its .claude/settings.json and
  // settings.local.json and of the workspace's settings.local.json (not of the
  // workspace's settings.json, from a subdirectory); only those count.
  boost::filesystem::path project;
  // The executables a genuine hook runs (this shadowbox, the shadowbox-hook thin client
  // beside it).
  std::vector<boost::filesystem::path> programs;
  // The hook's PATH, on which the shell finds a shared hook's `shadowbox` (relative
  // entries against project); a shared hook whose `shadowbox` is none of programs does
  // not count.
  std::string path;
  // Whether shared hooks count: not for a shared hook itself, which stands aside only
  // for the project's local ones.
  bool count_shared = true;
};

// The finding for event.
ProjectHooksFinding find_project_hooks(const ProjectHooksQuery& query, const std::string& event);

// The file a shell started in dir runs for the command name (no '/'), found on path (a
// $PATH: relative entries, and an empty one, against dir) as execvp finds it: the first
// executable regular file. nullopt if none, or if path is empty.
std::optional<boost::filesystem::path> program_on_path(const std::string& name,
                                                       const std::string& path,
                                                       const boost::filesystem::path& dir);

// The project settings file of workspace that sets disableAllHooks (Claude Code then
// runs no hook from the user's settings either — those of `shadowbox run` included), or
// nullopt if neither does.
std::optional<boost::filesystem::path> project_settings_disabling_hooks(
    const boost::filesystem::path& workspace);

}  // namespace hooks
