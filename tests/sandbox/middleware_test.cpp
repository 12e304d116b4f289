// Middleware around reducers: run in the order installed, may transform an event of
// its type, skip a reducer, or stop a whole dispatch (no slice changes); per-slice
// middleware runs around its slice's reducers only, inside the session-wide ones, and
// every middleware sees the whole reducer context; the runtime's redaction and timing
// middleware, and redaction on a LedgerRun's session.
#include <chrono>
#include <memory>
#include <stdexcept>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "fsnap/clock.hpp"
#include "sandbox/builtin_slices.hpp"
#include "sandbox/session.hpp"
#include "sandbox/slice_types.hpp"
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

TEST_F(MiddlewareTest, PerSliceMiddlewareRunsAroundItsSlicesReducersOnly) {
  session_.use(tracer("wide"));
  session_.use<Note>(tracer("note1"));
  session_.use<Note>(tracer("note2"));
  session_.dispatch(Note{"x"});
  // The Note reducer inside the session-wide middleware, then its own in their order;
  // the ToolInvoked reducer of the same event inside the session-wide one only.
  std::vector<std::string> expected = {"wide in",   "note1 in",  "note2 in",
                                       "reducer x", "note2 out", "note1 out",
                                       "wide out",  "wide in",   "wide out"};
  EXPECT_EQ(trace_, expected);
  // A slice's middleware may skip its reducer; the other slice is not affected.
  session_.use<Note>([](const ReducerContext& ctx, const ReducerNext&) { return ctx.previous; });
  session_.dispatch(Note{"y"});
  EXPECT_EQ(session_.all<Note>().size(), 1u);
  EXPECT_EQ(session_.all<ToolInvoked>().size(), 2u);
}

TEST_F(MiddlewareTest, AMiddlewareSeesTheWholeReducerContext) {
  auto clock = std::make_shared<fsnap::FixedClock>(std::chrono::system_clock::time_point{} +
                                                   std::chrono::hours(7));
  Session session(clock);
  session.register_reducer<Note, Note>(
      [](const Slice<Note>& s, const Note& n) { return s.append(n); });
  session.dispatch(Note{"first"});
  struct Seen {
    std::string event_text, reducer_name, session_id, call;
    std::size_t previous = 0;
    bool slice_is_note = false;
    std::chrono::system_clock::time_point at;
  };
  std::vector<Seen> seen;
  session.use<Note>([&](const ReducerContext& ctx, const ReducerNext& next) {
    Seen s;
    s.event_text = ctx.event_as<Note>()->text;
    s.slice_is_note = ctx.slice_type == typeid(Note);
    s.previous = Slice<Note>(ctx.previous).size();
    s.reducer_name = std::string(ctx.reducer_name);
    s.session_id = std::string(ctx.session_id);
    s.at = ctx.dispatched_at;
    auto call = ctx.metadata.find("call");
    s.call = call == ctx.metadata.end() ? "" : call->second;
    seen.push_back(s);
    return next(ctx);
  });
  clock->advance(std::chrono::seconds(5));
  session.dispatch(Note{"second"}, {{"call", "c9"}});
  session.dispatch(Note{"third"});
  ASSERT_EQ(seen.size(), 2u);
  EXPECT_EQ(seen[0].event_text, "second");
  EXPECT_TRUE(seen[0].slice_is_note);
  EXPECT_EQ(seen[0].previous, 1u) << "the slice before the reducer";
  EXPECT_EQ(seen[0].reducer_name,
            SliceTypes::name_of(typeid(Note)) + " on " + SliceTypes::name_of(typeid(Note)));
  EXPECT_EQ(seen[0].session_id, session.id());
  EXPECT_EQ(seen[0].at, clock->now()) << "the session's clock";
  EXPECT_EQ(seen[0].call, "c9") << "the dispatch's metadata";
  EXPECT_EQ(seen[1].previous, 2u);
  EXPECT_EQ(seen[1].call, "") << "none given: empty";
  EXPECT_EQ(session.all<Note>().size(), 3u);
}

TEST_F(MiddlewareTest, AMiddlewareCatchesOrTransformsAReducersError) {
  Session session;
  session.register_reducer<Note, Note>([](const Slice<Note>& s, const Note& n) -> Slice<Note> {
    if (n.text == "bad") throw std::runtime_error("reducer failed");
    return s.append(n);
  });
  // Caught: the slice stays as it was and the dispatch goes through.
  session.use<Note>([](const ReducerContext& ctx, const ReducerNext& next) -> SliceItems {
    try {
      return next(ctx);
    } catch (const std::runtime_error&) {
      const Note* n = ctx.event_as<Note>();
      if (n->text == "bad") return ctx.previous;
      throw DispatchStopped(std::string("refused ") + n->text);
    }
  });
  session.dispatch(Note{"ok"});
  EXPECT_NO_THROW(session.dispatch(Note{"bad"}));
  EXPECT_EQ(session.all<Note>().size(), 1u);
  // Transformed: a reducer's error for another event becomes the middleware's own.
  session.register_reducer<ToolInvoked, Note>(
      [](const Slice<ToolInvoked>&, const Note&) -> Slice<ToolInvoked> {
        throw std::runtime_error("always");
      });
  session.use<ToolInvoked>([](const ReducerContext& ctx, const ReducerNext& next) -> SliceItems {
    try {
      return next(ctx);
    } catch (const std::runtime_error& e) {
      throw DispatchStopped(e.what());
    }
  });
  try {
    session.dispatch(Note{"x"});
    ADD_FAILURE() << "the dispatch went through";
  } catch (const DispatchStopped& e) {
    EXPECT_EQ(e.reason(), "always");
  }
  EXPECT_EQ(session.all<Note>().size(), 1u) << "a stopped dispatch changes no slice";
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
