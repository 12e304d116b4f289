// What a hook installed for every project (`shadowbox hooks install --scope user`) makes
// of the shadowbox hooks a project's own Claude Code settings carry
// (.claude/settings.json, .claude/settings.local.json). It stands aside only for hooks
// that record the event themselves — the project's files are anyone's to write (a
// cloned repository ships them), so a hook that merely looks like shadowbox's does not
// count: only one exactly as `shadowbox hooks install --scope project` writes it, that
// runs this shadowbox into an existing store of the workspace.
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

// The finding for event in workspace. programs: the executables a genuine hook runs
// (this shadowbox, the shadowbox-hook thin client beside it).
ProjectHooksFinding find_project_hooks(const boost::filesystem::path& workspace,
                                       const std::string& event,
                                       const std::vector<boost::filesystem::path>& programs);

// The project settings file of workspace that sets disableAllHooks (Claude Code then
// runs no hook from the user's settings either — those of `shadowbox run` included), or
// nullopt if neither does.
std::optional<boost::filesystem::path> project_settings_disabling_hooks(
    const boost::filesystem::path& workspace);

}  // namespace hooks
