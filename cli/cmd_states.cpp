// `shadowbox states`: the run lifecycle machine, and the moves a run made through it.
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <iostream>

#include "commands.hpp"
#include "fsnap/checkpoint.hpp"
#include "fsnap/error.hpp"
#include "hooks/run_list.hpp"
#include "output.hpp"
#include "run_figures.hpp"
#include "runs/run_lifecycle.hpp"
#include "runs/run_meta.hpp"
#include "sandbox/ledger.hpp"
#include "text_table.hpp"

namespace cli {

namespace {

using Poco::JSON::Array;
using Poco::JSON::Object;

// The moves run made, oldest first (none for a run recorded before lifecycles were).
// Error kNotFound if the store has no ledger record of run.
std::vector<runs::RunLifecycle> moves_of(const Context& context, const std::string& run,
                                         std::string& recorded_status) {
  fsnap::Store store = context.open_store(false);
  sandbox::Ledger ledger(context.open_repo(store));
  std::optional<sandbox::LedgerRecord> latest = ledger.latest(run);
  if (!latest) {
    throw fsnap::Error(fsnap::ErrorCode::kNotFound,
                       "run " + run + " has no record in this store (shadowbox runs lists them)");
  }
  if (!latest->has_session()) return {};
  sandbox::SessionSnapshot session = ledger.session(*latest);
  if (std::optional<runs::RunStatus> status = runs::latest_run_status(session)) {
    recorded_status = status->status;
  }
  return session.slice<runs::RunLifecycle>().to_vector();
}

Object::Ptr machine_json(const statekit::MachineGraph& graph) {
  Object::Ptr out = make_object();
  out->set("machine", graph.name());
  Array::Ptr states = new Array;
  for (const std::string& name : graph.states()) {
    const statekit::StateOptions& o = graph.options(name);
    Object::Ptr s = make_object();
    s->set("name", name);
    s->set("parent", o.parent.empty() ? Poco::Dynamic::Var() : Poco::Dynamic::Var(o.parent));
    s->set("initial", o.initial);
    s->set("terminal", o.terminal);
    s->set("history", o.history);
    states->add(s);
  }
  out->set("states", states);
  Array::Ptr transitions = new Array;
  for (const statekit::TransitionInfo& t : graph.transitions()) {
    Object::Ptr j = make_object();
    Array::Ptr from = new Array;
    for (const std::string& f : t.from) from->add(f);
    j->set("from", from);
    j->set("to", t.to);
    j->set("event", t.label);
    j->set("guard",
           t.guard_label.empty() ? Poco::Dynamic::Var() : Poco::Dynamic::Var(t.guard_label));
    transitions->add(j);
  }
  out->set("transitions", transitions);
  return out;
}

void print_machine(const statekit::MachineGraph& graph) {
  std::cout << "states of the " << graph.name() << ":\n";
  for (const std::string& name : graph.states()) {
    const statekit::StateOptions& o = graph.options(name);
    std::size_t depth = 0;
    for (std::string p = o.parent; !p.empty(); p = graph.options(p).parent) ++depth;
    std::string marks;
    if (o.initial) marks += " (initial)";
    if (o.terminal) marks += " (terminal)";
    if (o.history) marks += " (history)";
    std::cout << "  " << std::string(2 * depth, ' ') << name << marks << '\n';
  }
  std::cout << "transitions:\n";
  for (const statekit::TransitionInfo& t : graph.transitions()) {
    std::string from;
    for (const std::string& f : t.from) from += (from.empty() ? "" : "|") + f;
    char line[256];
    std::snprintf(line, sizeof line, "  %-24s -> %-9s %s%s\n", from.c_str(), t.to.c_str(),
                  t.label.c_str(),
                  t.guard_label.empty() ? "" : (" [" + t.guard_label + "]").c_str());
    std::cout << line;
  }
}

// A run's moves as --json lists them.
Array::Ptr moves_json(const std::vector<runs::RunLifecycle>& moves) {
  Array::Ptr list = new Array;
  for (const runs::RunLifecycle& m : moves) {
    Object::Ptr j = make_object();
    j->set("at", fsnap::format_timestamp(m.at));
    j->set("from", m.from);
    j->set("to", m.state);
    j->set("event", m.event);
    j->set("reason", m.reason);
    list->add(j);
  }
  return list;
}

// After the Mermaid diagram: the states the run went through, and where it is now.
void print_mermaid_marks(const std::vector<runs::RunLifecycle>& moves) {
  if (moves.empty()) return;
  std::vector<std::string> visited;
  for (const runs::RunLifecycle& m : moves) {
    if (std::find(visited.begin(), visited.end(), m.state) == visited.end()) {
      visited.push_back(m.state);
    }
  }
  std::string list;
  for (const std::string& s : visited) list += (list.empty() ? "" : ",") + s;
  std::cout << "    classDef visited fill:#e8f0fe\n"
            << "    classDef current fill:#fde293,stroke-width:3px\n"
            << "    class " << list << " visited\n"
            << "    class " << moves.back().state << " current\n";
}

}  // namespace

int cmd_states(const Context& context, const Args& parsed) {
  const statekit::MachineGraph& graph = runs::run_lifecycle().graph();
  std::optional<std::string> run;
  if (!parsed.operands().empty()) {
    run = parsed.operands()[0];
  }
  std::string recorded_status;
  std::vector<runs::RunLifecycle> moves;
  hooks::RunInfo info;  // the run's status and figures, as `runs` shows them
  std::string now;      // where the run is: its status when the machine has that state
  if (run) {
    moves = moves_of(context, *run, recorded_status);
    fsnap::Store store = context.open_store(false);
    info = hooks::describe_run(store, context.open_repo(store), *run,
                               context.config.run.resume_max_age, std::chrono::system_clock::now());
    const std::vector<std::string>& states = graph.states();
    bool known = std::find(states.begin(), states.end(), info.status) != states.end();
    now = known ? info.status : moves.empty() ? "" : moves.back().state;
  }

  if (context.options.json) {
    Object::Ptr out = machine_json(graph);
    if (run) {
      out->set("run", *run);
      out->set("current", now.empty() ? Poco::Dynamic::Var() : Poco::Dynamic::Var(now));
      out->set("status", info.status);
      set_figures_json(*out, info.figures, info.unpriced_models);
      out->set("moves", moves_json(moves));
    }
    print_json(std::cout, out);
    return 0;
  }
  if (parsed.has("--mermaid")) {
    std::cout << graph.to_mermaid();
    print_mermaid_marks(moves);
    return 0;
  }
  // The machine when asked for, or when there is no run to show.
  if (!run || parsed.has("--machine")) {
    print_machine(graph);
    if (!run) return 0;
    std::cout << '\n';
  }
  if (moves.empty()) {
    std::cout << "run " << *run
              << " recorded no lifecycle moves (it predates them, or no agent ran in it)"
              << (recorded_status.empty() ? "" : "; its recorded status: " + recorded_status)
              << ":\n  " << figures_line(info.figures, info.unpriced_models) << '\n';
    return 0;
  }
  std::cout << "run " << *run << ", now " << now;
  if (now != moves.back().state) {
    // What lives of the run says more than its records (runs shows the same).
    std::cout << " (its last recorded move is to " << moves.back().state
              << (now == "crashed"
                      ? ": its supervisor died; the crash is recorded when the run is resumed"
                      : "")
              << ")";
  }
  std::cout << ":\n  " << figures_line(info.figures, info.unpriced_models) << '\n';
  TextTable table({{"AT (UTC)"}, {"FROM"}, {""}, {"TO"}, {"EVENT"}, {"REASON"}});
  for (const runs::RunLifecycle& m : moves) {
    std::string at = fsnap::format_timestamp(m.at);  // 2026-11-26T19:45:38.123456Z
    if (at.size() >= 19) at = at.substr(0, 10) + " " + at.substr(11, 8);
    table.add_row({at, m.from, "->", m.state, m.event, m.reason});
  }
  table.print(std::cout, kTableWidth, TextTable::Overflow::kWrap);
  return 0;
}

}  // namespace cli
