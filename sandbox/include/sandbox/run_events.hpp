// The events of a run, published on typed channels (statekit/event_channel.hpp) as they
// happen: the agent's hook events, the boundaries of its tool calls, and containment's
// SafetyEvents. ToolTransactions publishes the tool and safety events once each
// boundary is recorded; a hook handler publishes the hook events it answers. Anyone
// inside the process may subscribe — `shadowbox run` tells the user of every
// containment decision as it is made — and replay the newest ones.
//
//   RunEvents& events = run.transactions().events();
//   Subscription s = (events.tools | events.safety).subscribe(
//       [](const std::variant<RunEvents::ToolCallEvent, policy::SafetyEvent>& e, const Delivery& d)
//       {
//         ...
//       });
//
// Subscribers run on the thread that recorded the boundary, after it was recorded and
// before the call returns; they must not call back into the run's transactions. One that
// throws is warned about on stderr and changes nothing of the call: the boundary is
// recorded, and a subscriber cannot break a tool call.
#pragma once

#include <string>

#include "policy/safety_event.hpp"
#include "statekit/event_channel.hpp"

namespace sandbox {

// The channels of one run.
struct RunEvents {
  // One hook event an agent sent.
  struct HookEvent {
    std::string agent;  // "claude-code"
    std::string name;   // PreToolUse, SessionStart, ...
    std::string session_id;
    std::string tool_use_id;  // tool events only
  };

  // One boundary of a tool call.
  struct ToolCallEvent {
    std::string call_id;
    std::string tool;
    std::string phase;  // "begin", "denied", "succeeded", "failed"
    std::string summary;
  };

  statekit::Channel<HookEvent> hooks{"hooks"};
  statekit::Channel<ToolCallEvent> tools{"tools"};
  statekit::Channel<policy::SafetyEvent> safety{"safety"};
};

}  // namespace sandbox
