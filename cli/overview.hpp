// The fixed text of shadowbox's documentation, in one place: what it is, the REF syntax,
// the exit statuses, the environment and files it reads. The overview (`shadowbox
// --help`) and the manual page (man_page.cpp) are both made from it, the command table
// and the global options, so neither says what the other does not.
#pragma once

#include <ostream>
#include <string>
#include <vector>

namespace cli {

// The line of the manual page's NAME section.
inline constexpr const char* kTagline =
    "make every step of a coding agent atomic, reversible and inspectable";
// What shadowbox does, the overview's first paragraph.
inline constexpr const char* kDescription =
    "Checkpoints a workspace into a shadow git repository outside it, so every step can be "
    "inspected with plain git and undone exactly.";
// What a REF operand or option value may be.
inline constexpr const char* kRefSyntax =
    "a checkpoint id or commit id (or a unique prefix of 4+ hex digits), a tag, "
    "pre:<tool_call_id>, post:<tool_call_id> (the workspace as the call left it), "
    "failed:<tool_call_id> (the same, for a call that failed: kept as a checkpoint of its own "
    "when the call was rolled back), or run:<run> for a run's newest. `restore REF` always "
    "makes the workspace exactly REF (`restore REF -- PATH...`: those paths only, the session "
    "as it is); the failure of a tool call is `rollback CALL_ID`; `undo CALL_ID` reverses one "
    "call and keeps what came after.";
// The exit statuses of every command.
inline constexpr const char* kExitStatus =
    "0 success, 1 error, 2 usage error, 141 output whose reader stopped reading (as | head); "
    "run, resume, rewind and recover: the agent's status, or 3 when a limit (or abort) "
    "stopped it";

// A name and what it is: an environment variable or a file of the manual page.
struct NamedText {
  const char* name;
  const char* text;
};

// The environment variables shadowbox reads.
const std::vector<NamedText>& environment_variables();
// The files and directories shadowbox reads and writes.
const std::vector<NamedText>& documented_files();

// "shadowbox [--workspace DIR] [--store DIR] [--config FILE] [--json] COMMAND [ARGS]".
std::string overview_synopsis();

// The overview: usage, what shadowbox is, every command's synopsis and summary, the REF
// syntax, the global options and the exit statuses (`shadowbox --help`).
void print_overview(std::ostream& out);

}  // namespace cli
