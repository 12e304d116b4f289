// The drawing of a run's moves through the run lifecycle machine for `shadowbox report`
// (inline SVG): each top-level state a column, the states inside a compound one stacked
// in its box, the states the run went through filled, the one it is in now outlined,
// and each move an arrow numbered in order (<g class="move" data-from data-to
// data-event>).
#pragma once

#include <string>
#include <vector>

#include "run_report_model.hpp"
#include "statekit/state_machine.hpp"

namespace cli {

// The <svg> element of graph with the run's moves and its current state ("" if none).
std::string lifecycle_svg(const statekit::MachineGraph& graph, const std::vector<ReportMove>& moves,
                          const std::string& current);

}  // namespace cli
