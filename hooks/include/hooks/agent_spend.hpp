// AgentSpend — what a wrapped agent's model requests have cost, charged to the run's
// containment so that its cost ceiling holds. Two figures are kept: the requests in the
// agent's transcripts (its subagents' included) priced with the config's price table,
// and the total the agent reported itself (ReportedCost). The larger one counts:
// transcripts can undercount output tokens of a streamed reply, reports can lag or be
// switched off. The spend is kept in the run's session as the LOG slice
// "agent.spend" (newest current), so every process of the run — the next hook, a
// resumed run — continues the count, and no rollback gives money back.
//
//   SpendMeter meter(config.policy.prices, layout::agent_cost_file(store, run));
//   meter.update(session, state.containment(), run_transcripts(session, event_path));
//
// Thread-safety: SpendMeter is used by one thread at a time.
#pragma once

#include <chrono>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include <boost/filesystem/path.hpp>

#include "hooks/transcript_usage.hpp"
#include "policy/execution_context.hpp"
#include "runs/pricing.hpp"
#include "sandbox/session.hpp"

namespace hooks {

// The run's spend on model requests, as last brought up to date.
struct AgentSpend {
  double transcript_usd = 0;                // the transcripts' requests, priced
  double reported_usd = 0;                  // the agent's own reports
  double charged_usd = 0;                   // charged to containment: the largest figure seen
  std::uint64_t requests = 0;               // requests in the transcripts
  std::vector<std::string> unknown_models;  // priced at the highest rates
  friend bool operator==(const AgentSpend&, const AgentSpend&) = default;
};

// Registers AgentSpend as the slice type "agent.spend" (LOG), read under its former name
// "claude_code.spend" too. Idempotent;
// register_agent_run_slice_types (hooks/run_slice_types.hpp) does it.
void register_agent_spend_slice_type();
// The spend a session snapshot holds, or nullopt.
std::optional<AgentSpend> agent_spend(const sandbox::SessionSnapshot& session);

// Keeps a run's spend up to date.
class SpendMeter {
 public:
  // Prices requests with prices; reads the agent's reported total from reported_file
  // (see ReportedCost).
  SpendMeter(runs::PriceTable prices, boost::filesystem::path reported_file);

  // Reads what is new in transcripts and the reported total, charges containment (if
  // not null) with what was not charged yet, and records the spend in session. Returns
  // the models found unpriced for the first time in the run.
  //
  // With call_id (a tool call about to be admitted): Claude Code writes its transcript
  // in batches, up to ~100 ms after it asks for a call, so the request that asked may
  // not be there yet. When that request could take the spend to the cost ceiling —
  // what was charged plus twice the costliest request so far reaches it, or no request
  // was seen yet — this waits (up to max_wait) for the transcript to show it, so the
  // admission sees its cost. Far from the ceiling it does not wait.
  std::vector<std::string> update(sandbox::Session& session, policy::ExecutionContext* containment,
                                  const std::vector<boost::filesystem::path>& transcripts,
                                  const std::string& call_id = "");
  // What the transcripts read so far hold.
  const TranscriptUsage& usage() const { return usage_; }
  // How long update() waits at most for a call's request (default 1 s).
  void set_max_wait(std::chrono::milliseconds max_wait) { max_wait_ = max_wait; }

 private:
  // Whether the request of call_id must be waited for before admitting it.
  bool must_wait_for(const std::string& call_id, const policy::ExecutionContext* containment) const;

  boost::filesystem::path reported_file_;
  TranscriptUsage usage_;
  std::chrono::milliseconds max_wait_{1000};
};

// The warning for a model the price table does not know.
std::string unpriced_model_warning(const std::string& model);

// The transcripts of a run: those of every agent session its session recorded
// (agent.session), and those of current (the transcript an event names), once
// each.
std::vector<boost::filesystem::path> run_transcripts(const sandbox::Session& session,
                                                     const boost::filesystem::path& current);

}  // namespace hooks
