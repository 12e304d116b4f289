// Slice windows: after each dispatch, a windowed slice keeps its newest items (or drops
// the newest first), those younger than its age limit, and those it must keep in
// preference to the others, never more than its count; a predicate window keeps its
// newest matches only; a window that keeps everything changes nothing; a count window
// (by type, as the config names it, or typed) keeps exactly the newest N, in order,
// dropped from the front of the slice's vector. A priority window evicts the lowest
// priority first, a sampling window thins the history deterministically, a composite
// keeps what every one of its windows keeps, and eviction observers are told what went
// after the dispatch, a throwing one changing nothing of it.
#include <chrono>
#include <memory>
#include <stdexcept>
#include <string>
#include <vector>

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

TEST_F(SliceWindowTest, APriorityWindowEvictsTheLowestPriorityFirst) {
  // An item's priority: its elapsed_ms; of equal ones the oldest goes first.
  session_.set_window(SliceWindow<ToolInvoked>::by_priority(
      3, [](const ToolInvoked& t) { return static_cast<double>(t.elapsed_ms); }));
  for (int p : {5, 1, 9, 1, 7}) {
    session_.dispatch(ToolInvoked{
        "p" + std::to_string(p) + "-" + std::to_string(session_.all<ToolInvoked>().size()), "Bash",
        "{}", true, "", p});
  }
  // 5 1 9, then 1: the older 1 goes; then 7: the newer 1 goes. The order stays.
  EXPECT_EQ(ids(session_.all<ToolInvoked>()), (std::vector<std::string>{"p5-0", "p9-2", "p7-3"}));
  // keep's matches still go after the others, whatever their priority.
  SliceWindow<ToolInvoked> w = SliceWindow<ToolInvoked>::by_priority(
      2, [](const ToolInvoked& t) { return static_cast<double>(t.elapsed_ms); });
  w.keep = [](const ToolInvoked& t) { return !t.success; };
  session_.set_window(w);
  session_.dispatch(ToolInvoked{"low-failure", "Bash", "{}", false, "", 0});
  EXPECT_EQ(ids(session_.all<ToolInvoked>()), (std::vector<std::string>{"p9-2", "low-failure"}));
}

TEST_F(SliceWindowTest, ASamplingWindowThinsTheHistoryAndKeepsTheNewest) {
  session_.set_window(SliceWindow<ToolInvoked>::sampled(4));
  for (int i = 1; i <= 4; ++i) session_.dispatch(call(i));
  EXPECT_EQ(session_.all<ToolInvoked>().size(), 4u) << "within the count: all stay";
  // Five: every other one goes, counting back from the newest.
  session_.dispatch(call(5));
  EXPECT_EQ(ids(session_.all<ToolInvoked>()), (std::vector<std::string>{"c1", "c3", "c5"}));
  session_.dispatch(call(6));
  session_.dispatch(call(7));
  EXPECT_EQ(ids(session_.all<ToolInvoked>()), (std::vector<std::string>{"c1", "c5", "c7"}));
  // A thousand calls later: never more than four, the newest among them, reaching back
  // to the first half of the run, and the same every time (no randomness).
  std::vector<std::string> first;
  for (int run = 0; run < 2; ++run) {
    Session session;
    session.register_reducer<ToolInvoked, ToolInvoked>(reducers::append_all<ToolInvoked>);
    session.set_window(SliceWindow<ToolInvoked>::sampled(4));
    for (int i = 0; i < 1000; ++i) {
      session.dispatch(call(i));
      ASSERT_LE(session.all<ToolInvoked>().size(), 4u);
    }
    Slice<ToolInvoked> kept = session.all<ToolInvoked>();
    EXPECT_GE(kept.size(), 2u);
    EXPECT_EQ(kept.latest()->tool_call_id, "c999");
    EXPECT_LT(kept[0].elapsed_ms, 500);
    if (run == 0) first = ids(kept);
    EXPECT_EQ(ids(kept), first);
  }
}

