#include "sandbox/tool_runner.hpp"

#include <iostream>

#include "sandbox/checkpoint_store.hpp"

namespace sandbox {

namespace {

SnapshotMetadata metadata_for(const ToolCall& call, fsnap::Phase phase, const std::string& run) {
  SnapshotMetadata meta;
  meta.tag = "";  // tags are for people; tool boundaries are found by call id
  meta.tool_call_id = call.id;
  meta.tool_name = call.name;
  meta.phase = phase;
  meta.run = run;
  return meta;
}

ToolResult failed(std::string message) {
  return ToolResult{false, std::move(message), ""};
}

}  // namespace

ToolRunner::ToolRunner(ExecutionState& state, std::map<std::string, Tool> tools,
                       std::string prompt_name, std::string run)
    : state_(state),
      tools_(std::move(tools)),
      prompt_name_(std::move(prompt_name)),
      run_(std::move(run)) {}

ToolResult ToolRunner::execute(const ToolCall& call, std::optional<TimePoint> deadline) {
  CompositeSnapshot pre = state_.snapshot(metadata_for(call, fsnap::Phase::kPreTool, run_));
  TimePoint start = state_.clock().now();
  ToolResult result;
  try {
    auto tool = tools_.find(call.name);
    if (tool == tools_.end()) throw ToolValidationError("unknown tool '" + call.name + "'");
    if (deadline && state_.clock().now() > *deadline) {
      throw DeadlineExceededError("deadline passed before tool " + call.name + " started");
    }
    if (tool->second.validate) tool->second.validate(call);
    ToolContext context{state_, call, deadline};
    result = tool->second.handler(call, context);
    if (deadline && state_.clock().now() > *deadline) {
      throw DeadlineExceededError("tool " + call.name + " (" + call.id + ") ran past the deadline");
    }
  } catch (const VisibilityExpansionRequired& e) {
    // As if the call never ran: nothing logged or recorded; the caller retries.
    state_.restore(pre);
    throw;
  } catch (const DeadlineExceededError& e) {
    state_.restore(pre);
    finish(call, pre, failed(e.what()), start);
    throw PromptEvaluationError(std::string("deadline exceeded in prompt '") + prompt_name_ +
                                "': " + e.what());
  } catch (const ToolValidationError& e) {
    state_.restore(pre);
    result = failed(std::string("invalid call: ") + e.what());
    finish(call, pre, result, start);
    return result;
  } catch (const std::exception& e) {
    state_.restore(pre);
    result = failed(std::string("tool ") + call.name + " failed: " + e.what());
    finish(call, pre, result, start);
    return result;
  }
  if (!result.success) {
    state_.restore(pre);
    finish(call, pre, result, start);
    return result;
  }
  finish(call, pre, result, start);
  return result;
}

void ToolRunner::finish(const ToolCall& call, const CompositeSnapshot& pre,
                        const ToolResult& result, TimePoint start) {
  auto elapsed =
      std::chrono::duration_cast<std::chrono::milliseconds>(state_.clock().now() - start);
  ToolInvoked event{call.id,        call.name,      call.params,
                    result.success, result.message, elapsed.count()};
  // Telemetry: best effort, never a rollback.
  try {
    state_.session().dispatch(event);
    if (publish_) publish_(event);
  } catch (const std::exception& e) {
    std::cerr << "shadowbox: warning: could not publish the invocation of " << call.name << " ("
              << call.id << "): " << e.what() << '\n';
  }
  // The checkpoint that ends the call: after it (post_tool), or after its rollback.
  CompositeSnapshot end = state_.snapshot(metadata_for(
      call, result.success ? fsnap::Phase::kPostTool : fsnap::Phase::kCheckpoint, run_));
  if (CheckpointStore* store = state_.checkpoints()) {
    ToolCheckpoint record;
    record.tool_call_id = call.id;
    record.tool_name = call.name;
    record.params = call.params;
    record.pre_snapshot = pre;
    if (result.success) {
      record.post_snapshot = std::move(end);
    } else {
      record.rollback_snapshot = std::move(end);
    }
    record.result_summary = result.message;
    record.success = result.success;
    record.elapsed = elapsed;
    record.recorded_at = state_.clock().now();
    store->record(std::move(record));
  }
}

}  // namespace sandbox
