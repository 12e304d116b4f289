// Computed slices: derived from source slices by a pure function, recomputed only when
// read after a source changed (a rollback included) or it was invalidated, stale until
// then, read with latest<T>() like any slice, read-only, and a run's statistics
// (RunStats) as `shadowbox runs` reads them.
#include <optional>
#include <stdexcept>

#include <gtest/gtest.h>

#include "embed/agent_slices.hpp"
#include "policy/execution_context.hpp"
#include "runs/run_stats.hpp"
#include "sandbox/builtin_slices.hpp"
#include "sandbox/containment.hpp"
#include "sandbox/errors.hpp"
#include "sandbox/session.hpp"

namespace {

using namespace sandbox;
using namespace embed;
using namespace runs;
using namespace statekit;

struct Progress {
  std::size_t done = 0;
  std::size_t total = 0;
  std::size_t calls = 0;
};

struct Unrelated {
  int n = 0;
};

class ComputedTest : public ::testing::Test {
 protected:
  ComputedTest() {
    session_.register_reducer<Plan, Plan>(reducers::replace_latest<Plan>);
    session_.register_reducer<ToolInvoked, ToolInvoked>(reducers::append_all<ToolInvoked>);
    session_.register_reducer<Unrelated, Unrelated>(reducers::replace_latest<Unrelated>);
    session_.install_computed([this](const Slice<Plan>& plan, const Slice<ToolInvoked>& calls) {
      ++computations_;
      Progress p;
      if (const Plan* latest = plan.latest()) {
        p.total = latest->steps.size();
        for (const PlanStep& s : latest->steps) p.done += s.done ? 1 : 0;
      }
      p.calls = calls.size();
      return p;
    });
  }

  Session session_;
  int computations_ = 0;
};

TEST_F(ComputedTest, RecomputedOnlyWhenReadAfterASourceChanged) {
  EXPECT_EQ(session_.computed<Progress>()->total, 0u);
  EXPECT_EQ(computations_, 1);
  session_.computed<Progress>();
  EXPECT_EQ(computations_, 1) << "nothing changed: the value as it was";
  session_.dispatch(Unrelated{1});
  session_.computed<Progress>();
  EXPECT_EQ(computations_, 1) << "a slice it does not read changed";
  session_.dispatch(Plan{"ship", "active", {{"write", true}, {"test", false}}});
  session_.dispatch(ToolInvoked{"c1", "Edit", "{}", true, "ok", 1});
  session_.dispatch(ToolInvoked{"c2", "Edit", "{}", false, "no", 1});
  EXPECT_EQ(computations_, 1) << "lazy: nothing computed until read";
  std::shared_ptr<const Progress> p = session_.computed<Progress>();
  EXPECT_EQ(computations_, 2);
  EXPECT_EQ(p->done, 1u);
  EXPECT_EQ(p->total, 2u);
  EXPECT_EQ(p->calls, 2u);
  // A rollback of a source is a change too.
  SessionSnapshot before = session_.snapshot(kStatePolicies, /*include_all=*/true);
  session_.dispatch(Plan{"ship", "active", {{"write", true}, {"test", true}}});
  EXPECT_EQ(session_.computed<Progress>()->done, 2u);
  session_.rollback(before, /*preserve_logs=*/false);
  EXPECT_EQ(session_.computed<Progress>()->done, 1u);
  EXPECT_EQ(computations_, 4);
  // A value read earlier stays as it was.
  EXPECT_EQ(p->calls, 2u);
}

TEST_F(ComputedTest, InvalidatedItIsComputedOnTheNextReadAndStaleSaysWhenAReadWould) {
  EXPECT_TRUE(session_.stale<Progress>()) << "never computed";
  session_.computed<Progress>();
  EXPECT_FALSE(session_.stale<Progress>());
  EXPECT_EQ(computations_, 1);
  // Invalidated: stale, computed again on the next read (not before), though no source
  // changed, and then fresh again.
  EXPECT_TRUE(session_.invalidate<Progress>());
  EXPECT_TRUE(session_.stale<Progress>());
  EXPECT_EQ(computations_, 1) << "lazy";
  session_.computed<Progress>();
  EXPECT_EQ(computations_, 2);
  EXPECT_FALSE(session_.stale<Progress>());
  session_.computed<Progress>();
  EXPECT_EQ(computations_, 2) << "an invalidation is for one read";
  // A source's change makes it stale; another slice's does not.
  session_.dispatch(Unrelated{1});
  EXPECT_FALSE(session_.stale<Progress>());
  session_.dispatch(ToolInvoked{"c1", "Edit", "{}", true, "ok", 1});
  EXPECT_TRUE(session_.stale<Progress>());
  EXPECT_EQ(computations_, 2) << "asking computes nothing";
  // A type that is not computed is never stale, and invalidating it does nothing.
  EXPECT_FALSE(session_.stale<Unrelated>());
  EXPECT_FALSE(session_.invalidate<Unrelated>());
  EXPECT_EQ(session_.latest<Unrelated>()->n, 1);
}

TEST_F(ComputedTest, AComputedValueIsReadWithLatestLikeAnySlice) {
  session_.dispatch(Plan{"ship", "active", {{"write", true}, {"test", false}}});
  std::optional<Progress> p = session_.latest<Progress>();
  ASSERT_TRUE(p.has_value());
  EXPECT_EQ(p->done, 1u);
  EXPECT_EQ(p->total, 2u);
  EXPECT_EQ(computations_, 1);
  session_.dispatch(Plan{"ship", "active", {{"write", true}, {"test", true}}});
  EXPECT_EQ(session_.latest<Progress>()->done, 2u);
  EXPECT_EQ(session_.computed<Progress>()->done, 2u) << "the same value";
  EXPECT_EQ(computations_, 2);
  EXPECT_EQ(session_.latest<Plan>()->steps.size(), 2u) << "an ordinary slice, as before";
}

TEST_F(ComputedTest, AComputedSliceIsReadOnly) {
  EXPECT_EQ(session_.computed<Unrelated>(), nullptr) << "not installed";
  try {
    session_.register_reducer<Progress, Progress>(reducers::replace_latest<Progress>);
    ADD_FAILURE() << "a reducer of a computed slice";
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), ErrorCode::kInvalidArgument);
  }
  EXPECT_THROW(session_.install_computed([](const Slice<Plan>&) { return Unrelated{}; }), Error)
      << "Unrelated has a reducer";
}

