// Slice windows: after each dispatch, a windowed slice keeps its newest items (or drops
// the newest first), those younger than its age limit, and those it must keep in
// preference to the others, never more than its count; a predicate window keeps its
// newest matches only; a window that keeps everything changes nothing; a count window
// (by type, as the config names it, or typed) keeps exactly the newest N, in order,
// dropped from the front of the slice's vector.
#include <chrono>
#include <memory>

#include <gtest/gtest.h>

#include "fsnap/clock.hpp"
#include "sandbox/builtin_slices.hpp"
#include "sandbox/session.hpp"

namespace {

using namespace sandbox;
using namespace statekit;
using namespace std::chrono_literals;

ToolInvoked call(int i, bool ok = true) {
  return ToolInvoked{"c" + std::to_string(i), "Bash", "{}", ok, "", i};
}

std::vector<std::string> ids(const Slice<ToolInvoked>& s) {
  std::vector<std::string> out;
  for (std::size_t i = 0; i < s.size(); ++i) out.push_back(s[i].tool_call_id);
  return out;
}

class SliceWindowTest : public ::testing::Test {
 protected:
  SliceWindowTest() {
    session_.register_reducer<ToolInvoked, ToolInvoked>(reducers::append_all<ToolInvoked>);
  }
  Session session_;
};

TEST_F(SliceWindowTest, ACountWindowKeepsTheNewestAndWhatItMustKeep) {
  SliceWindow<ToolInvoked> w = SliceWindow<ToolInvoked>::count(3);
  w.keep = [](const ToolInvoked& t) { return !t.success; };
  session_.set_window(w);
  session_.dispatch(call(1));
  session_.dispatch(call(2, false));
  session_.dispatch(call(3));
  session_.dispatch(call(4));
  session_.dispatch(call(5));
  // c1 and c3 went, oldest first; the failure c2 stays.
  EXPECT_EQ(ids(session_.all<ToolInvoked>()), (std::vector<std::string>{"c2", "c4", "c5"}));
  // Newest first (LIFO): the new item goes again.
  SliceWindow<ToolInvoked> lifo = SliceWindow<ToolInvoked>::count(3);
  lifo.newest_first = true;
  session_.set_window(lifo);
  session_.dispatch(call(6));
  EXPECT_EQ(ids(session_.all<ToolInvoked>()), (std::vector<std::string>{"c2", "c4", "c5"}));
}

TEST_F(SliceWindowTest, AnAgeWindowDropsWhatIsTooOldAndAWindowKeepingAllChangesNothing) {
  auto clock = std::make_shared<fsnap::FixedClock>(std::chrono::system_clock::time_point{} +
                                                   std::chrono::hours(1000));
  Session session(clock);
  session.register_reducer<ToolInvoked, ToolInvoked>(reducers::append_all<ToolInvoked>);
  // An item's time: its elapsed_ms, as seconds since the epoch's 1000th hour.
  auto time_of = [](const ToolInvoked& t) {
    return std::chrono::system_clock::time_point{} + std::chrono::hours(1000) +
           std::chrono::seconds(t.elapsed_ms);
  };
  session.set_window(SliceWindow<ToolInvoked>::age(60s, time_of));
  session.dispatch(call(0));
  SliceItems before = session.all<ToolInvoked>().items();
  clock->advance(30s);
  session.dispatch(call(30));
  EXPECT_EQ(session.all<ToolInvoked>().size(), 2u);
  clock->advance(60s);  // now 90 s: c0 is 90 s old
  session.dispatch(call(90));
  EXPECT_EQ(ids(session.all<ToolInvoked>()), (std::vector<std::string>{"c30", "c90"}));
  EXPECT_FALSE(before.shares_root_with(session.all<ToolInvoked>().items()));
  // Keeping everything, the slice is the reducer's own result (no copy).
  SliceItems items = session.all<ToolInvoked>().items();
  EXPECT_TRUE(
      windowed(SliceWindow<ToolInvoked>::count(10), items, clock->now()).shares_root_with(items));
}

TEST_F(SliceWindowTest, ACountWindowKeepsExactlyTheNewestNInOrder) {
  for (auto [window, calls] : {std::pair{10, 11}, {33, 40}, {33, 33}, {10, 1000}, {1, 70}}) {
    for (bool by_type : {true, false}) {
      Session session;
      session.register_reducer<ToolInvoked, ToolInvoked>(reducers::append_all<ToolInvoked>);
      if (by_type) {
        session.set_count_window(typeid(ToolInvoked), static_cast<std::size_t>(window));
      } else {
        session.set_window(SliceWindow<ToolInvoked>::count(static_cast<std::size_t>(window)));
      }
      for (int i = 0; i < calls; ++i) session.dispatch(call(i));
      std::vector<std::string> expected;
      for (int i = std::max(0, calls - window); i < calls; ++i)
        expected.push_back(call(i).tool_call_id);
      Slice<ToolInvoked> kept = session.all<ToolInvoked>();
      EXPECT_EQ(ids(kept), expected) << window << " of " << calls;
      // The oldest went from the front: the items left sit where they were.
      EXPECT_EQ(kept.items().start(), static_cast<std::size_t>(std::max(0, calls - window)));
    }
  }
}

TEST_F(SliceWindowTest, APredicateWindowKeepsItsNewestMatchesOnly) {
  session_.set_window(
      SliceWindow<ToolInvoked>::predicate([](const ToolInvoked& t) { return !t.success; }, 10));
  // 100 calls, every other one a failure: 50 failures, of which the newest 10 stay.
  for (int i = 0; i < 100; ++i) session_.dispatch(call(i, i % 2 == 0));
  std::vector<std::string> expected;
  for (int i = 81; i < 100; i += 2) expected.push_back("c" + std::to_string(i));
  EXPECT_EQ(ids(session_.all<ToolInvoked>()), expected);
  // Without a count, every match stays and nothing else.
  session_.set_window(
      SliceWindow<ToolInvoked>::predicate([](const ToolInvoked& t) { return !t.success; }, 0));
  session_.dispatch(call(100));
  session_.dispatch(call(101, false));
  EXPECT_EQ(session_.all<ToolInvoked>().size(), 11u);
  EXPECT_EQ(session_.all<ToolInvoked>().latest()->tool_call_id, "c101");
}

TEST_F(SliceWindowTest, ACountWindowBoundsWhatItKeepsInPreferenceToo) {
  SliceWindow<ToolInvoked> w = SliceWindow<ToolInvoked>::count(3);
  w.keep = [](const ToolInvoked& t) { return !t.success; };
  session_.set_window(w);
  for (int i = 1; i <= 5; ++i) session_.dispatch(call(i, false));
  session_.dispatch(call(6));
  // Five failures and a success: the success goes first, then the oldest failures.
  EXPECT_EQ(ids(session_.all<ToolInvoked>()), (std::vector<std::string>{"c3", "c4", "c5"}));
}

}  // namespace
