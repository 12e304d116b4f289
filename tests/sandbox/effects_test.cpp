// Effects: data until a runner performs them; sequence, all_of, race, then, retry and
// compensation; failures reported in outcomes; reducers that return effects.
#include <algorithm>
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <mutex>
#include <stdexcept>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "sandbox/session.hpp"
#include "statekit/effects.hpp"

namespace {

using namespace sandbox;
using namespace statekit;
using std::chrono::milliseconds;

struct Note {
  std::string text;
};
struct Fail {
  std::string why;
};
struct Fetch {
  static constexpr const char* kName = "Fetch";
  std::string url;
};
struct WaitForStop {};

// A runner whose handlers record what they did.
class EffectsTest : public ::testing::Test {
 protected:
  EffectsTest() {
    runner_.handle<Note>([this](const Note& n) {
      std::lock_guard<std::mutex> lock(mutex_);
      done_.push_back(n.text);
    });
    runner_.handle<Fail>([](const Fail& f) { throw std::runtime_error(f.why); });
    runner_.handle<Fetch>([](const Fetch& f) { return "body of " + f.url; });
    // Waits until asked to stop (bounded, so a broken race cannot hang the test).
    runner_.handle<WaitForStop>([this](const WaitForStop&, const std::stop_token& stop) {
      std::mutex m;
      std::condition_variable_any cv;
      std::unique_lock<std::mutex> lock(m);
      cv.wait_for(lock, stop, std::chrono::seconds(10), [] { return false; });
      if (stop.stop_requested()) ++stopped_;
      throw std::runtime_error("gave up");
    });
  }

  std::vector<std::string> done() {
    std::lock_guard<std::mutex> lock(mutex_);
    return done_;
  }

