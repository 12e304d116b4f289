// ToolRunner — every tool call as a transaction (EXECUTION_STATE.md, Tool Transaction
// Semantics): a pre-tool composite snapshot, the handler, then commit or roll back:
//
//   handler throws                 -> rollback, failed ToolResult with the message
//   ToolResult.success == false    -> rollback, the result as returned
//   ToolValidationError            -> rollback, failed ToolResult
//   VisibilityExpansionRequired    -> rollback, re-thrown for the caller to retry
//   deadline exceeded              -> rollback, PromptEvaluationError
//
// Every call ends with a checkpoint of its own — post_tool after a success, phase
// checkpoint after a rollback — so the newest checkpoint is always the current state.
// Every call is recorded in the state's CheckpointStore (if any) and as a ToolInvoked
// event in the session's LOG slice (before the ending checkpoint, which includes it). Telemetry
// failures (the ToolInvoked dispatch, a publish callback) are reported on stderr and never roll
// anything back.
//
// Thread-safety: one call at a time per ExecutionState.
#pragma once

#include <functional>
#include <map>
#include <optional>
#include <stdexcept>
#include <string>

#include "sandbox/builtin_slices.hpp"
#include "sandbox/execution_state.hpp"

namespace sandbox {

// A tool call as the model made it.
struct ToolCall {
  std::string id;
  std::string name;
  std::string params;  // JSON text
};

// What a tool returns.
struct ToolResult {
  bool success = true;
  std::string message;  // summary shown to the model
  std::string value;    // optional payload (JSON text)
};

// The parameters do not fit the tool.
class ToolValidationError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};
// The tool needs more of the prompt made visible; the caller retries after expanding.
class VisibilityExpansionRequired : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};
// The evaluation's deadline passed (thrown by handlers that notice it themselves).
class DeadlineExceededError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};
// The prompt evaluation cannot continue (a deadline passed during a tool call).
class PromptEvaluationError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// What a handler gets besides its call.
struct ToolContext {
  ExecutionState& state;
  const ToolCall& call;
  std::optional<TimePoint> deadline;
};

// A tool: an optional parameter check and the handler.
struct Tool {
  std::function<void(const ToolCall&)> validate;  // throws ToolValidationError
  std::function<ToolResult(const ToolCall&, ToolContext&)> handler;
};

// Runs tool calls against one ExecutionState with transaction semantics.
class ToolRunner {
 public:
  ToolRunner(ExecutionState& state, std::map<std::string, Tool> tools, std::string prompt_name,
             std::string run = std::string(fsnap::kDefaultRun));

  // Executes call; see the table above.
  ToolResult execute(const ToolCall& call, std::optional<TimePoint> deadline = std::nullopt);

  // Best-effort observer of every ToolInvoked event.
  void set_publisher(std::function<void(const ToolInvoked&)> publish) {
    publish_ = std::move(publish);
  }

 private:
  // Logs the call, takes the checkpoint that ends it and records both.
  void finish(const ToolCall& call, const CompositeSnapshot& pre, const ToolResult& result,
              TimePoint start);

  ExecutionState& state_;
  std::map<std::string, Tool> tools_;
  std::string prompt_name_;
  std::string run_;
  std::function<void(const ToolInvoked&)> publish_;
};

}  // namespace sandbox
