#include "embed/tool_runner.hpp"

#include <iostream>

#include "embed/agent_slices.hpp"

namespace embed {

ToolRunner::ToolRunner(sandbox::ExecutionState& state, std::map<std::string, Tool> tools,
                       std::string prompt_name, std::string run, sandbox::RollbackPolicy policy)
    : state_(state),
      tools_(std::move(tools)),
      prompt_name_(std::move(prompt_name)),
      transactions_(state, log_, std::move(policy), std::move(run)) {
  register_agent_slice_types();
}

ToolResult ToolRunner::fail(const sandbox::ToolCall& call, const ToolResult& result) {
  sandbox::FailureResult failure = transactions_.fail(call.id, result.message, result.cost_usd);
  last_decision_ = failure.decision;
  return result;
}

void ToolRunner::publish(const sandbox::ToolCall& call, const ToolResult& result,
                         fsnap::TimePoint start) {
  if (!publish_) return;
  auto elapsed =
      std::chrono::duration_cast<std::chrono::milliseconds>(state_.clock().now() - start);
  sandbox::ToolInvoked event{call.id,        call.name,      call.params,
                             result.success, result.message, elapsed.count()};
  try {
    publish_(event);  // telemetry: best effort, never a rollback
  } catch (const std::exception& e) {
    std::cerr << "shadowbox: warning: could not publish the invocation of " << call.name << " ("
              << call.id << "): " << e.what() << '\n';
  }
}

ToolResult ToolRunner::execute(const sandbox::ToolCall& call_in,
                               std::optional<fsnap::TimePoint> deadline) {
  // A call made while another runs (from its handler) is nested in it.
  sandbox::ToolCall call = call_in;
  if (call.parent.empty() && !running_.empty()) call.parent = running_.back();
  sandbox::StepResult begun = transactions_.begin(call);
  running_.push_back(call.id);
  struct Done {
    std::vector<std::string>& running;
    ~Done() { running.pop_back(); }
  } done{running_};
  fsnap::TimePoint start = state_.clock().now();
  ToolResult result;
  if (begun.decision == policy::Decision::kHalt) {
    result.success = false;
    result.message = begun.boundary.record.result_summary;
    result.denied_by = begun.safety_event;
    publish(call, result, start);
    return result;
  }
  try {
    auto tool = tools_.find(call.name);
    if (tool == tools_.end()) throw ToolValidationError("unknown tool '" + call.name + "'");
    if (deadline && state_.clock().now() > *deadline) {
      throw DeadlineExceededError("deadline passed before tool " + call.name + " started");
    }
    if (tool->second.validate) tool->second.validate(call);
    ToolContext context{state_, call, deadline, *this};
    result = tool->second.handler(call, context);
    if (deadline && state_.clock().now() > *deadline) {
      throw DeadlineExceededError("tool " + call.name + " (" + call.id + ") ran past the deadline");
    }
  } catch (const VisibilityExpansionRequired&) {
    // As if the call never ran: nothing logged or recorded; the caller retries.
    transactions_.discard(call.id);
    throw;
  } catch (const DeadlineExceededError& e) {
    result = fail(call, ToolResult{false, e.what(), ""});
    publish(call, result, start);
    throw PromptEvaluationError(std::string("deadline exceeded in prompt '") + prompt_name_ +
                                "': " + e.what());
  } catch (const ToolValidationError& e) {
    result = fail(call, ToolResult{false, std::string("invalid call: ") + e.what(), ""});
    publish(call, result, start);
    return result;
  } catch (const std::exception& e) {
    result = fail(call, ToolResult{false, "tool " + call.name + " failed: " + e.what(), ""});
    publish(call, result, start);
    return result;
  } catch (...) {
    // Not a std::exception: still a failure of this call, recorded as one; the caller
    // gets the exception back.
    result = fail(call, ToolResult{false, "tool " + call.name + " failed: unknown exception", ""});
    publish(call, result, start);
    throw;
  }
  if (!result.success) {
    fail(call, result);
  } else {
    transactions_.succeed(call.id, result.message, "", result.cost_usd);
  }
  publish(call, result, start);
  return result;
}

}  // namespace embed
