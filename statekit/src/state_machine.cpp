#include "statekit/state_machine.hpp"

#include <algorithm>
#include <sstream>

namespace statekit {

InvalidTransition::InvalidTransition(const std::string& machine, std::string state,
                                     std::string event, const std::string& why)
    : fsnap::Error(fsnap::ErrorCode::kInvalidArgument,
                   machine + ": " + event + " is not allowed in state " + state + ": " + why),
      state_(std::move(state)),
      event_(std::move(event)) {}

void MachineGraph::add_state(const std::string& state, const StateOptions& options) {
  if (state.empty())
    throw fsnap::Error(fsnap::ErrorCode::kInvalidArgument, name_ + ": a state needs a name");
  if (states_.count(state)) {
    throw fsnap::Error(fsnap::ErrorCode::kInvalidArgument,
                       name_ + ": state " + state + " is declared twice");
  }
  if (!options.parent.empty() && !states_.count(options.parent)) {
    throw fsnap::Error(fsnap::ErrorCode::kInvalidArgument,
                       name_ + ": the parent " + options.parent + " of " + state +
                           " is not declared (declare it first)");
  }
  if (options.initial) {
    for (const auto& [other, o] : states_) {
      if (o.initial && o.parent == options.parent) {
        throw fsnap::Error(fsnap::ErrorCode::kInvalidArgument,
                           name_ + ": " + state + " and " + other + " are both initial" +
                               (options.parent.empty() ? "" : " in " + options.parent));
      }
    }
  }
  states_.emplace(state, options);
  order_.push_back(state);
}

void MachineGraph::check_declared(const std::string& state) const {
  if (!states_.count(state)) {
    throw fsnap::Error(fsnap::ErrorCode::kInvalidArgument,
                       name_ + ": state " + state + " is not declared");
  }
}

void MachineGraph::add_transition(std::type_index event, TransitionInfo info,
                                  std::function<bool(const void*)> guard) {
  if (info.from.empty()) {
    throw fsnap::Error(fsnap::ErrorCode::kInvalidArgument,
                       name_ + ": transition " + info.label + " comes from no state");
  }
  for (const std::string& s : info.from) check_declared(s);
  check_declared(info.to);
  transitions_.push_back({event, std::move(info), std::move(guard)});
}

void MachineGraph::add_action(const std::string& state, bool on_enter, StateAction action) {
  check_declared(state);
  (on_enter ? on_enter_ : on_exit_).emplace(state, std::move(action));
}

const StateOptions& MachineGraph::options(const std::string& state) const {
  check_declared(state);
  return states_.at(state);
}

std::vector<std::string> MachineGraph::ancestry(const std::string& state) const {
  std::vector<std::string> out;
  for (std::string s = state; !s.empty(); s = states_.at(s).parent) out.push_back(s);
  return out;
}

bool MachineGraph::within(const std::string& state, const std::string& ancestor) const {
  if (!states_.count(state)) return false;
  std::vector<std::string> chain = ancestry(state);
  return std::find(chain.begin(), chain.end(), ancestor) != chain.end();
}

std::string MachineGraph::leaf_of(const std::string& state, const MachineState& memory) const {
  std::string s = state;
  for (;;) {
    std::vector<std::string> children;
    std::string initial;
    for (const std::string& c : order_) {
      const StateOptions& o = states_.at(c);
      if (o.parent != s) continue;
      children.push_back(c);
      if (o.initial) initial = c;
    }
    if (children.empty()) return s;
    auto remembered = memory.history.find(s);
    if (states_.at(s).history && remembered != memory.history.end() &&
        within(remembered->second, s)) {
      return remembered->second;
    }
    if (initial.empty()) {
      throw fsnap::Error(fsnap::ErrorCode::kInvalidArgument,
                         name_ + ": " + s + " has substates and none of them is initial");
    }
    s = initial;
  }
}

MachineState MachineGraph::initial(std::chrono::system_clock::time_point at) const {
  for (const std::string& s : order_) {
    const StateOptions& o = states_.at(s);
    if (o.initial && o.parent.empty()) {
      MachineState m;
      m.state = leaf_of(s, m);
      m.at = at;
      return m;
    }
  }
  throw fsnap::Error(fsnap::ErrorCode::kInvalidArgument, name_ + ": no initial state is declared");
}

const MachineGraph::Transition* MachineGraph::choose(const std::string& state,
                                                     std::type_index event, const void* value,
                                                     std::string& why) const {
  std::vector<std::string> failed_guards;
  for (const std::string& s : ancestry(state)) {
    for (const Transition& t : transitions_) {
      if (t.event != event) continue;
      if (std::find(t.info.from.begin(), t.info.from.end(), s) == t.info.from.end()) continue;
      if (t.guard && !t.guard(value)) {
        failed_guards.push_back(t.info.guard_label);
        continue;
      }
      return &t;
    }
  }
  if (failed_guards.empty()) {
    why = "no transition on it leaves " + state;
  } else {
    why = "its guard does not hold (";
    for (std::size_t i = 0; i < failed_guards.size(); ++i) {
      why += (i ? ", " : "") + failed_guards[i];
    }
    why += ")";
  }
  return nullptr;
}

std::string MachineGraph::domain_of(const std::string& state, const std::string& target) const {
  // A target that encloses the state (or is it) is left and entered again.
  if (within(state, target)) return states_.at(target).parent;
  std::vector<std::string> target_chain = ancestry(target);
  for (const std::string& s : ancestry(state)) {
    if (std::find(target_chain.begin(), target_chain.end(), s) != target_chain.end()) return s;
  }
  return "";
}

std::optional<Fired> MachineGraph::fire(const MachineState& current, std::type_index event,
                                        const void* value, std::chrono::system_clock::time_point at,
                                        std::string& why) const {
  if (!states_.count(current.state)) {
    why = "the state is not one of " + name_ + "'s";
    return std::nullopt;
  }
  if (states_.at(current.state).terminal) {
    why = current.state + " is terminal";
    return std::nullopt;
  }
  const Transition* chosen = choose(current.state, event, value, why);
  if (!chosen) return std::nullopt;

  Fired fired;
  MachineState& next = fired.state;
  next.history = current.history;
  next.from = current.state;
  next.event = chosen->info.label;
  next.at = at;
  next.state = leaf_of(chosen->info.to, current);
  // Exit up to the nearest state enclosing both the current state and the target, and
  // enter down from it.
  std::string domain = domain_of(current.state, chosen->info.to);
  for (const std::string& s : ancestry(current.state)) {
    if (s == domain) break;
    fired.exited.push_back(s);
  }
  for (const std::string& s : ancestry(next.state)) {
    if (s == domain) break;
    fired.entered.insert(fired.entered.begin(), s);
  }
  for (const std::string& s : fired.exited) {
    if (states_.at(s).history) next.history[s] = current.state;
  }
  auto run = [&](const std::multimap<std::string, StateAction>& actions, const std::string& s) {
    auto [first, last] = actions.equal_range(s);
    for (auto it = first; it != last; ++it) {
      for (Effect& e : it->second(next)) fired.effects.push_back(std::move(e));
    }
  };
  for (const std::string& s : fired.exited) run(on_exit_, s);
  for (const std::string& s : fired.entered) run(on_enter_, s);
  return fired;
}

std::vector<TransitionInfo> MachineGraph::transitions() const {
  std::vector<TransitionInfo> out;
  for (const Transition& t : transitions_) out.push_back(t.info);
  return out;
}

std::string MachineGraph::label_of(std::type_index event) const {
  for (const Transition& t : transitions_) {
    if (t.event == event) return t.info.label;
  }
  return event.name();
}

std::string MachineGraph::to_mermaid() const {
  std::ostringstream out;
  out << "stateDiagram-v2\n";
  // The states of parent (and their substates, nested), at indent.
  auto block = [&](auto& self, const std::string& parent, const std::string& indent) -> void {
    for (const std::string& s : order_) {
      const StateOptions& o = states_.at(s);
      if (o.parent != parent || !o.initial) continue;
      out << indent << "[*] --> " << s << "\n";
    }
    for (const std::string& s : order_) {
      const StateOptions& o = states_.at(s);
      if (o.parent != parent) continue;
      bool composite = std::any_of(order_.begin(), order_.end(),
                                   [&](const std::string& c) { return states_.at(c).parent == s; });
      if (composite) {
        out << indent << "state " << s << " {\n";
        self(self, s, indent + "    ");
        out << indent << "}\n";
        if (o.history) {
          out << indent << "note right of " << s << ": history (re-entered in its last substate)\n";
        }
      } else {
        out << indent << s << "\n";
      }
      if (o.terminal) out << indent << s << " --> [*]\n";
    }
  };
  block(block, "", "    ");
  for (const Transition& t : transitions_) {
    for (const std::string& from : t.info.from) {
      out << "    " << from << " --> " << t.info.to << ": " << t.info.label;
      if (!t.info.guard_label.empty()) out << " [" << t.info.guard_label << "]";
      out << "\n";
    }
  }
  return out.str();
}

}  // namespace statekit