  EffectRunner runner_;
  std::mutex mutex_;
  std::vector<std::string> done_;
  std::atomic<int> stopped_{0};
};

TEST_F(EffectsTest, EffectsAreDataUntilRun) {
  Effects plan = {Effect::of(Note{"a"}), Effect::sequence({Effect::of(Fetch{"u"})})};
  ASSERT_NE(plan[0].as<Note>(), nullptr);
  EXPECT_EQ(plan[0].as<Note>()->text, "a");
  EXPECT_EQ(plan[0].as<Fetch>(), nullptr);
  EXPECT_EQ(plan[1].kind(), Effect::Kind::kSequence);
  EXPECT_EQ(plan[1].children()[0].as<Fetch>()->url, "u");
  EXPECT_EQ(plan[1].describe(), "sequence(Fetch)");
  EXPECT_TRUE(done().empty()) << "nothing is performed by building effects";
}

TEST_F(EffectsTest, HandlerGetsTheValueAndItsResultIsTheOutcome) {
  EffectOutcome o = runner_.run(Effect::of(Fetch{"x"}));
  EXPECT_TRUE(o.ok) << o.error;
  EXPECT_EQ(std::any_cast<std::string>(o.value), "body of x");
  EXPECT_EQ(o.attempts, 1);
}

TEST_F(EffectsTest, SequenceRunsInOrderAndStopsAtTheFirstFailure) {
  EffectOutcome o =
      runner_.run(Effect::sequence({Effect::of(Note{"1"}), Effect::of(Note{"2"}),
                                    Effect::of(Fail{"boom"}), Effect::of(Note{"3"})}));
  EXPECT_FALSE(o.ok);
  EXPECT_NE(o.error.find("boom"), std::string::npos) << o.error;
  EXPECT_EQ(done(), std::vector<std::string>({"1", "2"}));
}

TEST_F(EffectsTest, AllOfRunsEveryEffectAndReportsEachFailure) {
  EffectOutcome o =
      runner_.run(Effect::all_of({Effect::of(Fail{"first"}), Effect::of(Note{"a"}),
                                  Effect::of(Fail{"second"}), Effect::of(Note{"b"})}));
  EXPECT_FALSE(o.ok);
  EXPECT_NE(o.error.find("first"), std::string::npos) << o.error;
  EXPECT_NE(o.error.find("second"), std::string::npos) << o.error;
  std::vector<std::string> d = done();
  std::sort(d.begin(), d.end());
  EXPECT_EQ(d, std::vector<std::string>({"a", "b"}));

  EffectOutcome both =
      runner_.run(Effect::all_of({Effect::of(Fetch{"p"}), Effect::of(Fetch{"q"})}));
  ASSERT_TRUE(both.ok);
  auto values = std::any_cast<std::vector<std::any>>(both.value);
  ASSERT_EQ(values.size(), 2u);
  EXPECT_EQ(std::any_cast<std::string>(values[1]), "body of q");
}

TEST_F(EffectsTest, RaceTakesTheFirstSuccessAndStopsTheOthers) {
  auto start = std::chrono::steady_clock::now();
  EffectOutcome o = runner_.run(Effect::race(
      {Effect::of(WaitForStop{}), Effect::of(Fetch{"fast"}), Effect::of(WaitForStop{})}));
  EXPECT_TRUE(o.ok) << o.error;
  EXPECT_EQ(std::any_cast<std::string>(o.value), "body of fast");
  EXPECT_EQ(stopped_.load(), 2) << "both losers were asked to stop";
  EXPECT_LT(std::chrono::steady_clock::now() - start, std::chrono::seconds(5))
      << "the losers ended when asked, not at their own time";
}

TEST_F(EffectsTest, RaceFailsOnlyWhenEveryEffectFailed) {
  EffectOutcome o = runner_.run(Effect::race({Effect::of(Fail{"a"}), Effect::of(Fail{"b"})}));
  EXPECT_FALSE(o.ok);
  EXPECT_NE(o.error.find("every effect of the race failed"), std::string::npos) << o.error;
  EXPECT_TRUE(runner_.run(Effect::race({Effect::of(Fail{"a"}), Effect::of(Note{"ok"})})).ok);
}

TEST_F(EffectsTest, ThenMakesTheNextEffectOfTheResult) {
  EffectOutcome o = runner_.run(Effect::then(Effect::of(Fetch{"token"}), [](const std::any& v) {
    return Effect::of(Fetch{"data?t=" + std::any_cast<std::string>(v)});
  }));
  ASSERT_TRUE(o.ok) << o.error;
  EXPECT_EQ(std::any_cast<std::string>(o.value), "body of data?t=body of token");
  bool called = false;
  EffectOutcome failed =
      runner_.run(Effect::then(Effect::of(Fail{"no token"}), [&](const std::any&) {
        called = true;
        return Effect::of(Note{"never"});
      }));
  EXPECT_FALSE(failed.ok);
  EXPECT_FALSE(called);
}

TEST_F(EffectsTest, RetryBacksOffExponentiallyUpToMaxAttempts) {
  std::vector<milliseconds> slept;
  runner_.set_sleep([&](milliseconds d) { slept.push_back(d); });
  int calls = 0;
  runner_.handle<Fail>([&](const Fail& f) {
    if (++calls < 3) throw std::runtime_error(f.why);
  });
  EffectOutcome o = runner_.run(
      Effect::of(Fail{"flaky"}).with_retry(RetryPolicy::exponential(5, milliseconds(10))));
  EXPECT_TRUE(o.ok);
  EXPECT_EQ(o.attempts, 3);
  EXPECT_EQ(slept, std::vector<milliseconds>({milliseconds(10), milliseconds(20)}));

  calls = -100;  // fails every time now
  slept.clear();
  EffectOutcome gave_up = runner_.run(
      Effect::of(Fail{"down"}).with_retry(RetryPolicy::exponential(4, milliseconds(10))));
  EXPECT_FALSE(gave_up.ok);
  EXPECT_EQ(gave_up.attempts, 4);
  EXPECT_EQ(slept,
            std::vector<milliseconds>({milliseconds(10), milliseconds(20), milliseconds(40)}));
}

TEST_F(EffectsTest, RetryJitterShortensEachDelayByTheDrawnShareWithinItsBound) {
  std::vector<milliseconds> slept;
  runner_.set_sleep([&](milliseconds d) { slept.push_back(d); });
  std::vector<double> draws = {0.0, 0.5, 0.25, 0.999};
  std::size_t next = 0;
  runner_.set_random([&] { return draws[next++]; });
  EffectOutcome o =
      runner_.run(Effect::of(Fail{"down"})
                      .with_retry(RetryPolicy::exponential(5, milliseconds(100)).with_jitter(0.5)));
  EXPECT_FALSE(o.ok);
  EXPECT_EQ(o.attempts, 5);
  // Nominal 100, 200, 400, 800; each shortened by jitter * r of itself.
  EXPECT_EQ(slept, std::vector<milliseconds>({milliseconds(100), milliseconds(150),
                                              milliseconds(350), milliseconds(400)}));
  for (std::size_t i = 0; i < slept.size(); ++i) {
    milliseconds nominal(100 << i);
    EXPECT_LE(slept[i], nominal);
    EXPECT_GE(slept[i], nominal / 2) << "never shorter than (1 - jitter) of the delay";
  }
}

// An effect that moves the runner's clock on as if it took ms.
struct TakesTime {
  int ms;
};

TEST_F(EffectsTest, AnEffectThatOutlastsItsTimeoutFails) {
  std::chrono::steady_clock::time_point now{};
  runner_.set_clock([&] { return now; });
  runner_.handle<TakesTime>([&](const TakesTime& t) {
    now += milliseconds(t.ms);
    return t.ms;
  });
  EffectOutcome quick = runner_.run(Effect::of(TakesTime{90}).with_timeout(milliseconds(100)));
  EXPECT_TRUE(quick.ok) << quick.error;
  EXPECT_EQ(std::any_cast<int>(quick.value), 90);
  EffectOutcome slow = runner_.run(Effect::of(TakesTime{150}).with_timeout(milliseconds(100)));
  EXPECT_FALSE(slow.ok);
  EXPECT_FALSE(slow.value.has_value()) << "a late result is not the outcome's";
  EXPECT_NE(slow.error.find("TakesTime timed out after 100 ms"), std::string::npos) << slow.error;
  // Each attempt has its own timeout; the retry's outcome is the last attempt's.
  runner_.set_sleep([](milliseconds) {});
  int calls = 0;
  runner_.handle<TakesTime>([&](const TakesTime& t) {
    now += milliseconds(++calls == 1 ? t.ms : 10);
    return calls;
  });
  EffectOutcome retried = runner_.run(Effect::of(TakesTime{150})
                                          .with_timeout(milliseconds(100))
                                          .with_retry(RetryPolicy::exponential(2)));
  EXPECT_TRUE(retried.ok) << retried.error;
  EXPECT_EQ(retried.attempts, 2);
}

TEST_F(EffectsTest, ATimeoutAsksTheHandlerToStopThroughItsToken) {
  auto start = std::chrono::steady_clock::now();
  EffectOutcome o = runner_.run(Effect::of(WaitForStop{}).with_timeout(milliseconds(5)));
  EXPECT_FALSE(o.ok);
  EXPECT_NE(o.error.find("timed out after 5 ms"), std::string::npos) << o.error;
  EXPECT_EQ(stopped_.load(), 1) << "the handler saw its stop_token asked";
  EXPECT_LT(std::chrono::steady_clock::now() - start, std::chrono::seconds(5));
}

TEST_F(EffectsTest, CompensationRunsOnlyAfterAFailure) {
  EffectOutcome ok = runner_.run(Effect::of(Note{"work"}).on_failure(Effect::of(Note{"undo"})));
  EXPECT_TRUE(ok.ok);
  EXPECT_EQ(done(), std::vector<std::string>({"work"}));
  EffectOutcome failed =
      runner_.run(Effect::of(Fail{"broke"}).on_failure(Effect::of(Note{"undo"})));
  EXPECT_FALSE(failed.ok) << "compensated is still failed";
  EXPECT_NE(failed.error.find("compensated by Note"), std::string::npos) << failed.error;
  EXPECT_EQ(done(), std::vector<std::string>({"work", "undo"}));
}

TEST_F(EffectsTest, AnEffectWithoutHandlerFailsNamingItsType) {
  struct Unhandled {};
  std::vector<EffectOutcome> outcomes =
      runner_.run_all({Effect::of(Unhandled{}), Effect::of(Note{"after"})});
  ASSERT_EQ(outcomes.size(), 2u);
  EXPECT_FALSE(outcomes[0].ok);
  EXPECT_NE(outcomes[0].error.find("no handler for effect"), std::string::npos);
  EXPECT_NE(outcomes[0].error.find("Unhandled"), std::string::npos) << outcomes[0].error;
  EXPECT_TRUE(outcomes[1].ok) << "run_all goes on";
}

TEST_F(EffectsTest, CompositionsNest) {
  EffectOutcome o = runner_.run(Effect::sequence(
      {Effect::of(Note{"first"}),
       Effect::all_of({Effect::of(Note{"x"}),
                       Effect::race({Effect::of(Fail{"slow"}), Effect::of(Note{"y"})})}),
       Effect::of(Note{"last"})}));
  EXPECT_TRUE(o.ok) << o.error;
  std::vector<std::string> d = done();
  ASSERT_EQ(d.size(), 4u);
  EXPECT_EQ(d.front(), "first");
  EXPECT_EQ(d.back(), "last");
}

// Reducers that return effects: dispatch queues them, dispatch_effects returns them, and
// a dispatch that throws leaves none.
struct Counter {
  int n = 0;
};
struct Bump {
  bool fail = false;
};

TEST(EffectReducers, DispatchQueuesEffectsAndAFailedDispatchLeavesNone) {
  Session session;
  session.register_effect_reducer<Counter, Bump>([](const Slice<Counter>& s, const Bump&) {
    int n = s.empty() ? 0 : s.latest()->n;
    return Reduced<Counter>{Slice<Counter>::of(Counter{n + 1}),
                            {Effect::of(Note{"bumped to " + std::to_string(n + 1)})}};
  });
  session.register_reducer<Counter, Bump>([](const Slice<Counter>& s, const Bump& b) {
    if (b.fail) throw std::runtime_error("refused");
    return s;
  });
  session.dispatch(Bump{});
  Session::Dispatched d = session.dispatch_effects(Bump{});
  ASSERT_EQ(d.effects.size(), 1u);
  EXPECT_EQ(d.effects[0].as<Note>()->text, "bumped to 2");
  EXPECT_THROW(session.dispatch(Bump{true}), std::runtime_error);
  EXPECT_EQ(session.latest<Counter>()->n, 2);
  Effects queued = session.take_effects();
  ASSERT_EQ(queued.size(), 1u) << "only the first dispatch's: the failed one's are dropped";
  EXPECT_EQ(queued[0].as<Note>()->text, "bumped to 1");
  EXPECT_TRUE(session.take_effects().empty());
}

}  // namespace

