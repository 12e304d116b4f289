// The table of `shadowbox runs`: by default what a person looks for first — each run,
// how it ended (and the limit that stopped it), its calls, failures and cost, when it
// started — within kTableWidth columns; wide, every column, nothing cut. The runs come
// in the order given (hooks::list_runs: oldest first, so the newest is the last line).
#pragma once

#include <iosfwd>
#include <vector>

#include "hooks/run_list.hpp"

namespace cli {

// Writes the table of runs (the header alone when there are none).
void print_runs_table(std::ostream& out, const std::vector<hooks::RunInfo>& runs, bool wide);

}  // namespace cli
