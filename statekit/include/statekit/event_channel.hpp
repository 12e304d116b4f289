// Typed event channels (docs/conformance/STATE_MANAGEMENT.md): a Channel<E> carries
// events of one type E, numbered 1, 2, 3, ... as they are published, to the subscribers
// whose filter accepts them. The type is checked when the program is compiled: a
// subscriber that cannot take a `const E&` does not compile. Channels compose: `a | b`
// is a union channel whose subscribers get a std::variant of the members' types, and a
// channel keeps its newest events so a subscriber can replay from a sequence number.
//
//   Channel<ToolEvent> tools("tools");
//   Channel<policy::SafetyEvent> safety("safety");
//   Subscription s = safety.subscribe(
//       [](const policy::SafetyEvent& e) { std::cerr << e.reason << '\n'; },
//       [](const policy::SafetyEvent& e) { return policy::stops_run(e.type); });
//   Subscription both = (tools | safety).subscribe(
//       [](const std::variant<ToolEvent, policy::SafetyEvent>& e, const Delivery& d) { ... });
//   tools.replay(100, [](const ToolEvent& e, std::uint64_t seq) { ... });
//
// Delivery: publish calls the subscribers on the publishing thread, in subscription
// order, outside the channel's lock — a subscriber may publish, subscribe or
// unsubscribe. One that throws does not keep the event from the others; publish
// rethrows the first exception after all were called. With several threads publishing
// at once, a subscriber may see sequence numbers out of order.
//
// Thread-safety: every method may be called from any thread. A Subscription may outlive
// its channel (it then does nothing); a union channel refers to its members, which must
// outlive it.
#pragma once

#include <concepts>
#include <cstdint>
#include <deque>
#include <exception>
#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <tuple>
#include <utility>
#include <variant>
#include <vector>

#include "fsnap/error.hpp"

namespace statekit {

// Ends a subscription when destroyed (or reset). Movable.
class Subscription {
 public:
  Subscription() = default;
  explicit Subscription(std::function<void()> cancel) { cancels_.push_back(std::move(cancel)); }
  Subscription(Subscription&&) noexcept = default;
  Subscription& operator=(Subscription&& other) noexcept {
    if (this != &other) {
      reset();
      cancels_ = std::move(other.cancels_);
    }
    return *this;
  }
  Subscription(const Subscription&) = delete;
  Subscription& operator=(const Subscription&) = delete;
  ~Subscription() { reset(); }

  // Ends it now.
  void reset() {
    for (std::function<void()>& cancel : cancels_) cancel();
    cancels_.clear();
  }
  // One subscription ending both.
  void join(Subscription other) {
    for (std::function<void()>& cancel : other.cancels_) cancels_.push_back(std::move(cancel));
    other.cancels_.clear();
  }

 private:
  std::vector<std::function<void()>> cancels_;
};

// Where a delivered event comes from.
struct Delivery {
  std::string channel;     // the name of the channel it was published on
  std::uint64_t sequence;  // its number there
};

// A subscriber of events of type E: f(event), f(event, sequence) or f(event, delivery).
template <typename F, typename E>
concept SubscriberOf = std::invocable<F&, const E&> ||
    std::invocable<F&, const E&, std::uint64_t> || std::invocable<F&, const E&, const Delivery&>;

namespace channel_detail {
template <typename E, typename F>
void call(F& fn, const E& event, const Delivery& delivery) {
  if constexpr (std::invocable<F&, const E&, const Delivery&>) {
    fn(event, delivery);
  } else if constexpr (std::invocable<F&, const E&, std::uint64_t>) {
    fn(event, delivery.sequence);
  } else {
    fn(event);
  }
}
}  // namespace channel_detail

// A named channel of events of type E.
template <typename E>
class Channel {
 public:
  // Keeps the newest replay_capacity events for replay.
  explicit Channel(std::string name, std::size_t replay_capacity = 1024)
      : state_(std::make_shared<State>()) {
    state_->name = std::move(name);
    state_->capacity = replay_capacity;
  }
  Channel(const Channel&) = delete;
  Channel& operator=(const Channel&) = delete;

  const std::string& name() const { return state_->name; }
  using Event = E;

  // Publishes event; returns its sequence number.
  std::uint64_t publish(E event) {
    std::vector<std::shared_ptr<Subscriber>> subscribers;
    std::shared_ptr<const E> shared = std::make_shared<const E>(std::move(event));
    std::uint64_t sequence = 0;
    {
      std::lock_guard<std::mutex> lock(state_->mutex);
      sequence = ++state_->last;
      if (state_->capacity > 0) {
        state_->buffer.emplace_back(sequence, shared);
        if (state_->buffer.size() > state_->capacity) state_->buffer.pop_front();
      }
      subscribers = state_->subscribers;
    }
    Delivery delivery{state_->name, sequence};
    std::exception_ptr first;
    for (const std::shared_ptr<Subscriber>& s : subscribers) {
      if (!s->active()) continue;  // unsubscribed meanwhile
      try {
        if (!s->filter || s->filter(*shared)) s->deliver(*shared, delivery);
      } catch (...) {
        if (!first) first = std::current_exception();
      }
    }
    if (first) std::rethrow_exception(first);
    return sequence;
  }