namespace {

// With an effect runner, the effects dispatch queues are performed at once, after the
// slices are stored; without one they wait for take_effects.
TEST(EffectReducers, TheSessionsRunnerPerformsQueuedEffectsAfterTheDispatch) {
  Session session;
  std::vector<std::string> seen;  // what each effect saw of the slice when performed
  session.register_effect_reducer<Counter, Bump>([](const Slice<Counter>& s, const Bump& b) {
    if (b.fail) throw std::runtime_error("refused");
    int n = s.empty() ? 0 : s.latest()->n;
    return Reduced<Counter>{
        Slice<Counter>::of(Counter{n + 1}),
        {Effect::of(Note{"bumped to " + std::to_string(n + 1)}), Effect::of(Fail{"no route"})}};
  });
  session.dispatch(Bump{});  // no runner yet: queued
  auto runner = std::make_shared<EffectRunner>();
  runner->handle<Note>([&](const Note& n) {
    seen.push_back(n.text + " (slice at " + std::to_string(session.latest<Counter>()->n) + ")");
  });
  runner->handle<Fail>([](const Fail& f) { throw std::runtime_error(f.why); });
  std::vector<EffectOutcome> outcomes;
  session.set_effect_runner(runner, [&](const EffectOutcome& o) { outcomes.push_back(o); });
  session.dispatch(Bump{});
  EXPECT_EQ(seen,
            std::vector<std::string>({"bumped to 1 (slice at 2)", "bumped to 2 (slice at 2)"}))
      << "the queue first, then this dispatch's, each after the slice was stored";
  ASSERT_EQ(outcomes.size(), 4u);
  EXPECT_FALSE(outcomes[1].ok);
  EXPECT_NE(outcomes[1].error.find("no route"), std::string::npos) << outcomes[1].error;
  EXPECT_TRUE(session.take_effects().empty()) << "performed, not queued";
  EXPECT_THROW(session.dispatch(Bump{true}), std::runtime_error);
  EXPECT_EQ(outcomes.size(), 4u) << "a dispatch that throws performs nothing";

  session.set_effect_runner(nullptr);
  session.dispatch(Bump{});
  EXPECT_EQ(session.take_effects().size(), 2u);
}

}  // namespace
