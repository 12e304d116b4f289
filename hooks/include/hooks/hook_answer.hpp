// What shadowbox answers an agent's hook event: first what it decided, in no agent's
// protocol (HookVerdict), then that decision said in the agent's own protocol
// (HookAnswer: exit status, stdout, stderr), which each agent's adapter renders
// (agent_adapter.hpp).
//
// Thread-safety: plain values.
#pragma once

#include <string>

namespace hooks {

// What the core decided about one event.
struct HookVerdict {
  // 0: the event was recorded; 1: it could not be read (a non-blocking warning); 2: it
  // could not be recorded (blocking: a before-tool call must not run).
  int exit_code = 0;
  std::string deny;     // a before-tool event: the call is denied, with this reason
  std::string stop;     // the agent is to stop (its turn ends), with this reason
  std::string context;  // an after-tool event: what the model is told about the call
  // exit_code 1 or 2: what went wrong; 0: warnings for the person running the agent.
  std::string message;
  // What the person running the agent is told, in the agent's own place for it (Claude
  // Code's, Codex's and Gemini's systemMessage), never in the model's context.
  std::string notice;
};

// The verdict as the agent reads it.
struct HookAnswer {
  int exit_code = 0;        // 0 proceed, 2 blocking error (stderr to the agent), else warning
  std::string stdout_json;  // hook-specific output, or empty
  std::string stderr_text;  // shown to the agent on exit 2, to the user otherwise
  std::string event;        // the event's name in the core's vocabulary, if it had one
};

}  // namespace hooks
