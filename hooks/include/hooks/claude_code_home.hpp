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

}  // namespace hooks
