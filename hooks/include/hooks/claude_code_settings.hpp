// Installing shadowbox's hooks into a Claude Code settings file, and taking them out
// again. Every other setting and every other hook in the file is kept as it was;
// shadowbox's entries are recognised by their command (`<binary> hook claude-code`) or,
// for HTTP hooks, by their URL (a loopback `/hook/<token>` address) — in every form
// they were ever installed in, which is no proof that they record anything: a project's
// hooks that a hook for every project stands aside for are read by
// project_hook_commands, which takes only the exact form `hooks install` writes.
#pragma once

#include <cstddef>
#include <optional>
#include <string>
#include <vector>

#include <boost/filesystem/path.hpp>

namespace hooks {

// The hook events shadowbox listens to. PostToolBatch and PermissionDenied say which calls the
// agent's own permissions refused (it sends them no PostToolUse).
inline constexpr const char* kHookEvents[] = {
    "PreToolUse",   "PostToolUse", "PostToolUseFailure", "PostToolBatch", "PermissionDenied",
    "SessionStart", "Stop",        "SessionEnd"};

// The events Claude Code serves no HTTP hook for: these keep a command hook.
inline constexpr const char* kCommandOnlyEvents[] = {"SessionStart"};

// Where shadowbox's HTTP hook entries post to (a run's own loopback server).
inline constexpr const char* kHookUrlPrefix = "http://127.0.0.1:";

// The settings JSON text with shadowbox's hook entries (running `command`) added, or
// replaced if present. Error kInvalidArgument if text is not a JSON object (empty text
// counts as {}).
std::string install_hooks(const std::string& settings_text, const std::string& command);
// The same with HTTP hook entries posting to url (which must be on kHookUrlPrefix),
// except for kCommandOnlyEvents, which run command.
std::string install_http_hooks(const std::string& settings_text, const std::string& url,
                               const std::string& command);
// The settings JSON text without shadowbox's hook entries (command or HTTP). Empty matcher groups
// and event lists that only held ours are removed too.
std::string uninstall_hooks(const std::string& settings_text);

// Whether the settings hold one of shadowbox's hook entries, in any form (false for text
// that is not a JSON object). Anyone can write an entry that looks like one.
bool has_shadowbox_hooks(const std::string& settings_text);
// The same for a file (false if it is missing or unreadable).
bool file_has_shadowbox_hooks(const boost::filesystem::path& file);

// The command `shadowbox hooks install --scope shared` writes into a project's shared
// settings: only what every clone resolves (shadowbox from PATH, the workspace's own
// store found by each); --shared tells the hook it is that one.
inline constexpr const char* kSharedHookCommand = "shadowbox hook claude-code --shared";

// A hook of a project's settings exactly as `shadowbox hooks install` writes it:
// `<program> --store <store> hook claude-code` (--scope project), or kSharedHookCommand
// (--scope shared).
struct ProjectHookCommand {
  // Absolute: shadowbox or the shadowbox-hook beside it, if genuine; for the shared
  // command, the name "shadowbox", found on the hook's PATH.
  std::string program;
  std::string store;  // absolute; empty for the shared command (the workspace's own)
};

// The hooks of the settings that Claude Code runs for event whatever the tool, and that
// are exactly of one of those forms: in a matcher group for every tool ("*", "" or no matcher)
// with no other key, {"type": "command", "command": ..., "timeout": 600 or more} and no
// other key, the command's words plain or quoted (nothing the shell would expand or
// interpret). Whether program and store are shadowbox's is for the caller to check.
// None if the settings disable all hooks or are not a JSON object.
std::vector<ProjectHookCommand> project_hook_commands(const std::string& settings_text,
                                                      const std::string& event);
// Whether the settings switch every hook off (`disableAllHooks`, any value but false).
bool disables_all_hooks(const std::string& settings_text);

// The largest settings file read_project_settings reads.
inline constexpr std::size_t kMaxSettingsSize = 4u << 20;
// The text of a project's settings file: nullopt if it is missing, unreadable, not a
// regular file (a FIFO is not waited on) or larger than kMaxSettingsSize.
std::optional<std::string> read_project_settings(const boost::filesystem::path& file);

// Reads, changes and atomically rewrites a settings file (creating it and its
// directory for install). Error naming the file; a file that is not valid JSON is
// left unchanged.
void install_hooks_in_file(const boost::filesystem::path& file, const std::string& command);
void install_http_hooks_in_file(const boost::filesystem::path& file, const std::string& url,
                                const std::string& command);
// Returns false if the file does not exist (nothing to do).
bool uninstall_hooks_in_file(const boost::filesystem::path& file);

}  // namespace hooks
