// Cutting a Claude Code conversation before a tool call (`shadowbox rewind`): the
// session's transcript in a HOME rebuilt for the new run is truncated before the
// assistant turn that made the call, and Claude Code is told where it now ends.
//
// Thread-safety: functions of the files they are given.
#pragma once

#include <cstddef>
#include <string>

#include <boost/filesystem/path.hpp>

#include "hooks/agent_adapter.hpp"

namespace hooks {

// Where a Claude Code transcript is cut.
struct TranscriptCut {
  boost::filesystem::path transcript;  // the session's transcript in the HOME
  std::string last_kept_uuid;          // the message the conversation now ends with
  std::size_t kept_lines = 0;          // lines of the transcript kept
  std::size_t dropped_lines = 0;       // lines of the call's turn and everything after
};

// Truncates session point.session_id's transcript in home before the assistant turn
// (every line of the API message) holding the tool_use point.tool_call_id; the file is
// replaced whole, never left half-written. Error kNotFound when home has no transcript
// of the session or it holds no such call, kCorrupt for a line that is not a JSON
// object or a turn without the message it follows.
TranscriptCut cut_claude_code_transcript(const boost::filesystem::path& home,
                                         const SessionCutPoint& point);

}  // namespace hooks
