// The middleware LedgerRun installs (statekit/middleware.hpp): every ToolInvoked has its
// parameters and result redacted (config run.secrets and well-known credential shapes,
// runs/redaction.hpp) before it reaches a slice, so no session tree of a run holds them.
#pragma once

#include <string>
#include <vector>

#include "statekit/middleware.hpp"

namespace runs {

// ToolInvoked events with params and result_summary passed through redact(secrets).
statekit::Middleware redacting_middleware(std::vector<std::string> secrets);

}  // namespace runs
