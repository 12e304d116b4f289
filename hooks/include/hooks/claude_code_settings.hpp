// Installing shadowbox's hooks into a Claude Code settings file, and taking them out
// again. Every other setting and every other hook in the file is kept as it was;
// shadowbox's entries are recognised by their command (`<binary> hook claude-code`).
#pragma once

#include <string>

#include <boost/filesystem/path.hpp>

namespace hooks {

// The hook events shadowbox listens to.
inline constexpr const char* kHookEvents[] = {"PreToolUse",   "PostToolUse", "PostToolUseFailure",
                                              "SessionStart", "Stop",        "SessionEnd"};

// The settings JSON text with shadowbox's hook entries (running `command`) added, or
// replaced if present. Throws std::invalid_argument if text is not a JSON object
// (empty text counts as {}).
std::string install_hooks(const std::string& settings_text, const std::string& command);
// The settings JSON text without shadowbox's hook entries. Empty matcher groups and
// event lists that only held ours are removed too.
std::string uninstall_hooks(const std::string& settings_text);

// Reads, changes and atomically rewrites a settings file (creating it and its
// directory for install). Throws std::runtime_error naming the file.
void install_hooks_in_file(const boost::filesystem::path& file, const std::string& command);
// Returns false if the file does not exist (nothing to do).
bool uninstall_hooks_in_file(const boost::filesystem::path& file);

}  // namespace hooks
