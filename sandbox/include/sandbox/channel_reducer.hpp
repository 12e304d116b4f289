// Reducers bound to typed channels (typed event channels:
// docs/conformance/STATE_MANAGEMENT.md). bind_reducer<S, E>(session, channel, reducer)
// makes every event of type E published on channel reach reducer, which changes slice
// S of session as any reducer does (atomically, inside the session's middleware and
// window, on the publishing thread). The channel carries E itself, or a std::variant of
// which E is one alternative: the reducer then gets only the E events.
//
// Only that channel reaches the reducer: the same event dispatched to the session, or
// published on another channel of the same type, does not. Under the session the event
// travels as a ChannelDelivery<E> (what middleware sees).
//
//   statekit::Channel<PlanEvent> plan_events("plan");  // std::variant<PlanUpdated, ...>
//   statekit::Subscription bound = bind_reducer<Plan, PlanUpdated>(
//       session, plan_events, [](const Slice<Plan>& s, const PlanUpdated& e) { ... });
//   plan_events.publish(PlanUpdated{"123"});  // reaches the reducer
//
// The binding lasts until the Subscription ends; end it before the session is
// destroyed. A reducer that throws makes publish throw, once every subscriber was called.
#pragma once

#include <atomic>
#include <cstdint>
#include <optional>
#include <type_traits>
#include <utility>
#include <variant>

#include "sandbox/session.hpp"
#include "statekit/event_channel.hpp"

namespace sandbox {

// An event of type E as a channel binding hands it to its session.
template <typename E>
struct ChannelDelivery {
  std::uint64_t binding;  // which bind_reducer call it is for
  const E* event;
  statekit::Delivery delivery;  // the channel's name and the event's number there
};

namespace channel_reducer_detail {
std::uint64_t next_binding();

template <typename E, typename C>
const E* as_event(const C& event) {
  if constexpr (std::is_same_v<C, E>) {
    return &event;
  } else {
    return std::get_if<E>(&event);
  }
}
}  // namespace channel_reducer_detail

// Binds reducer of slice S to the events E published on channel (a Channel<E>, or a
// Channel of a std::variant holding E). Declares S (with policy if given).
template <typename S, typename E, typename C>
[[nodiscard]] statekit::Subscription bind_reducer(
    Session& session, statekit::Channel<C>& channel, statekit::Reducer<S, E> reducer,
    std::optional<SlicePolicy> policy = std::nullopt) {
  static_assert(
      std::is_same_v<C, E> || requires(const C& c) { std::get_if<E>(&c); },
      "the channel carries neither E nor a std::variant holding E");
  const std::uint64_t binding = channel_reducer_detail::next_binding();
  session.register_reducer<S, ChannelDelivery<E>>(
      [binding, reducer = std::move(reducer)](const statekit::Slice<S>& slice,
                                              const ChannelDelivery<E>& d) {
        return d.binding == binding ? reducer(slice, *d.event) : slice;
      },
      policy);
  return channel.subscribe([&session, binding](const C& event, const statekit::Delivery& d) {
    if (const E* e = channel_reducer_detail::as_event<E>(event)) {
      session.dispatch(ChannelDelivery<E>{binding, e, d});
    }
  });
}

}  // namespace sandbox
