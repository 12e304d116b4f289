// State machines (docs/conformance/STATE_MANAGEMENT.md): the phases of a workflow as
// states, the events that move between them as C++ types, and every allowed move
// declared once. A machine is defined by StateMachine<Events...>: the event types it
// accepts are part of its type, so firing — or declaring a transition for — any other
// type does not compile. Which transitions the current state allows is known only at run
// time: an event the current state does not accept is an InvalidTransition, and nothing
// changes.
//
// Features:
//   - hierarchical states: a state with a parent is a substate; a transition declared
//     from a parent applies in every substate (the innermost declaration wins), and
//     entering a parent enters its initial substate;
//   - history: a parent declared with history re-enters the substate it last left;
//   - guards: a transition with a guard is taken only if guard(event) holds; several
//     transitions of one event from one state are tried in declaration order;
//   - terminal states accept no event;
//   - entry and exit actions return effects (statekit/effects.hpp) as data, in the order
//     they happen: exits innermost first, then entries outermost first.
// Parallel regions are not supported.
//
// The machine's value, MachineState, is a plain value: the leaf state, the move that
// led to it and the history. install_machine<S>() (sandbox/machine_slice.hpp) keeps it
// in a Session slice S (a LOG slice by default: one item per transition, the newest is
// the current state), so the moves a run made are in its ledger.
//
//   struct Start {};
//   struct Finish { bool ok; };
//   StateMachine<Start, Finish> phase("phase");
//   phase.state("idle", {.initial = true})
//       .state("busy")
//       .state("done", {.terminal = true})
//       .state("failed", {.terminal = true})
//       .transition<Start>({"idle"}, "busy", "start")
//       .transition<Finish>({"busy"}, "done", "finish", &Finish::ok, "ok")
//       .transition<Finish>({"busy"}, "failed", "finish");
//   MachineState s = phase.initial(now);
//   s = phase.fire(s, Start{}, now).state;       // busy
//   phase.fire(s, Start{}, now);                  // throws InvalidTransition
//   std::cout << phase.to_mermaid();              // stateDiagram-v2 ...
//
// Thread-safety: define a machine on one thread; after that every const method may be
// called from any thread. Copies share the definition.
#pragma once

#include <chrono>
#include <concepts>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <typeindex>
#include <utility>
#include <vector>

#include "fsnap/error.hpp"
#include "statekit/effects.hpp"

namespace statekit {

// How a state is declared.
struct StateOptions {
  std::string parent;     // the enclosing state ("" at the top)
  bool initial = false;   // the state entered first (of the machine, or of its parent)
  bool terminal = false;  // accepts no event
  bool history = false;   // a parent that re-enters the substate it last left
};

// Where a machine stands, and the move that led there.
struct MachineState {
  std::string state;  // the current leaf state
  std::string from;   // the leaf state before the move ("" for the initial state)
  std::string event;  // the transition's label ("" for the initial state)
  std::chrono::system_clock::time_point at{};
  std::map<std::string, std::string> history;  // parent with history -> leaf it last left
  friend bool operator==(const MachineState&, const MachineState&) = default;
};

// An event the current state does not accept (or a terminal state's). Nothing changed.
class InvalidTransition : public fsnap::Error {
 public:
  InvalidTransition(const std::string& machine, std::string state, std::string event,
                    const std::string& why);
  const std::string& state() const { return state_; }
  const std::string& event() const { return event_; }

 private:
  std::string state_;
  std::string event_;
};

// What one transition did.
struct Fired {
  MachineState state;                // after the move
  std::vector<std::string> exited;   // innermost first
  std::vector<std::string> entered;  // outermost first
  Effects effects;                   // of the exit, then the entry actions, in order
};

// An entry or exit action: the effects to perform, given the state after the move.
using StateAction = std::function<Effects(const MachineState&)>;

// A declared transition, for printing.
struct TransitionInfo {
  std::vector<std::string> from;
  std::string to;
  std::string label;
  std::string guard_label;  // "" without a guard
};

// The untyped definition behind StateMachine: states, transitions, actions.
class MachineGraph {
 public:
  explicit MachineGraph(std::string name) : name_(std::move(name)) {}
  const std::string& name() const { return name_; }

  // fsnap::Error kInvalidArgument for a duplicate name, an undeclared parent, or a second
  // initial state of the same parent.
  void add_state(const std::string& state, const StateOptions& options);
  // fsnap::Error kInvalidArgument for an undeclared state.
  void add_transition(std::type_index event, TransitionInfo info,
                      std::function<bool(const void*)> guard);
  void add_action(const std::string& state, bool on_enter, StateAction action);

