// What `run`, `resume`, `rewind` and `fleet recover` say on stderr when the agent has
// exited: the run, what its calls came to, what it spent, a limit that stopped it, and
// the shadowbox commands that inspect it and go on with it. The agent's own "resume
// with ..." hint names a session that lives in the run's HOME, so this is the one that
// works.
#pragma once

#include <iosfwd>
#include <string>

#include "hooks/agent_run.hpp"
#include "hooks/run_list.hpp"

namespace cli {

// The summary of run, as describe_run found it after the agent's end (result).
void print_run_summary(std::ostream& out, const hooks::RunInfo& info,
                       const hooks::AgentRunResult& result);

}  // namespace cli