TEST_F(SliceWindowTest, ACompositeKeepsOnlyWhatEveryOneOfItsWindowsKeeps) {
  auto clock = std::make_shared<fsnap::FixedClock>(std::chrono::system_clock::time_point{} +
                                                   std::chrono::hours(1000));
  Session session(clock);
  session.register_reducer<ToolInvoked, ToolInvoked>(reducers::append_all<ToolInvoked>);
  auto time_of = [](const ToolInvoked& t) {
    return std::chrono::system_clock::time_point{} + std::chrono::hours(1000) +
           std::chrono::seconds(t.elapsed_ms);
  };
  // At most three, none older than a minute.
  session.set_window(SliceWindow<ToolInvoked>::composite(
      {SliceWindow<ToolInvoked>::count(3), SliceWindow<ToolInvoked>::age(60s, time_of)}));
  for (int i = 0; i < 5; ++i) session.dispatch(call(i));
  EXPECT_EQ(ids(session.all<ToolInvoked>()), (std::vector<std::string>{"c2", "c3", "c4"}))
      << "the count";
  clock->advance(100s);
  session.dispatch(call(90));
  EXPECT_EQ(ids(session.all<ToolInvoked>()), (std::vector<std::string>{"c90"})) << "the age";
  // Each window judges the whole slice: of the newest three, the failures only (not the
  // newest three failures).
  session_.set_window(SliceWindow<ToolInvoked>::composite(
      {SliceWindow<ToolInvoked>::count(3),
       SliceWindow<ToolInvoked>::predicate([](const ToolInvoked& t) { return !t.success; }, 0)}));
  session_.seed<ToolInvoked>({call(1, false), call(2, false), call(3), call(4)});
  session_.dispatch(call(5, false));
  EXPECT_EQ(ids(session_.all<ToolInvoked>()), (std::vector<std::string>{"c5"}));
}

TEST_F(SliceWindowTest, ASnapshotHoldsTheWindowedSliceAndARollbackTheSliceItHeld) {
  session_.set_window(SliceWindow<ToolInvoked>::count(2));
  for (int i = 1; i <= 2; ++i) session_.dispatch(call(i));
  SessionSnapshot early = session_.snapshot({}, /*include_all=*/true);
  for (int i = 3; i <= 5; ++i) session_.dispatch(call(i));
  SessionSnapshot late = session_.snapshot({}, /*include_all=*/true);
  EXPECT_EQ(ids(late.slice<ToolInvoked>()), (std::vector<std::string>{"c4", "c5"}));
  // c3 was evicted between the snapshots: no snapshot holds it, nothing brings it back.
  // A rollback to the earlier snapshot gives the slice as that snapshot held it.
  session_.rollback(early, /*preserve_logs=*/false);
  EXPECT_EQ(ids(session_.all<ToolInvoked>()), (std::vector<std::string>{"c1", "c2"}));
  session_.rollback(late, /*preserve_logs=*/false);
  EXPECT_EQ(ids(session_.all<ToolInvoked>()), (std::vector<std::string>{"c4", "c5"}));
}

TEST_F(SliceWindowTest, AnEvictionObserverIsToldWhatWentOnceTheDispatchIsInPlace) {
  session_.set_window(SliceWindow<ToolInvoked>::count(2));
  std::vector<std::string> told;
  session_.on_evict<ToolInvoked>([&](const Eviction<ToolInvoked>& e) {
    // The session holds the windowed slice already (and may be read here).
    EXPECT_TRUE(session_.all<ToolInvoked>().items().shares_root_with(e.after.items()));
    EXPECT_EQ(e.before.size(), e.after.size() + e.evicted.size());
    for (const std::string& id : ids(e.evicted)) told.push_back(id);
  });
  session_.dispatch(call(1));
  session_.dispatch(call(2));
  EXPECT_TRUE(told.empty()) << "nothing evicted, nothing told";
  session_.dispatch(call(3));
  session_.dispatch(call(4));
  EXPECT_EQ(told, (std::vector<std::string>{"c1", "c2"}));
  // A window that rebuilds the slice tells the same way.
  told.clear();
  session_.set_window(
      SliceWindow<ToolInvoked>::predicate([](const ToolInvoked& t) { return !t.success; }, 0));
  session_.dispatch(call(5, false));
  EXPECT_EQ(told, (std::vector<std::string>{"c3", "c4"}));
}

TEST_F(SliceWindowTest, AThrowingObserverChangesNothingOfTheDispatch) {
  session_.set_window(SliceWindow<ToolInvoked>::count(1));
  session_.on_evict<ToolInvoked>(
      [](const Eviction<ToolInvoked>&) { throw std::runtime_error("observer broke"); });
  int told = 0;
  session_.on_evict<ToolInvoked>([&](const Eviction<ToolInvoked>&) { ++told; });
  session_.dispatch(call(1));
  std::size_t applied = 0;
  EXPECT_NO_THROW(applied = session_.dispatch(call(2)));
  EXPECT_EQ(applied, 1u);
  EXPECT_EQ(ids(session_.all<ToolInvoked>()), (std::vector<std::string>{"c2"}));
  EXPECT_EQ(told, 1) << "the observer after it still ran";
  std::vector<std::string> failures = session_.take_observer_failures();
  ASSERT_EQ(failures.size(), 1u);
  EXPECT_NE(failures[0].find("observer broke"), std::string::npos);
  EXPECT_TRUE(session_.take_observer_failures().empty());
  // The session works on (its lock was not left held).
  session_.dispatch(call(3));
  EXPECT_EQ(ids(session_.all<ToolInvoked>()), (std::vector<std::string>{"c3"}));
  EXPECT_EQ(told, 2);
}

}  // namespace
