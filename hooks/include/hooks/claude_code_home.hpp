// What of Claude Code's HOME shadowbox works with: the parts a run preserves so that a
// session can be resumed (transcripts and todos; never credentials), the settings file
// that installs the hooks, and where a session's transcript lives.
//
// Thread-safety: pure functions.
#pragma once

#include <string>
#include <vector>

#include <boost/filesystem/path.hpp>

namespace hooks {

// The directories of a HOME that are preserved (relative to HOME).
std::vector<std::string> claude_code_preserved_parts();
// <home>/.claude/settings.json.
boost::filesystem::path claude_code_settings_file(const boost::filesystem::path& home);
// True if a preserved HOME tree's path is the transcript of session_id.
bool is_transcript_path(const std::string& path, const std::string& session_id);

// The directory under ~/.claude/projects/ that Claude Code keeps a working directory's
// sessions in: the path with every byte that is not an ASCII letter or digit as '-'.
std::string claude_code_project_dir(const std::string& cwd);

// Moves the sessions home keeps for working directory from to those of to (a run
// recovered on another path). Nothing when there are none, or when to has its own.
void rekey_claude_code_sessions(const boost::filesystem::path& home, const std::string& from,
                                const std::string& to);

}  // namespace hooks
