#include "hooks/run_slice_types.hpp"

#include "hooks/agent_session_state.hpp"
#include "hooks/agent_spend.hpp"
#include "runs/run_lifecycle.hpp"
#include "sandbox/builtin_slices.hpp"

namespace hooks {

void register_agent_run_slice_types() {
  sandbox::register_builtin_slice_types();
  runs::register_run_slice_types();
  register_agent_session_slice_type();
  register_agent_spend_slice_type();
}

}  // namespace hooks
