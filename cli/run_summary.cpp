#include "run_summary.hpp"

#include <ostream>

#include "fsnap/path_quoting.hpp"
#include "run_figures.hpp"

namespace cli {

namespace {

std::string counted(std::size_t n, const char* one, const char* many) {
  return std::to_string(n) + " " + (n == 1 ? one : many);
}

// How the run ended, in the words of `runs`' STATUS, with what made it end.
std::string ending(const hooks::RunInfo& info, const hooks::AgentRunResult& result) {
  if (result.halt) return "halted (" + result.halt->halt_reason + "): " + result.halt->reason;
  if (result.exit.signal != 0) {
    return info.status + " (the agent was killed by signal " + std::to_string(result.exit.signal) +
           ")";
  }
  if (result.exit.status != 0) {
    return info.status + " (the agent exited with status " + std::to_string(result.exit.status) +
           ")";
  }
  return info.status;
}

}  // namespace

void print_run_summary(std::ostream& out, const hooks::RunInfo& info,
                       const hooks::AgentRunResult& result) {
  // The figures as every command shows them (docs/figures.md).
  out << "shadowbox: run " << info.run << " " << ending(info, result) << "; "
      << figures_line(info.figures, info.unpriced_models) << '\n';
  if (info.gaps != 0) {
    out << "shadowbox: warning: " << counted(info.gaps, "hook event", "hook events")
        << " could not be recorded (see shadowbox runs)\n";
  }
  if (info.figures.agent_denied != 0) {
    out << "shadowbox: the agent's own permissions refused "
        << counted(info.figures.agent_denied, "tool call", "tool calls")
        << ", which did not run (shadowbox log --run " << info.run
        << " shows why); allow the tools in the agent's own settings or options to let them "
           "run\n";
  }
  if (!info.unpriced_models.empty()) {
    std::string models;
    for (const std::string& m : info.unpriced_models) {
      models += (models.empty() ? "" : ", ") + fsnap::quote_input(m);
    }
    bool one = info.unpriced_models.size() == 1;
    out << "shadowbox: warning: run " << info.run << "'s cost, ~$"
        << cost_text(info.figures.cost_usd, {}) << ", is an estimate: " << models
        << (one ? " has" : " have") << " no price in policy.prices, so " << (one ? "its" : "their")
        << " requests are counted at the highest price of each kind of token; add "
        << (one ? "it" : "them") << " under policy.prices for an exact cost\n";
  }
  out << "shadowbox:   what it did:  shadowbox log --run " << info.run << '\n';
  // The agent prints its own resume command too; that one fails outside the run's HOME.
  if (info.session_id.empty()) return;
  if (info.resumable) {
    out << "shadowbox:   go on:        shadowbox resume " << info.run << '\n';
  } else if (info.status == "complete") {
    out << "shadowbox:   go on:        shadowbox resume " << info.run << " --reopen\n";
  }
}

}  // namespace cli
