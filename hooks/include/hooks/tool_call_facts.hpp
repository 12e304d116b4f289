// What a tool event says of its call beyond the tool's name: the workspace files an
// editing tool names — so that a rollback of it, or of a call beside it, touches only
// what it can have changed —, a failed shell call's command and exit status (what
// rollback.keep_failures rules match), and its input in one canonical form (what the
// repeat guard, policy.repeat, compares).
//
// Thread-safety: pure functions.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include <boost/filesystem/path.hpp>

#include "hooks/agent_event.hpp"
#include "sandbox/tool_transactions.hpp"

namespace hooks {

// The paths (relative to workspace, a real path) that the call of event can change,
// when its tool names them: Claude Code's Edit, Write, MultiEdit (file_path) and
// NotebookEdit (notebook_path), Gemini CLI's write_file and replace (file_path), Codex's
// apply_patch (the files its patch adds, updates, deletes or moves to). A path is taken
// as written and, when it leads through symlinks, as they resolve; one outside the
// workspace is left out. nullopt for any other tool, or an input without its path.
std::optional<std::vector<std::string>> named_paths(const AgentEvent& event,
                                                    const boost::filesystem::path& workspace);

// The command of a shell call (Bash, run_shell_command, shell) and the exit status its
// failure reports ("Exit code N", "Exit Code: N"), where the event has them.
sandbox::FailureDetails failure_details(const AgentEvent& event);

// The event's tool input as compact JSON with every object's keys sorted, so that two
// inputs that differ only in key order or spacing are the same text; "" when the event
// has no input.
std::string canonical_input(const AgentEvent& event);

}  // namespace hooks
