#include "run_summary.hpp"

#include <cstdio>
#include <ostream>

namespace cli {

namespace {

std::string counted(std::size_t n, const char* one, const char* many) {
  return std::to_string(n) + " " + (n == 1 ? one : many);
}

std::string usd(double amount) {
  char text[32];
  std::snprintf(text, sizeof text, "$%.4f", amount);
  return text;
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
  std::string calls = counted(info.calls, "tool call", "tool calls");
  if (info.failed_calls != 0) calls += ", " + std::to_string(info.failed_calls) + " failed";
  out << "shadowbox: run " << info.run << " " << ending(info, result) << "; " << calls << ", "
      << usd(info.cost_usd) << " spent\n";
  if (info.gaps != 0) {
    out << "shadowbox: warning: " << counted(info.gaps, "hook event", "hook events")
        << " could not be recorded (see shadowbox runs)\n";
  }
  out << "shadowbox:   what it did:  shadowbox log --run " << info.run << '\n';
  // The agent prints its own resume command too; that one fails outside the run's HOME.
  if (info.session_id.empty()) return;
  if (info.resumable) {
    out << "shadowbox:   go on:        shadowbox resume " << info.run << '\n';
  } else if (info.status == "complete") {
    out << "shadowbox:   go on:        shadowbox resume " << info.run << " --validation relaxed\n";
  }
}

}  // namespace cli