TEST_F(ComputedTest, ItsSourcesAreOrdinarySlices) {
  // Progress is computed: as a source it would read its own, empty, slice.
  EXPECT_THROW(
      session_.install_computed([](const Slice<Progress>& p) { return std::to_string(p.size()); }),
      Error);
  // Nor may a slice another computed slice reads become computed.
  struct Base {
    int n = 0;
  };
  struct Derived {
    std::size_t n = 0;
  };
  session_.install_computed([](const Slice<Base>& b) { return Derived{b.size()}; });
  EXPECT_THROW(session_.install_computed([](const Slice<Plan>&) { return Base{1}; }), Error)
      << "Derived reads Base";
  session_.seed<Base>({Base{1}, Base{2}});
  EXPECT_EQ(session_.latest<Derived>()->n, 2u);
}

TEST_F(ComputedTest, AComputationThatThrowsIsTriedAgainOnTheNextRead) {
  Session session;
  bool fail = true;
  session.install_computed([&](const Slice<ToolInvoked>& calls) {
    if (fail) throw std::runtime_error("not yet");
    return calls.size();
  });
  EXPECT_THROW(session.computed<std::size_t>(), std::runtime_error);
  fail = false;
  EXPECT_EQ(*session.computed<std::size_t>(), 0u);
}

TEST(RunStatsTest, TheFiguresAreTheTallysAndTheCostContainments) {
  embed::register_agent_slice_types();
  Session session;
  update_call_tally(session, [](CallTally& t) {
    t.steps = 7;
    t.failed = 3;
    t.rolled_back = 2;
    t.refused = 4;
    t.agent_denied = 1;
  });
  policy::ContainmentState counted;
  counted.step_count = 7;
  counted.cost_usd = 1.25;
  record_containment(session, counted);
  // Through the ledger's JSON, as `shadowbox runs` reads it.
  RunStats stats =
      run_stats(SessionSnapshot::from_json(session.snapshot({}, /*include_all=*/true).to_json()));
  EXPECT_EQ(stats.calls, 12u) << "steps + refused + denied by the agent";
  EXPECT_EQ(stats.steps, 7u);
  EXPECT_EQ(stats.failed, 3u);
  EXPECT_EQ(stats.rolled_back, 2u);
  EXPECT_EQ(stats.refused, 4u);
  EXPECT_EQ(stats.agent_denied, 1u);
  EXPECT_DOUBLE_EQ(stats.cost_usd, 1.25);
  EXPECT_EQ(run_stats(SessionSnapshot{}).calls, 0u);
}

TEST(RunStatsTest, ARunRecordedBeforeTheTallyIsReadFromItsLogAndContainment) {
  embed::register_agent_slice_types();
  Session session;
  session.register_reducer<ToolInvoked, ToolInvoked>(reducers::append_all<ToolInvoked>);
  for (int i = 0; i < 40; ++i) {
    session.dispatch(ToolInvoked{"c" + std::to_string(i), "Bash", "{}", i % 4 != 0, "", 1});
  }
  policy::ContainmentState counted;
  counted.step_count = 41;
  counted.cost_usd = 1.25;
  record_containment(session, counted);
  RunStats stats = run_stats(session.snapshot({}, /*include_all=*/true));
  EXPECT_EQ(stats.steps, 41u);
  EXPECT_EQ(stats.calls, 41u);
  EXPECT_EQ(stats.failed, 10u);
  EXPECT_DOUBLE_EQ(stats.cost_usd, 1.25);
}

}  // namespace
