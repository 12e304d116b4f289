#include "hooks/claude_code_hook.hpp"

#include <sstream>

#include <Poco/JSON/Object.h>

#include "fsnap/checkpoint.hpp"
#include "hooks/boundary_effects.hpp"
#include "hooks/claude_code_event.hpp"
#include "hooks/claude_code_state.hpp"
#include "sandbox/builtin_slices.hpp"
#include "sandbox/containment.hpp"
#include "sandbox/redaction.hpp"
#include "sandbox/run_halt.hpp"
#include "sandbox/run_meta.hpp"

namespace hooks {

namespace {

using Poco::JSON::Object;

// Brings the run's model spend up to date (inside a step: the state is current).
void meter_spend(const ClaudeCodeEvent& event, sandbox::LedgerRun& run,
                 const ClaudeCodeHookOptions& options) {
  if (options.spend == nullptr) return;
  sandbox::Session& session = run.state().session();
  for (const std::string& model :
       options.spend->update(session, run.state().containment(),
                             run_transcripts(session, event.transcript_path), event.tool_use_id)) {
    std::string text = unpriced_model_warning(model);
    sandbox::append_run_log(run.store(), run.run(), "warning: " + text);
    if (options.warn) options.warn(text);
  }
}

// Brings the adapter state of the event's session up to date: its newest activity,
// the messages its transcript holds, whether it ended (inside a step).
void note_session_activity(const ClaudeCodeEvent& event, sandbox::LedgerRun& run,
                           const ClaudeCodeHookOptions& options, bool ended) {
  sandbox::Session& session = run.state().session();
  install_claude_code_reducers(session);
  ClaudeCodeActivity activity{event.session_id, fsnap::format_timestamp(run.state().clock().now()),
                              0, ended};
  if (options.spend != nullptr && !event.transcript_path.empty()) {
    activity.message_count = options.spend->usage().messages(event.transcript_path);
  }
  session.dispatch(activity);
}

// The command line that started the run's agent (its newest resume's), or "".
std::string agent_command(const sandbox::LedgerRun& run) {
  std::optional<sandbox::RunMeta> meta;
  try {
    meta = sandbox::RunMeta::load(run.store(), run.run());
  } catch (const std::exception&) {
    return "";  // an unreadable run.json says nothing of it
  }
  if (!meta) return "";
  const std::vector<std::string>& argv =
      meta->resumes.empty() ? meta->command : meta->resumes.back().command;
  std::string out;
  for (const std::string& a : argv) out += (out.empty() ? "" : " ") + a;
  return out;
}

// The answer to a call containment denied: Claude Code's deny, with the reason the
// model reads; a stop of the whole run also ends the agent's turn and asks the run's
// supervisor to stop it.
HookAnswer on_denied(const ClaudeCodeEvent& event, const policy::SafetyEvent& safety,
                     sandbox::LedgerRun& run) {
  return perform_boundary_effects(denial_effects(event, safety), run);
}

HookAnswer on_failure(const ClaudeCodeEvent& event, sandbox::LedgerRun& run,
                      const ClaudeCodeHookOptions& options) {
  std::string error = sandbox::redact(event.error, options.secrets);
  sandbox::FailureResult failure = run.transactions().fail(event.tool_use_id, error);
  return perform_boundary_effects(failure_effects(event, failure), run);
}

// Answers one event; name receives its hook_event_name as soon as it is known.
HookAnswer answer_event(const std::string& event_json, sandbox::LedgerRun& run,
                        const ClaudeCodeHookOptions& options, std::string& name) {
  register_claude_code_slice_types();
  ClaudeCodeEvent event;
  try {
    event = parse_claude_code_event(event_json);
  } catch (const sandbox::Error& e) {
    return HookAnswer{1, "",
                      std::string("shadowbox: ignoring a malformed hook event: ") + e.what()};
  }
  name = event.name;
  sandbox::ToolTransactions& tx = run.transactions();
  tx.events().hooks.publish({"claude-code", event.name, event.session_id, event.tool_use_id});
  auto redacted = [&](const std::string& text) { return sandbox::redact(text, options.secrets); };
  try {
    if (name == "PreToolUse") {
      sandbox::StepResult step =
          tx.begin({event.tool_use_id, event.tool_name, redacted(event.tool_input)},
                   {.separate_outside_changes = true, .before_admission = [&] {
                      meter_spend(event, run, options);
                      note_session_activity(event, run, options, /*ended=*/false);
                    }});
      if (step.decision == policy::Decision::kHalt && step.safety_event) {
        return on_denied(event, *step.safety_event, run);
      }
      return HookAnswer{};
    }
    if (name == "PostToolUse") {
      tx.succeed(event.tool_use_id, redacted(event.tool_response));
      return HookAnswer{};
    }
    if (name == "PostToolUseFailure") return on_failure(event, run, options);
    if (name == "SessionStart") {
      std::string now = fsnap::format_timestamp(run.state().clock().now());
      ClaudeCodeSession session{event.session_id, event.transcript_path, event.source, event.cwd,
                                now};
      session.started_by = redacted(agent_command(run));
      if (event.source == "resume" || event.source == "fork") {
        session.resumed_from = options.resumed_session;
      }
      session.last_activity_at = now;
      tx.checkpoint(
          {"", fsnap::Phase::kCheckpoint, "", "", run.run()},
          [&](sandbox::Session& s) {
            install_claude_code_reducers(s);
            s.dispatch(session);
            if (!options.supervised && event.source == "startup") {
              run.state().restart_containment(/*keep_count=*/false);
            } else if (!options.supervised && event.source == "resume") {
              run.state().restart_containment(/*keep_count=*/true);
            }
            record_run_status(s, {"running", "agent session " + session.session_id});
          },
          "agent session " + session.session_id + " (" + session.source + ")");
      return HookAnswer{};
    }
    if (name == "SessionEnd" && event.reason != "clear") {
      // /clear ends one agent session and starts the next: the run goes on.
      std::string reason = "agent session ended (" + event.reason + ")";
      try {
        tx.close_open_calls("the agent session ended without reporting an outcome");
      } catch (const std::exception& e) {
        if (options.warn) options.warn(std::string("could not close open calls: ") + e.what());
      }
      tx.checkpoint(
          {"", fsnap::Phase::kCheckpoint, "", "", run.run()},
          [&](sandbox::Session& s) {
            meter_spend(event, run, options);
            // A session that containment or an abort stopped did not complete: it can
            // be resumed (with other limits).
            policy::ExecutionContext* containment = run.state().containment();
            bool stopped = (containment != nullptr && containment->state().halted_by) ||
                           sandbox::pending_halt(run.store(), run.run()).has_value();
            note_session_activity(event, run, options, /*ended=*/!stopped);
            run.state().record_containment();
            record_run_status(s, {"complete", reason});
          },
          reason);
      return HookAnswer{};
    }
    // Stop ends a turn, not the session; other events pass through untouched.
    return HookAnswer{};
  } catch (const std::exception& e) {
    std::string message = "shadowbox: checkpointing failed on " + name + ": " + e.what();
    sandbox::record_gap(run.store().dir(), run.run(), message);
    if (name == "PreToolUse") {
      message +=
          " (the tool call is blocked so that it cannot make a change shadowbox could not "
          "undo)";
    }
    return HookAnswer{2, "", message};
  }
}

}  // namespace

HookAnswer handle_claude_code_event(const std::string& event_json, sandbox::LedgerRun& run,
                                    const ClaudeCodeHookOptions& options) {
  std::string name;
  HookAnswer answer = answer_event(event_json, run, options, name);
  answer.event = name;
  return answer;
}

HttpHookReply to_http_reply(const HookAnswer& answer) {
  if (answer.exit_code == 0) {
    return HttpHookReply{200, "application/json",
                         answer.stdout_json.empty() ? "{}" : answer.stdout_json};
  }
  if (answer.exit_code != 2) {
    // Not blocking: Claude Code reports a non-2xx answer and goes on.
    return HttpHookReply{400, "text/plain; charset=utf-8", answer.stderr_text};
  }
  // Blocking: said in the JSON Claude Code reads from a 2xx answer.
  Object::Ptr out = new Object(Poco::JSON_PRESERVE_KEY_ORDER);
  if (answer.event == "PreToolUse") {
    Object::Ptr specific = new Object(Poco::JSON_PRESERVE_KEY_ORDER);
    specific->set("hookEventName", "PreToolUse");
    specific->set("permissionDecision", "deny");
    specific->set("permissionDecisionReason", answer.stderr_text);
    out->set("hookSpecificOutput", specific);
  } else if (answer.event == "PostToolUse" || answer.event == "PostToolUseFailure") {
    out->set("decision", "block");
    out->set("reason", answer.stderr_text);
  } else {
    out->set("systemMessage", answer.stderr_text);
  }
  std::ostringstream text;
  out->stringify(text);
  return HttpHookReply{200, "application/json", text.str()};
}

}  // namespace hooks