  // The initial leaf state. fsnap::Error kInvalidArgument if no initial state is declared.
  MachineState initial(std::chrono::system_clock::time_point at) const;
  // The move event makes from current, or nullopt with the reason in why.
  std::optional<Fired> fire(const MachineState& current, std::type_index event, const void* value,
                            std::chrono::system_clock::time_point at, std::string& why) const;
  // Whether state is ancestor or ancestor's substate (at any depth), or ancestor itself.
  bool within(const std::string& state, const std::string& ancestor) const;

  std::vector<std::string> states() const { return order_; }  // in declaration order
  const StateOptions& options(const std::string& state) const;
  std::vector<TransitionInfo> transitions() const;
  // The label of event's first transition (for messages).
  std::string label_of(std::type_index event) const;
  // A Mermaid stateDiagram-v2 of the machine.
  std::string to_mermaid() const;

 private:
  struct Transition {
    std::type_index event;
    TransitionInfo info;
    std::function<bool(const void*)> guard;
  };
  void check_declared(const std::string& state) const;
  // The leaf entered when state is entered (its initial or remembered substate).
  std::string leaf_of(const std::string& state, const MachineState& memory) const;
  std::vector<std::string> ancestry(const std::string& state) const;  // state, ..., top
  // The transition on event that fires in state: the innermost state's whose guard holds;
  // nullptr, with why, when none does.
  const Transition* choose(const std::string& state, std::type_index event, const void* value,
                           std::string& why) const;
  // The innermost state that encloses both state and target and is neither left nor
  // entered by a transition between them ("" for none).
  std::string domain_of(const std::string& state, const std::string& target) const;

  std::string name_;
  std::vector<std::string> order_;
  std::map<std::string, StateOptions> states_;
  std::vector<Transition> transitions_;
  std::multimap<std::string, StateAction> on_enter_;
  std::multimap<std::string, StateAction> on_exit_;
};

// E is one of Events.
template <typename E, typename... Events>
concept OneOf = (std::same_as<E, Events> || ...);

// A state machine accepting the event types Events.
template <typename... Events>
class StateMachine {
  static_assert(sizeof...(Events) > 0, "a state machine needs at least one event type");

 public:
  explicit StateMachine(std::string name)
      : graph_(std::make_shared<MachineGraph>(std::move(name))) {}

  const std::string& name() const { return graph_->name(); }
  const MachineGraph& graph() const { return *graph_; }

  StateMachine& state(const std::string& name, StateOptions options = {}) {
    graph_->add_state(name, options);
    return *this;
  }
  // A transition on E from any of from (or their substates) to to; with a guard, only
  // when guard(event) holds (guard_label names the condition in diagrams).
  template <typename E>
  requires OneOf<E, Events...> StateMachine& transition(std::vector<std::string> from,
                                                        std::string to, std::string label,
                                                        std::function<bool(const E&)> guard = {},
                                                        std::string guard_label = {}) {
    std::function<bool(const void*)> erased;
    if (guard) {
      erased = [guard = std::move(guard)](const void* e) {
        return guard(*static_cast<const E*>(e));
      };
      if (guard_label.empty()) guard_label = "guard";
    }
    graph_->add_transition(
        typeid(E), {std::move(from), std::move(to), std::move(label), std::move(guard_label)},
        std::move(erased));
    return *this;
  }
  StateMachine& on_enter(const std::string& state, StateAction action) {
    graph_->add_action(state, true, std::move(action));
    return *this;
  }
  StateMachine& on_exit(const std::string& state, StateAction action) {
    graph_->add_action(state, false, std::move(action));
    return *this;
  }

  MachineState initial(std::chrono::system_clock::time_point at = {}) const {
    return graph_->initial(at);
  }
  // The move event makes from current. InvalidTransition if current does not accept it.
  template <typename E>
  requires OneOf<E, Events...> Fired fire(const MachineState& current, const E& event,
                                          std::chrono::system_clock::time_point at)
  const {
    std::string why;
    std::optional<Fired> fired = graph_->fire(current, typeid(E), &event, at, why);
    if (!fired) throw InvalidTransition(name(), current.state, graph_->label_of(typeid(E)), why);
    return std::move(*fired);
  }
  // Whether current accepts event.
  template <typename E>
  requires OneOf<E, Events...>
  bool can_fire(const MachineState& current, const E& event) const {
    std::string why;
    return graph_->fire(current, typeid(E), &event, {}, why).has_value();
  }
  std::string to_mermaid() const { return graph_->to_mermaid(); }

 private:
  std::shared_ptr<MachineGraph> graph_;
};

}  // namespace statekit
