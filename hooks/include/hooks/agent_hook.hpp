// The agent hook: one hook event (read by the agent's adapter into the core's
// vocabulary, agent_event.hpp) in, the transaction core's step for it, and an answer in
// the agent's hook protocol out (exit status, optional JSON on stdout, text on stderr —
// or, for Claude Code's HTTP hooks, the same as an HTTP reply).
//
//   PreToolUse          pre-tool boundary; changes made since the run's newest boundary
//                       (a person, a background process) are first recorded as a
//                       boundary of their own, attributed to no tool. Under containment
//                       the agent's spend is brought up to date and the call admitted
//                       first: a denied call gets Claude Code's deny answer with the
//                       reason (the model reads it); a limit that stops the run also
//                       tells the agent to stop where its protocol can, and asks the
//                       run's supervisor to stop it (HaltRequest)
//   PostToolUse         post-tool boundary with the tool's result. For an agent that
//                       gives its calls no ids, the event is paired with the oldest
//                       open call of the same tool and input
//   PostToolUseFailure  the failure transaction (ToolTransactions::fail, whose
//                       RollbackPolicy decides): rolled back, refused or kept; the agent
//                       is told what happened through additionalContext. An agent that
//                       writes a call's outcome after its after-tool event (Codex: a
//                       command its sandbox stopped; AgentEvent::outcome_pending) leaves
//                       the call open, and the next event of the run ends it as the
//                       agent's session file says (settle_late_outcomes)
//   PostToolBatch       the calls of the batch still open were never run: the agent's own
//   PermissionDenied    permissions refused them (ToolTransactions::agent_denied: no
//                       step, counted as denied by the agent)
//   SessionStart        the agent's session id, transcript path and source, as adapter
//                       state in a LOG slice; the run is running. In a run no `shadowbox
//                       run` supervises (hooks installed in the user's own settings),
//                       each agent session is a run as far as limits go: a new session
//                       starts the count afresh, a resumed one goes on counting with
//                       its stop cleared and its clock restarted
//   Stop                nothing: it ends a turn, and interactive sessions have many
//   SessionEnd          the run is complete (unless the session was only cleared)
//
// Every boundary an event records brings the run's spend (SpendMeter) up to date first,
// so that what a run has cost is as current as its newest boundary.
//
// Malformed input is reported with a non-blocking exit status and changes nothing. A
// boundary that cannot be recorded is loud: the tool call is blocked (PreToolUse) or
// the agent is shown the error (exit 2), and it is written to the run's log.
//
// Thread-safety: one event at a time per LedgerRun (events of other processes
// serialise on the store lock).
#pragma once

#include <functional>
#include <string>
#include <vector>

#include "hooks/agent_adapter.hpp"
#include "hooks/agent_spend.hpp"
#include "hooks/hook_answer.hpp"
#include "runs/ledger_run.hpp"

namespace hooks {

// How the hook behaves besides the run's rollback policy.
struct HookOptions {
  std::vector<std::string> secrets;  // values redacted from everything recorded
  SpendMeter* spend = nullptr;       // the run's model spend; null: not metered
  // Whether `shadowbox run` supervises the run (it then starts the run's count itself).
  bool supervised = false;
  // Warnings for the person running the agent (they also go to the run's log).
  std::function<void(const std::string&)> warn;
  // The agent session a resume started the agent to resume, if it did: a session that
  // starts then records it as the one it resumed.
  std::string resumed_session;
};

// Claude Code's HTTP hooks (`"type": "http"`): a blocking answer is a 2xx reply whose
// JSON blocks (PreToolUse: permissionDecision "deny"; PostToolUse and
// PostToolUseFailure: decision "block"; others: a systemMessage), a non-blocking error
// is a 400 reply with the message.
struct HttpHookReply {
  int status = 200;
  std::string content_type;
  std::string body;
};

// Handles one event of the agent adapter is for, for the run. Never throws: every
// failure becomes an answer.
HookAnswer handle_hook_event(const AgentAdapter& adapter, const std::string& event_json,
                             runs::LedgerRun& run, const HookOptions& options);
// The same for an event the adapter has read already (parse_event reads no file twice).
HookAnswer handle_hook_event(const AgentAdapter& adapter, AgentEvent event, runs::LedgerRun& run,
                             const HookOptions& options);
// The same for Claude Code.
HookAnswer handle_claude_code_event(const std::string& event_json, runs::LedgerRun& run,
                                    const HookOptions& options);

// Ends the run's open calls whose outcome adapter's agent (late_outcomes) wrote in one of
// transcripts after their after-tool event was answered: each succeeds or fails (rolled
// back as any failure) as it says. A run's end does this before it closes the calls
// still open.
void settle_late_outcomes(const AgentAdapter& adapter, runs::LedgerRun& run,
                          const std::vector<boost::filesystem::path>& transcripts,
                          const HookOptions& options);

// The HTTP reply that says what answer says.
HttpHookReply to_http_reply(const HookAnswer& answer);

// The answer to an event that could not be read (why), in every agent's protocol: it
// fails closed. A tool event, or one whose name cannot be found (it may be a tool
// call's), gets a blocking error — a call about to run does not, and after one the
// model is told it was not recorded; another event (Stop, SessionStart...) a warning,
// since blocking it would keep the agent from stopping. The caller records the gap.
HookAnswer unreadable_event_answer(const std::string& event_json, const std::string& why);

}  // namespace hooks
