#include "hooks/agent_hook.hpp"

#include <algorithm>

#include <Poco/JSON/Parser.h>

#include "fsnap/checkpoint.hpp"
#include "hooks/agent_event.hpp"
#include "hooks/agent_session_state.hpp"
#include "hooks/boundary_effects.hpp"
#include "hooks/event_json.hpp"
#include "hooks/tool_call_facts.hpp"
#include "runs/redaction.hpp"
#include "runs/run_halt.hpp"
#include "runs/run_lifecycle.hpp"
#include "runs/run_meta.hpp"
#include "runs/run_notices.hpp"
#include "sandbox/builtin_slices.hpp"
#include "sandbox/containment.hpp"

namespace hooks {

namespace {

// Brings the run's model spend up to date (inside a step: the state is current).
void meter_spend(const AgentEvent& event, runs::LedgerRun& run, const HookOptions& options) {
  if (options.spend == nullptr) return;
  sandbox::Session& session = run.state().session();
  for (const std::string& model : options.spend->update(
           session, run.state().containment(), run_transcripts(session, event.transcript_path),
           // A call id shadowbox made up is in no transcript.
           event.unidentified_calls ? "" : event.tool_use_id)) {
    std::string text = unpriced_model_warning(model);
    runs::append_run_log(run.store(), run.run(), "warning: " + text);
    if (options.warn) options.warn(text);
  }
}

// Brings the adapter state of the event's session up to date: its newest activity,
// the messages its transcript holds, whether it ended (inside a step).
void note_session_activity(const AgentEvent& event, runs::LedgerRun& run,
                           const HookOptions& options, bool ended) {
  sandbox::Session& session = run.state().session();
  install_agent_session_reducers(session);
  AgentSessionActivity activity{event.session_id,
                                fsnap::format_timestamp(run.state().clock().now()), 0, ended};
  if (options.spend != nullptr && !event.transcript_path.empty()) {
    activity.message_count = options.spend->usage().messages(event.transcript_path);
  }
  session.dispatch(activity);
}

// The command line that started the run's agent (its newest resume's), or "".
std::string agent_command(const runs::LedgerRun& run) {
  std::optional<runs::RunMeta> meta;
  try {
    meta = runs::RunMeta::load(run.store(), run.run());
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
HookVerdict on_denied(const AgentEvent& event, const policy::SafetyEvent& safety,
                      runs::LedgerRun& run) {
  return perform_boundary_effects(denial_effects(event, safety), run);
}

// The open calls an after-tool event of an agent that gives its calls no ids may end:
// those of the same tool, oldest first — of the same input first. They are looked for
// among the run's newest boundaries first (calls in flight are recent), then in all.
std::vector<std::string> candidate_calls(const AgentEvent& event, runs::LedgerRun& run,
                                         const std::string& input) {
  constexpr std::size_t kRecent = 256;
  for (std::size_t newest : {kRecent, std::size_t{0}}) {
    std::vector<std::string> same_input;
    std::vector<std::string> same_tool;
    for (const std::string& id : run.log().recent_open_calls(newest)) {
      std::optional<sandbox::Boundary> pre = run.log().pre_tool(id);
      if (!pre || pre->ended || pre->record.tool_name != event.tool_name) continue;
      (pre->record.input_summary == input ? same_input : same_tool).push_back(id);
    }
    same_input.insert(same_input.end(), same_tool.begin(), same_tool.end());
    if (!same_input.empty()) return same_input;
  }
  return {};
}

// Ends the call event reports the outcome of with end(id). For an agent that gives its
// calls no ids, the call is found first: a candidate another process ended meanwhile
// (a parallel call with the same input) is passed over for the next one.
template <typename End>
auto end_call(AgentEvent& event, runs::LedgerRun& run, const std::string& input, End end)
    -> decltype(end(std::string())) {
  if (!event.tool_use_id.empty()) return end(event.tool_use_id);
  for (const std::string& id : candidate_calls(event, run, input)) {
    event.tool_use_id = id;
    try {
      return end(id);
    } catch (const sandbox::Error& e) {
      if (e.code() != sandbox::ErrorCode::kConflict && e.code() != sandbox::ErrorCode::kNotFound) {
        throw;
      }
    }
  }
  event.tool_use_id.clear();
  throw sandbox::Error(sandbox::ErrorCode::kNotFound,
                       "no open " + event.tool_name + " call to pair the event with");
}

HookVerdict on_failure(AgentEvent& event, runs::LedgerRun& run, const HookOptions& options,
                       const std::string& input) {
  std::string error =
      runs::redacted_value_summary(event.error, options.secrets, kResultSummaryLimit);
  sandbox::FailureDetails details = failure_details(event);
  sandbox::FailureResult failure = end_call(event, run, input, [&](const std::string& id) {
    return run.transactions().fail(id, error, 0, details);
  });
  return perform_boundary_effects(failure_effects(event, failure), run);
}

// An after-tool event of a call whose pre-tool event never arrived (its hook was killed
// or lost): the call is recorded after the fact, as its own, and the gap is counted; a
// failure of it is not rolled back — what the workspace was before it is not known —
// and the model is told so.
HookVerdict on_unbegun(AgentEvent& event, runs::LedgerRun& run, const HookOptions& options) {
  bool failed = event.name == "PostToolUseFailure";
  if (event.tool_use_id.empty()) {
    // An agent that gives its calls no ids, and no open call to pair the event with.
    std::string stamp = fsnap::format_timestamp(run.state().clock().now());
    stamp.erase(
        std::remove_if(stamp.begin(), stamp.end(), [](char c) { return c < '0' || c > '9'; }),
        stamp.end());
    event.tool_use_id = "sbx_unpaired_" + stamp;
  }
  std::string summary = runs::redacted_value_summary(failed ? event.error : event.tool_response,
                                                     options.secrets, kResultSummaryLimit);
  run.transactions().end_unbegun(
      {event.tool_use_id, event.tool_name,
       runs::redacted_value_summary(event.tool_input, options.secrets, kInputSummaryLimit)},
      !failed, summary);
  std::string gap = "shadowbox: the pre-tool event of " + event.tool_name + " " +
                    event.tool_use_id +
                    " never arrived: the call ran with no checkpoint before it; what it changed "
                    "is recorded as its own" +
                    (failed ? ", and its failure could not be rolled back" : "");
  runs::record_gap(run.store().dir(), run.run(), gap);
  if (options.warn) options.warn(gap);
  HookVerdict verdict;
  if (failed) {
    verdict.context = "shadowbox did not roll back this failed " + event.tool_name +
                      " call: it missed the call's start, so it cannot tell what the workspace "
                      "was before it. The files are as the call left them.";
  }
  return verdict;
}

// An after-tool event (input: what the records keep of the call's input): the call's end,
// or, when its pre-tool event never came, the call recorded after the fact.
HookVerdict on_after_tool(AgentEvent& event, runs::LedgerRun& run, const HookOptions& options,
                          const std::string& input) {
  // Its outcome comes later (late_outcomes): the call stays open, and a later event ends
  // it (settle_calls). A call with no open pre-tool boundary is recorded now.
  if (event.outcome_pending && !event.tool_use_id.empty()) {
    std::optional<bool> ended = run.log().call_ended(event.tool_use_id);
    if (ended && !*ended) return HookVerdict{};
  }
  try {
    if (event.name == "PostToolUseFailure") return on_failure(event, run, options, input);
    end_call(event, run, input, [&](const std::string& id) {
      return run.transactions().succeed(
          id,
          runs::redacted_value_summary(event.tool_response, options.secrets, kResultSummaryLimit));
    });
    return HookVerdict{};
  } catch (const sandbox::Error& e) {
    if (e.code() != sandbox::ErrorCode::kNotFound) throw;
    return on_unbegun(event, run, options);
  }
}

// Ends call id, open, as one the agent's own permissions refused (why: what the model
// was told). Whether it did (another process may have ended it meanwhile).
bool end_as_agent_denied(runs::LedgerRun& run, const std::string& id, const std::string& why) {
  // (Most calls of a batch have ended: asked at every PostToolBatch, so asked cheaply.)
  if (run.log().call_ended(id).value_or(true)) return false;
  try {
    run.transactions().agent_denied(id, why);
    return true;
  } catch (const sandbox::Error& e) {
    if (e.code() != sandbox::ErrorCode::kConflict && e.code() != sandbox::ErrorCode::kNotFound) {
      throw;
    }
    return false;
  }
}

// The calls of a batch that ended (PostToolBatch) still open: Claude Code sends the
// batch once each call has ended, so a call without an outcome is one it never ran —
// its permissions refused it (the model was told why: the call's tool_response).
HookVerdict on_batch_end(const AgentEvent& event, runs::LedgerRun& run,
                         const HookOptions& options) {
  std::string denied;
  for (const BatchCall& call : event.batch) {
    std::string why =
        runs::redacted_value_summary(call.tool_response, options.secrets, kResultSummaryLimit);
    if (end_as_agent_denied(run, call.tool_use_id, why)) {
      denied +=
          (denied.empty() ? "" : "; ") + call.tool_name + " " + call.tool_use_id + " (" + why + ")";
    }
  }
  HookVerdict verdict;
  if (!denied.empty()) {
    std::string text = "the agent's own permissions refused, so it did not run: " + denied;
    runs::append_run_log(run.store(), run.run(), "notice: " + text);
    verdict.notice = "shadowbox: " + text;
  }
  return verdict;
}

// Brings the adapter's tool calls whose outcome it writes late to their end: every open
// call of the run whose outcome one of transcripts now holds succeeds or fails as it
// says (a failure rolled back as any other), except skip (the event's own call). What
// the agent and the person are told of a failure is returned.
HookVerdict settle_calls(const AgentAdapter& adapter, runs::LedgerRun& run,
                         const std::vector<boost::filesystem::path>& transcripts,
                         const HookOptions& options, const std::string& skip) {
  HookVerdict told;
  if (!adapter.late_outcomes() || transcripts.empty()) return told;
  constexpr std::size_t kRecent = 256;
  for (const std::string& id : run.log().recent_open_calls(kRecent)) {
    if (id == skip) continue;
    std::optional<ReportedOutcome> outcome;
    for (const boost::filesystem::path& t : transcripts) {
      if ((outcome = adapter.reported_outcome(t, id))) break;
    }
    if (!outcome) continue;
    std::optional<sandbox::Boundary> pre = run.log().pre_tool(id);
    if (!pre || pre->ended) continue;
    std::string summary =
        runs::redacted_summary(outcome->summary, options.secrets, kResultSummaryLimit);
    try {
      if (outcome->success) {
        run.transactions().succeed(id, summary);
        continue;
      }
      // The event that would have said so, for the rules that keep failures and for what
      // the agent is told.
      AgentEvent ended;
      ended.name = "PostToolUseFailure";
      ended.tool_name = pre->record.tool_name;
      ended.tool_use_id = id;
      try {
        ended.tool_input = Poco::JSON::Parser().parse(pre->record.input_summary);
      } catch (const Poco::Exception&) {
        // A summary cut short: no command to match the keep rules with.
      }
      sandbox::FailureDetails details = failure_details(ended);
      details.exit_code = outcome->exit_code;
      HookVerdict verdict = perform_boundary_effects(
          failure_effects(ended, run.transactions().fail(id, summary, 0, details)), run);
      for (auto [into, from] :
           {std::pair{&told.context, &verdict.context}, std::pair{&told.notice, &verdict.notice}}) {
        if (!from->empty()) *into += (into->empty() ? "" : "\n\n") + *from;
      }
    } catch (const sandbox::Error& e) {
      // Ended meanwhile by another process.
      if (e.code() != sandbox::ErrorCode::kConflict && e.code() != sandbox::ErrorCode::kNotFound) {
        throw;
      }
    }
  }
  return told;
}

// Runs hook at the start of every step of tx while it lives, then gives back the hook
// that was there before.
class StepHookScope {
 public:
  StepHookScope(sandbox::ToolTransactions& tx, std::function<void()> hook)
      : tx_(tx), previous_(tx.step_hook()) {
    tx_.set_step_hook(std::move(hook));
  }
  ~StepHookScope() { tx_.set_step_hook(std::move(previous_)); }
  StepHookScope(const StepHookScope&) = delete;
  StepHookScope& operator=(const StepHookScope&) = delete;

 private:
  sandbox::ToolTransactions& tx_;
  std::function<void()> previous_;
};

// Decides on one event of the run (decide's part that depends on the event's kind).
HookVerdict decide_event(AgentEvent& event, runs::LedgerRun& run, const HookOptions& options,
                         const std::function<std::string()>& input) {
  const std::string& name = event.name;
  sandbox::ToolTransactions& tx = run.transactions();
  if (name == "PreToolUse") {
    sandbox::StepResult step = tx.begin(
        {event.tool_use_id, event.tool_name, input(), named_paths(event, run.workspace().root())},
        {.separate_outside_changes = true,
         .before_admission = [&] { note_session_activity(event, run, options, /*ended=*/false); },
         .canonical_input = canonical_input(event)});
    if (step.decision == policy::Decision::kHalt && step.safety_event) {
      return on_denied(event, *step.safety_event, run);
    }
    return HookVerdict{};
  }
  if (name == "PostToolUse" || name == "PostToolUseFailure") {
    return on_after_tool(event, run, options, input());
  }
  if (name == "PostToolBatch") return on_batch_end(event, run, options);
  if (name == "PermissionDenied") {
    end_as_agent_denied(run, event.tool_use_id,
                        runs::redacted_summary(event.reason, options.secrets, kResultSummaryLimit));
    return HookVerdict{};
  }
  if (name == "SessionStart") {
    std::string now = fsnap::format_timestamp(run.state().clock().now());
    AgentSession session{event.session_id, event.transcript_path, event.source, event.cwd, now};
    session.started_by = runs::redact(agent_command(run), options.secrets);
    session.agent = event.agent;
    if (event.source == "resume" || event.source == "fork") {
      session.resumed_from = options.resumed_session;
    }
    session.last_activity_at = now;
    tx.checkpoint(
        {"", fsnap::Phase::kCheckpoint, "", "", run.run()},
        [&](sandbox::Session& s) {
          install_agent_session_reducers(s);
          s.dispatch(session);
          // With no `shadowbox run` to start the run's count, a session that starts or
          // resumes does: what the run counted goes on (its figures are the run's), a
          // stop and the clock start afresh.
          if (!options.supervised && (event.source == "startup" || event.source == "resume")) {
            run.state().restart_containment(/*keep_count=*/true);
          }
          runs::record_run_status(s, {"running", "agent session " + session.session_id});
        },
        "agent session " + session.session_id + " (" + session.source + ")");
    return HookVerdict{};
  }
  if (name == "SessionEnd" && event.reason != "clear") {
    // /clear ends one agent session and starts the next: the run goes on.
    std::string reason = "agent session ended (" + event.reason + ")";
    try {
      tx.close_open_calls(
          "the agent session ended before the call reported an outcome (it may or may not "
          "have run)");
    } catch (const std::exception& e) {
      if (options.warn) options.warn(std::string("could not close open calls: ") + e.what());
    }
    tx.checkpoint(
        {"", fsnap::Phase::kCheckpoint, "", "", run.run()},
        [&](sandbox::Session& s) {
          // A session that containment or an abort stopped did not complete: it can
          // be resumed (with other limits).
          policy::ExecutionContext* containment = run.state().containment();
          bool stopped = (containment != nullptr && containment->state().halted_by) ||
                         runs::pending_halt(run.store(), run.run()).has_value();
          note_session_activity(event, run, options, /*ended=*/!stopped);
          run.state().record_containment();
          runs::record_run_status(s, {"complete", reason});
        },
        reason);
    return HookVerdict{};
  }
  // Stop ends a turn, not the session; other events pass through untouched.
  return HookVerdict{};
}

// Decides on one event (a call it pairs gets its id).
HookVerdict decide(const AgentAdapter& adapter, AgentEvent& event, runs::LedgerRun& run,
                   const HookOptions& options) {
  const std::string& name = event.name;
  sandbox::ToolTransactions& tx = run.transactions();
  event.agent = adapter.name();
  tx.events().hooks.publish({adapter.name(), event.name, event.session_id, event.tool_use_id});
  // What the records keep of the call: redacted, then cut.
  auto input = [&] {
    return runs::redacted_value_summary(event.tool_input, options.secrets, kInputSummaryLimit);
  };
  // Every boundary this event records brings the run's spend up to date first: what a
  // run has cost is as current as its newest boundary, whatever kind it is.
  StepHookScope metered(tx, [&] { meter_spend(event, run, options); });
  try {
    // Calls whose outcome the agent wrote after their after-tool event end first.
    HookVerdict settled;
    if (adapter.late_outcomes() && !event.transcript_path.empty()) {
      settled = settle_calls(adapter, run, {event.transcript_path}, options, event.tool_use_id);
    }
    HookVerdict verdict = decide_event(event, run, options, input);
    if (settled.context.empty() && settled.notice.empty()) return verdict;
    // The model reads it with the answer to an after-tool event (or a before-tool one, for
    // an agent whose model reads that); else with the next one's, as a notice.
    bool tell_now = (event.name == "PreToolUse" && adapter.context_before_tool()) ||
                    event.name == "PostToolUse" || event.name == "PostToolUseFailure";
    if (tell_now && verdict.exit_code == 0 && verdict.deny.empty()) {
      verdict.context = settled.context + (verdict.context.empty() ? "" : "\n\n") + verdict.context;
      verdict.notice = settled.notice + (verdict.notice.empty() ? "" : "\n") + verdict.notice;
    } else if (!settled.context.empty()) {
      runs::post_run_notice(run.store(), run.run(), settled.context);
    }
    return verdict;
  } catch (const std::exception& e) {
    std::string message = "shadowbox: checkpointing failed on " + name + ": " + e.what();
    runs::record_gap(run.store().dir(), run.run(), message);
    if (name == "PreToolUse") {
      message +=
          " (the tool call is blocked so that it cannot make a change shadowbox could not "
          "undo)";
    }
    return HookVerdict{2, "", "", "", message};
  }
}

// What was done to the workspace from outside the run since its last boundary (a
// restore from another terminal: runs/run_notices.hpp), told with the next answer
// of a tool call that goes on (its start, for an agent whose model reads what that
// answer adds, else its end): to the model, which would otherwise go on believing in
// files that changed under it, and to the person, in the agent's own place for it.
void tell_outside_changes(const AgentAdapter& adapter, const AgentEvent& event,
                          HookVerdict& verdict, const runs::LedgerRun& run) {
  bool tool_event = (event.name == "PreToolUse" && adapter.context_before_tool()) ||
                    event.name == "PostToolUse" || event.name == "PostToolUseFailure";
  if (!tool_event || verdict.exit_code != 0 || !verdict.deny.empty()) return;
  std::vector<std::string> notices = runs::take_run_notices(run.store(), run.run());
  if (notices.empty()) return;
  std::string text;
  for (const std::string& n : notices) text += (text.empty() ? "" : "\n") + n;
  verdict.context += (verdict.context.empty() ? "" : "\n\n") + text;
  verdict.notice += (verdict.notice.empty() ? "" : "\n") + text;
}

}  // namespace

void settle_late_outcomes(const AgentAdapter& adapter, runs::LedgerRun& run,
                          const std::vector<boost::filesystem::path>& transcripts,
                          const HookOptions& options) {
  settle_calls(adapter, run, transcripts, options, "");
}

HookAnswer unreadable_event_answer(const std::string& event_json, const std::string& why) {
  std::string native = scan_event_name(event_json);
  // The core's names (BeforeTool and AfterTool are Gemini CLI's); none found: it may be
  // a call about to run.
  std::string name = native == "BeforeTool" || native.empty() ? "PreToolUse"
                     : native == "AfterTool"                  ? "PostToolUse"
                                                              : native;
  bool tool_event = name == "PreToolUse" || name == "PostToolUse" || name == "PostToolUseFailure";
  std::string message = "shadowbox: cannot read the hook event" +
                        (native.empty() ? std::string() : " " + native) + ": " + why;
  if (name == "PreToolUse") {
    message +=
        " (the tool call is blocked so that it cannot make a change shadowbox could not "
        "undo)";
  }
  return HookAnswer{tool_event ? 2 : 1, "", message, name};
}

HookAnswer handle_hook_event(const AgentAdapter& adapter, const std::string& event_json,
                             runs::LedgerRun& run, const HookOptions& options) {
  AgentEvent event;
  try {
    event = adapter.parse_event(event_json);
  } catch (const std::exception& e) {
    HookAnswer answer = unreadable_event_answer(event_json, e.what());
    try {
      runs::record_gap(run.store().dir(), run.run(), answer.stderr_text);
    } catch (const std::exception&) {
      // The answer still blocks; the log is all that is lost.
    }
    return answer;
  }
  return handle_hook_event(adapter, std::move(event), run, options);
}

HookAnswer handle_hook_event(const AgentAdapter& adapter, AgentEvent event, runs::LedgerRun& run,
                             const HookOptions& options) {
  // A warning raised while the event is answered reaches the person where the agent
  // shows them its hooks' messages too: an interactive agent owns the terminal, and
  // shadowbox's stderr is held until it exits (held_stderr.hpp).
  std::string warnings;
  HookOptions told = options;
  told.warn = [&warnings, &options](const std::string& text) {
    constexpr std::string_view kOurs = "shadowbox: ";  // (a gap's text starts with it)
    std::string_view said = text;
    if (said.substr(0, kOurs.size()) == kOurs) said.remove_prefix(kOurs.size());
    warnings +=
        (warnings.empty() ? "" : "\n") + std::string("shadowbox: warning: ") + std::string(said);
    // (Whoever warns says "shadowbox: warning: " itself.)
    if (options.warn) options.warn(std::string(said));
  };
  HookVerdict verdict = decide(adapter, event, run, told);
  tell_outside_changes(adapter, event, verdict, run);
  if (!warnings.empty()) verdict.notice += (verdict.notice.empty() ? "" : "\n") + warnings;
  return adapter.answer(event, verdict);
}

HookAnswer handle_claude_code_event(const std::string& event_json, runs::LedgerRun& run,
                                    const HookOptions& options) {
  return handle_hook_event(adapter_for(AgentKind::kClaudeCode), event_json, run, options);
}

}  // namespace hooks
