// Reducers bound to typed channels (docs/conformance/STATE_MANAGEMENT.md, typed event
// channels): events published on the channel reach the slice's reducer, and only those.
#include <stdexcept>
#include <string>
#include <variant>

#include <gtest/gtest.h>

#include "sandbox/channel_reducer.hpp"
#include "statekit/event_channel.hpp"

namespace {

using namespace sandbox;
using namespace statekit;

struct PlanUpdated {
  std::string plan_id;
};
struct PlanCompleted {
  std::string plan_id;
};
using PlanEvent = std::variant<PlanUpdated, PlanCompleted>;

struct Plan {
  std::string id;
  std::string status;
};

Slice<Plan> updated(const Slice<Plan>& s, const PlanUpdated& e) {
  if (e.plan_id.empty()) throw std::runtime_error("no plan id");
  return s.append(Plan{e.plan_id, "updated"});
}

TEST(ChannelReducerTest, EventsPublishedOnTheChannelReachTheReducerAndNoOthers) {
  Session session;
  Channel<PlanUpdated> plans("plan");
  Channel<PlanUpdated> elsewhere("other");
  Subscription bound = bind_reducer<Plan, PlanUpdated>(session, plans, updated);
  plans.publish(PlanUpdated{"123"});
  ASSERT_EQ(session.all<Plan>().size(), 1u);
  EXPECT_EQ(session.latest<Plan>()->id, "123");

  elsewhere.publish(PlanUpdated{"456"});
  session.dispatch(PlanUpdated{"789"});
  EXPECT_EQ(session.all<Plan>().size(), 1u) << "only the bound channel reaches the reducer";

  EXPECT_THROW(plans.publish(PlanUpdated{""}), std::runtime_error);
  EXPECT_EQ(session.all<Plan>().size(), 1u) << "a reducer that throws changes nothing";

  bound.reset();
  plans.publish(PlanUpdated{"after"});
  EXPECT_EQ(session.all<Plan>().size(), 1u) << "the binding ended with its subscription";
}

TEST(ChannelReducerTest, AReducerOfOneAlternativeGetsOnlyThoseEventsOfAVariantChannel) {
  Session session;
  Channel<PlanEvent> plan_events("plan");
  Subscription on_update = bind_reducer<Plan, PlanUpdated>(session, plan_events, updated);
  Subscription on_complete = bind_reducer<Plan, PlanCompleted>(
      session, plan_events, [](const Slice<Plan>& s, const PlanCompleted& e) {
        return s.append(Plan{e.plan_id, "done"});
      });
  plan_events.publish(PlanUpdated{"1"});
  plan_events.publish(PlanCompleted{"1"});
  plan_events.publish(PlanUpdated{"2"});
  Slice<Plan> plans = session.all<Plan>();
  ASSERT_EQ(plans.size(), 3u) << "each event reached one reducer, once";
  EXPECT_EQ(plans[0].status, "updated");
  EXPECT_EQ(plans[1].status, "done");
  EXPECT_EQ(plans[2].id, "2");
}

}  // namespace
