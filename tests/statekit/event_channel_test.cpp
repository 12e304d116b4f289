// Typed event channels: numbering, filters, subscription order and lifetime, replay
// (and its bounds), union channels, re-entrant subscribers, throwing subscribers,
// concurrent publishers — and subscribers of the wrong type that do not compile.
#include <algorithm>
#include <set>
#include <stdexcept>
#include <string>
#include <thread>
#include <variant>
#include <vector>

#include <gtest/gtest.h>

#include "fsnap/error.hpp"
#include "statekit/event_channel.hpp"

namespace {

using namespace statekit;

struct PlanEvent {
  std::string plan;
  bool high = false;
};
struct ToolEvent {
  std::string tool;
};
struct SystemEvent {
  int code = 0;
};

// A subscriber must take the channel's event type: anything else does not compile.
template <typename C, typename F>
concept Subscribable = requires(C& c, F f) {
  c.subscribe(f);
};
using TakesPlan = void (*)(const PlanEvent&);
using TakesTool = void (*)(const ToolEvent&);
using TakesEither = void (*)(const std::variant<PlanEvent, ToolEvent>&);
static_assert(Subscribable<Channel<PlanEvent>, TakesPlan>);
static_assert(!Subscribable<Channel<PlanEvent>, TakesTool>,
              "a subscriber of another event type must not compile");
static_assert(Subscribable<UnionChannel<PlanEvent, ToolEvent>, TakesEither>);
static_assert(!Subscribable<UnionChannel<PlanEvent, ToolEvent>, TakesPlan>,
              "a union's subscriber takes every member's events");

TEST(EventChannel, EventsAreNumberedAndDeliveredInSubscriptionOrder) {
  Channel<PlanEvent> plans("plan");
  std::vector<std::string> seen;
  Subscription a = plans.subscribe([&](const PlanEvent& e, std::uint64_t seq) {
    seen.push_back("a" + std::to_string(seq) + e.plan);
  });
  Subscription b = plans.subscribe([&](const PlanEvent& e, const Delivery& d) {
    seen.push_back("b" + std::to_string(d.sequence) + e.plan + "@" + d.channel);
  });
  EXPECT_EQ(plans.last_sequence(), 0u);
  EXPECT_EQ(plans.publish({"x"}), 1u);
  EXPECT_EQ(plans.publish({"y"}), 2u);
  EXPECT_EQ(seen, std::vector<std::string>({"a1x", "b1x@plan", "a2y", "b2y@plan"}));
}

TEST(EventChannel, AFilterChoosesTheEventsASubscriberGets) {
  Channel<PlanEvent> plans("plan");
  std::vector<std::string> high;
  Subscription s = plans.subscribe([&](const PlanEvent& e) { high.push_back(e.plan); },
                                   [](const PlanEvent& e) { return e.high; });
  plans.publish({"low", false});
  plans.publish({"urgent", true});
  EXPECT_EQ(high, std::vector<std::string>({"urgent"}));
  EXPECT_EQ(plans.last_sequence(), 2u) << "filtered events are numbered all the same";
}

TEST(EventChannel, ASubscriptionEndsWithItsObjectOrReset) {
  Channel<SystemEvent> system("system");
  int calls = 0;
  {
    Subscription s = system.subscribe([&](const SystemEvent&) { ++calls; });
    system.publish({1});
  }
  system.publish({2});
  Subscription r = system.subscribe([&](const SystemEvent&) { ++calls; });
  Subscription moved = std::move(r);
  system.publish({3});
  moved.reset();
  system.publish({4});
  EXPECT_EQ(calls, 2);
  Subscription outlives;
  {
    Channel<SystemEvent> gone("gone");
    outlives = gone.subscribe([](const SystemEvent&) {});
  }
  outlives.reset();  // the channel is gone: nothing to do, nothing breaks
}

TEST(EventChannel, ReplayReDeliversKeptEventsToOneSubscriberOnly) {
  Channel<PlanEvent> plans("plan", /*replay_capacity=*/3);
  int live = 0;
  Subscription s = plans.subscribe([&](const PlanEvent&) { ++live; });
  for (const char* p : {"1", "2", "3", "4", "5"}) plans.publish({p});
  ASSERT_EQ(live, 5);
  std::vector<std::string> replayed;
  plans.replay(4, [&](const PlanEvent& e, std::uint64_t seq) {
    replayed.push_back(std::to_string(seq) + ":" + e.plan);
  });
  EXPECT_EQ(replayed, std::vector<std::string>({"4:4", "5:5"}));
  EXPECT_EQ(live, 5) << "replay goes to its own function only";
  replayed.clear();
  plans.replay(3, [&](const PlanEvent& e) { replayed.push_back(e.plan); });
  EXPECT_EQ(replayed, std::vector<std::string>({"3", "4", "5"})) << "the oldest kept: 3";
  replayed.clear();
  plans.replay(6, [&](const PlanEvent& e) { replayed.push_back(e.plan); });
  EXPECT_TRUE(replayed.empty()) << "past the last: nothing, and no error";
  try {
    plans.replay(1, [](const PlanEvent&) {});
    FAIL() << "events 1 and 2 were evicted";
  } catch (const fsnap::Error& e) {
    EXPECT_NE(std::string(e.what()).find("keeps events from 3 on"), std::string::npos) << e.what();
  }
}

TEST(EventChannel, UnionChannelsDeliverEveryMembersEvents) {
  Channel<PlanEvent> plans("plan");
  Channel<ToolEvent> tools("tools");
  Channel<SystemEvent> system("system");
  std::vector<std::string> seen;
  Subscription s = (plans | tools | system)
                       .subscribe([&](const std::variant<PlanEvent, ToolEvent, SystemEvent>& e,
                                      const Delivery& d) {
                         std::string what = std::visit(
                             [](const auto& v) -> std::string {
                               using V = std::decay_t<decltype(v)>;
                               if constexpr (std::is_same_v<V, PlanEvent>) return v.plan;
                               if constexpr (std::is_same_v<V, ToolEvent>) return v.tool;
                               if constexpr (std::is_same_v<V, SystemEvent>)
                                 return std::to_string(v.code);
                             },
                             e);
                         seen.push_back(d.channel + "#" + std::to_string(d.sequence) + "=" + what);
                       });
  plans.publish({"p"});
  tools.publish({"Bash"});
  tools.publish({"Read"});
  system.publish({7});
  EXPECT_EQ(seen,
            std::vector<std::string>({"plan#1=p", "tools#1=Bash", "tools#2=Read", "system#1=7"}));
  s.reset();
  tools.publish({"Edit"});
  EXPECT_EQ(seen.size(), 4u) << "one reset ends the subscription to every member";

  std::vector<std::string> only_tools;
  Subscription f = (plans | tools)
                       .subscribe(
                           [&](const std::variant<PlanEvent, ToolEvent>& e) {
                             only_tools.push_back(std::get<ToolEvent>(e).tool);
                           },
                           [](const std::variant<PlanEvent, ToolEvent>& e) {
                             return std::holds_alternative<ToolEvent>(e);
                           });
  plans.publish({"q"});
  tools.publish({"Write"});
  EXPECT_EQ(only_tools, std::vector<std::string>({"Write"}));
}

TEST(EventChannel, SubscribersMayPublishAndUnsubscribeFromACallback) {
  Channel<PlanEvent> plans("plan");
  Channel<SystemEvent> system("system");
  std::vector<int> codes;
  Subscription forward = plans.subscribe([&](const PlanEvent&) { system.publish({1}); });
  Subscription listen = system.subscribe([&](const SystemEvent& e) { codes.push_back(e.code); });
  Subscription once;
  int once_calls = 0;
  once = plans.subscribe([&](const PlanEvent&) {
    ++once_calls;
    once.reset();
  });
  plans.publish({"a"});
  plans.publish({"b"});
  EXPECT_EQ(codes, std::vector<int>({1, 1}));
  EXPECT_EQ(once_calls, 1);
}

TEST(EventChannel, AThrowingSubscriberDoesNotKeepTheEventFromOthers) {
  Channel<SystemEvent> system("system");
  int after = 0;
  Subscription bad = system.subscribe([](const SystemEvent&) { throw std::runtime_error("bad"); });
  Subscription good = system.subscribe([&](const SystemEvent&) { ++after; });
  EXPECT_THROW(system.publish({1}), std::runtime_error);
  EXPECT_EQ(after, 1);
  EXPECT_EQ(system.last_sequence(), 1u) << "published all the same";
}

TEST(EventChannel, ConcurrentPublishersGetUniqueGapFreeNumbers) {
  Channel<SystemEvent> system("system", 0);
  std::mutex m;
  std::set<std::uint64_t> seen;
  Subscription s = system.subscribe([&](const SystemEvent&, std::uint64_t seq) {
    std::lock_guard<std::mutex> lock(m);
    EXPECT_TRUE(seen.insert(seq).second) << seq;
  });
  std::vector<std::thread> threads;
  threads.reserve(4);
  for (int t = 0; t < 4; ++t) {
    threads.emplace_back([&] {
      for (int i = 0; i < 500; ++i) system.publish({i});
    });
  }
  for (std::thread& t : threads) t.join();
  ASSERT_EQ(seen.size(), 2000u);
  EXPECT_EQ(*seen.begin(), 1u);
  EXPECT_EQ(*seen.rbegin(), 2000u);
  EXPECT_THROW(system.replay(1, [](const SystemEvent&) {}), fsnap::Error) << "it keeps none";
}

}  // namespace
