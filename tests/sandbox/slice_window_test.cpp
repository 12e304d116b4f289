// Slice windows: after each dispatch, a windowed slice keeps its newest items (or drops
// the newest first), those younger than its age limit, and always those it must keep;
// a window that keeps everything changes nothing; a count window by type evicts whole
// leaves of 32.
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

TEST_F(SliceWindowTest, ACountWindowByTypeEvictsWholeLeaves) {
  session_.set_count_window(typeid(ToolInvoked), 40);
  for (int i = 0; i < 41; ++i) session_.dispatch(call(i));
  // 41 > 40: a whole leaf of 32 goes, the newest 9 stay.
  Slice<ToolInvoked> s = session_.all<ToolInvoked>();
  ASSERT_EQ(s.size(), 9u);
  EXPECT_EQ(s[0].tool_call_id, "c32");
  for (int i = 41; i < 72; ++i) session_.dispatch(call(i));
  EXPECT_EQ(session_.all<ToolInvoked>().size(), 40u);
}

}  // namespace
