// Middleware around reducers: run in the order installed, may transform an event of
// its type, skip a reducer, or stop a whole dispatch (no slice changes); the runtime's
// redaction and timing middleware, and redaction on a LedgerRun's session.
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "sandbox/builtin_slices.hpp"
#include "sandbox/session.hpp"
#include "statekit/reducer_timing.hpp"
#include "test_support.hpp"

namespace {

using namespace sandbox;
using namespace statekit;

struct Note {
  std::string text;
};

class MiddlewareTest : public ::testing::Test {
 protected:
  MiddlewareTest() {
    session_.register_reducer<Note, Note>([this](const Slice<Note>& s, const Note& n) {
      trace_.push_back("reducer " + n.text);
      return s.append(n);
    });
    session_.register_reducer<ToolInvoked, Note>([](const Slice<ToolInvoked>& s, const Note& n) {
      return s.append(ToolInvoked{n.text, "t", "{}", true, "", 0});
    });
  }
  Middleware tracer(const std::string& name) {
    return [this, name](const ReducerContext& ctx, const ReducerNext& next) {
      trace_.push_back(name + " in");
      SliceItems out = next(ctx);
      trace_.push_back(name + " out");
      return out;
    };
  }

  Session session_;
  std::vector<std::string> trace_;
};

TEST_F(MiddlewareTest, RunInTheOrderInstalledAroundEachReducer) {
  session_.use(tracer("a"));
  session_.use(tracer("b"));
  session_.dispatch(Note{"x"});
  // Two reducers run for a Note: each inside a and b.
  std::vector<std::string> one = {"a in", "b in", "reducer x", "b out", "a out"};
  ASSERT_EQ(trace_.size(), 9u);
  EXPECT_EQ(std::vector<std::string>(trace_.begin(), trace_.begin() + 5), one);
  EXPECT_EQ(session_.all<Note>().size(), 1u);
}

TEST_F(MiddlewareTest, AMiddlewareTransformsSkipsOrStops) {
  session_.use(typed_middleware<Note>(
      [](const Note& n, const TypedNext<Note>& next) { return next(Note{n.text + "!"}); }));
  session_.dispatch(Note{"hi"});
  EXPECT_EQ(session_.all<Note>()[0].text, "hi!");
  EXPECT_EQ(session_.all<ToolInvoked>()[0].tool_call_id, "hi!");
  // Skipping one reducer: the Note slice stays, the other reducer runs.
  session_.use([](const ReducerContext& ctx, const ReducerNext& next) {
    return ctx.slice_type == typeid(Note) ? ctx.previous : next(ctx);
  });
  session_.dispatch(Note{"skipped"});
  EXPECT_EQ(session_.all<Note>().size(), 1u);
  EXPECT_EQ(session_.all<ToolInvoked>().size(), 2u);
  // Stopping the dispatch: no slice changes at all, and the reason is told.
  session_.use([](const ReducerContext& ctx, const ReducerNext& next) -> SliceItems {
    const Note* n = ctx.event_as<Note>();
    if (n != nullptr && n->text == "bad!") throw DispatchStopped("no bad notes");
    return next(ctx);
  });
  try {
    session_.dispatch(Note{"bad"});
    ADD_FAILURE() << "the dispatch went through";
  } catch (const DispatchStopped& e) {
    EXPECT_EQ(e.reason(), "no bad notes");
  }
  EXPECT_EQ(session_.all<ToolInvoked>().size(), 2u) << "nothing of the stopped dispatch";
}

TEST_F(MiddlewareTest, TimingCountsReducerRunsBySlice) {
  auto times = std::make_shared<ReducerTimes>();
  session_.use(timing_middleware(times));
  session_.dispatch(Note{"1"});
  session_.dispatch(Note{"2"});
  std::map<std::type_index, ReducerTimes::Entry> by = times->by_slice();
  EXPECT_EQ(by[typeid(Note)].runs, 2u);
  EXPECT_EQ(by[typeid(ToolInvoked)].runs, 2u);
}

}  // namespace
