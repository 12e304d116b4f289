#include "runs_table.hpp"

#include <cstdio>
#include <ostream>
#include <string>

#include "run_figures.hpp"
#include "text_table.hpp"

namespace cli {

namespace {

std::string or_dash(const std::string& text) {
  return text.empty() ? "-" : text;
}

// "2026-11-26 19:45" of "2026-11-26T19:45:38.123456Z".
std::string to_the_minute(const std::string& iso) {
  if (iso.size() < 16) return or_dash(iso);
  return iso.substr(0, 10) + " " + iso.substr(11, 5);
}

}  // namespace

void print_runs_table(std::ostream& out, const std::vector<hooks::RunInfo>& runs, bool wide) {
  if (wide) {
    TextTable table({{"RUN"},
                     {"STATUS"},
                     {"HALT-REASON"},
                     {"COST-USD", true},
                     {"CALLS", true},
                     {"STEPS", true},
                     {"FAILED", true},
                     {"ROLLED-BACK", true},
                     {"REFUSED", true},
                     {"DENIED", true},
                     {"AGENT-SESSION"},
                     {"RESUMABLE"},
                     {"CHECKPOINTS", true},
                     {"GAPS", true},
                     {"STARTED"},
                     {"LAST-ACTIVITY"}});
    for (const hooks::RunInfo& r : runs) {
      const runs::RunStats& f = r.figures;
      table.add_row(
          {r.run, r.status, or_dash(r.halt_reason), cost_text(f.cost_usd, r.unpriced_models),
           std::to_string(f.calls), std::to_string(f.steps), std::to_string(f.failed),
           std::to_string(f.rolled_back), std::to_string(f.refused), std::to_string(f.agent_denied),
           or_dash(r.session_id), r.resumable ? "yes" : "no", std::to_string(r.checkpoints),
           std::to_string(r.gaps), or_dash(r.started_at), or_dash(r.last_activity)});
    }
    table.print(out, 0);
    return;
  }
  // The run's name comes last: what the next command takes is never cut, and the
  // columns before it are short.
  TextTable table({{"STARTED (UTC)"},
                   {"STATUS"},
                   {"CALLS", true},
                   {"FAILED", true},
                   {"COST-USD", true},
                   {"RUN"}});
  for (const hooks::RunInfo& r : runs) {
    std::string status = r.status;
    if (!r.halt_reason.empty()) status += " (" + r.halt_reason + ")";
    table.add_row({to_the_minute(r.started_at), status, std::to_string(r.figures.calls),
                   std::to_string(r.figures.failed),
                   cost_text(r.figures.cost_usd, r.unpriced_models), r.run});
  }
  table.print(out, 0);
}

}  // namespace cli
