// What the shell completions offer for a RUN, a REF or a CALL_ID: `shadowbox completion
// --words runs|refs|calls`, which the scripts of completion_scripts.hpp run as the user
// types. Read from the store found as every command finds it (--workspace, --store on
// the line honoured), without reading the config or writing anything.
#pragma once

#include <string>
#include <vector>

#include "arguments.hpp"

namespace cli {

// How many of the newest checkpoints refs and calls are taken from: enough for what a
// person types, few enough to answer while they wait.
inline constexpr std::size_t kCompletionCheckpoints = 300;

// kind "runs": every run of the store, sorted; "refs": pre:<id> and post:<id> of the
// newest calls, the tags of the newest checkpoints, run:<run> of every run; "calls":
// the newest tool call ids (newest first). Only words a shell takes as they are
// (letters, digits and ._:+@%,/-): what a store written by someone else holds is never
// run by the shell that completes it. Empty, and no error, when there is no store or
// it cannot be read.
std::vector<std::string> completion_words(const GlobalOptions& options, const std::string& kind);

}  // namespace cli
