// Keeping a state machine's value in a session slice: install_machine<S>() registers,
// for each event type the machine accepts, an effect reducer on slice S that fires the
// event and appends the state it leads to. The machine itself (statekit/state_machine.hpp)
// knows nothing of sessions; this header is where the two meet.
#pragma once

#include <concepts>
#include <cstddef>
#include <memory>
#include <utility>

#include "sandbox/session.hpp"
#include "statekit/state_machine.hpp"

namespace sandbox {

namespace machine_slice_detail {

template <typename S, typename E, typename Annotate, typename... Events>
void install_one(Session& session, const statekit::StateMachine<Events...>& machine,
                 const Annotate& annotate, SlicePolicy policy) {
  std::shared_ptr<const fsnap::Clock> clock = session.clock();
  session.register_effect_reducer<S, E>(
      [machine, clock, annotate](const statekit::Slice<S>& slice, const E& event) {
        auto now = clock->now();
        const statekit::MachineState current =
            slice.empty() ? machine.initial(now)
                          : static_cast<const statekit::MachineState&>(*slice.latest());
        statekit::Fired fired = machine.fire(current, event, now);
        S next{};
        static_cast<statekit::MachineState&>(next) = std::move(fired.state);
        if constexpr (std::invocable<const Annotate&, S&, const E&>) {
          annotate(next, event);
        } else {
          (void)annotate;
        }
        return statekit::Reduced<S>{slice.append(std::move(next)), std::move(fired.effects)};
      },
      policy);
}

}  // namespace machine_slice_detail

// Keeps machine in slice S of session (a LOG slice unless policy says otherwise): every
// event of the machine appends the state it leads to, stamped with the session's clock,
// and hands the actions' effects to the session (Session::dispatch runs or queues them).
// An event the state does not accept throws InvalidTransition from dispatch and changes
// no slice. annotate(S&, const E&), when callable for an event type, fills S's own
// fields from the event.
template <typename S, typename Annotate = std::nullptr_t, typename... Events>
requires std::derived_from<S, statekit::MachineState>
void install_machine(Session& session, const statekit::StateMachine<Events...>& machine,
                     Annotate annotate = nullptr, SlicePolicy policy = SlicePolicy::kLog) {
  (machine_slice_detail::install_one<S, Events>(session, machine, annotate, policy), ...);
}

}  // namespace sandbox