  // Calls fn with every event published from now on that filter accepts (all without a
  // filter), until the returned Subscription ends.
  template <SubscriberOf<E> F>
  Subscription subscribe(F fn, std::function<bool(const E&)> filter = {}) {
    auto s = std::make_shared<Subscriber>();
    s->filter = std::move(filter);
    s->deliver = [fn = std::move(fn)](const E& event, const Delivery& d) mutable {
      channel_detail::call(fn, event, d);
    };
    {
      std::lock_guard<std::mutex> lock(state_->mutex);
      state_->subscribers.push_back(s);
    }
    std::weak_ptr<State> weak = state_;
    return Subscription([weak, s] {
      s->cancel();
      if (std::shared_ptr<State> state = weak.lock()) {
        std::lock_guard<std::mutex> lock(state->mutex);
        std::erase(state->subscribers, s);
      }
    });
  }

  // Calls fn, and no one else, with the kept events numbered from_sequence on, in
  // order. fsnap::Error kInvalidArgument if events from from_sequence on are no longer kept
  // (the message names the oldest kept one); none if from_sequence is past the last.
  template <SubscriberOf<E> F>
  void replay(std::uint64_t from_sequence, F fn) const {
    std::vector<std::pair<std::uint64_t, std::shared_ptr<const E>>> events;
    {
      std::lock_guard<std::mutex> lock(state_->mutex);
      std::uint64_t oldest =
          state_->buffer.empty() ? state_->last + 1 : state_->buffer.front().first;
      if (from_sequence < oldest && from_sequence <= state_->last) {
        throw fsnap::Error(fsnap::ErrorCode::kInvalidArgument,
                           "channel " + state_->name + " keeps events from " +
                               std::to_string(oldest) + " on; " + std::to_string(from_sequence) +
                               " is gone");
      }
      for (const auto& entry : state_->buffer) {
        if (entry.first >= from_sequence) events.push_back(entry);
      }
    }
    for (const auto& [sequence, event] : events) {
      channel_detail::call(fn, *event, Delivery{state_->name, sequence});
    }
  }

  // The number of the newest event published (0 before the first).
  std::uint64_t last_sequence() const {
    std::lock_guard<std::mutex> lock(state_->mutex);
    return state_->last;
  }

 private:
  struct Subscriber {
    std::function<bool(const E&)> filter;
    std::function<void(const E&, const Delivery&)> deliver;
    std::mutex mutex;
    bool cancelled = false;
    bool active() {
      std::lock_guard<std::mutex> lock(mutex);
      return !cancelled;
    }
    void cancel() {
      std::lock_guard<std::mutex> lock(mutex);
      cancelled = true;
    }
  };
  struct State {
    std::string name;
    std::size_t capacity = 0;
    mutable std::mutex mutex;
    std::uint64_t last = 0;
    std::deque<std::pair<std::uint64_t, std::shared_ptr<const E>>> buffer;
    std::vector<std::shared_ptr<Subscriber>> subscribers;
  };
  std::shared_ptr<State> state_;
};

// Channels of several event types as one: its subscribers get each member's events as
// a std::variant<Es...>, with the Delivery naming the member channel.
template <typename... Es>
class UnionChannel {
 public:
  using Event = std::variant<Es...>;
  explicit UnionChannel(Channel<Es>&... members) : members_(&members...) {}
  explicit UnionChannel(std::tuple<Channel<Es>*...> members) : members_(members) {}

  // Subscribes fn to every member; filter sees the variant.
  template <SubscriberOf<Event> F>
  Subscription subscribe(F fn, std::function<bool(const Event&)> filter = {}) {
    auto shared = std::make_shared<F>(std::move(fn));
    Subscription all;
    std::apply([&](auto*... channel) { (all.join(subscribe_to(*channel, shared, filter)), ...); },
               members_);
    return all;
  }

  const std::tuple<Channel<Es>*...>& members() const { return members_; }

 private:
  template <typename E, typename F>
  static Subscription subscribe_to(Channel<E>& channel, std::shared_ptr<F> fn,
                                   std::function<bool(const Event&)> filter) {
    return channel.subscribe([fn, filter](const E& e, const Delivery& d) {
      Event event(std::in_place_type<E>, e);
      if (!filter || filter(event)) channel_detail::call(*fn, event, d);
    });
  }

  std::tuple<Channel<Es>*...> members_;
};

// a | b: the union of two channels (or of a union and a channel).
template <typename A, typename B>
UnionChannel<A, B> operator|(Channel<A>& a, Channel<B>& b) {
  return UnionChannel<A, B>(a, b);
}
template <typename... As, typename B>
UnionChannel<As..., B> operator|(const UnionChannel<As...>& u, Channel<B>& b) {
  return UnionChannel<As..., B>(std::tuple_cat(u.members(), std::tuple<Channel<B>*>(&b)));
}

}  // namespace statekit
