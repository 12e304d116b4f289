// sandbox::Session: typed slices and reducers, STATE/LOG/CACHE policies in snapshots
// and rollbacks, structure sharing, JSON round trips through the codec registry,
// mismatches that change nothing, and concurrent dispatches that lose no update.
#include <thread>

#include <gtest/gtest.h>

#include "embed/agent_slices.hpp"
#include "sandbox/builtin_slices.hpp"
#include "sandbox/session.hpp"

namespace {

using embed::Plan;
using embed::PlanStep;
using sandbox::Session;
using sandbox::SessionSnapshot;
using sandbox::SlicePolicy;
using sandbox::ToolInvoked;
using statekit::Slice;

// Events of the tests.
struct SetObjective {
  std::string objective;
};
struct Counter {
  int value = 0;
};
struct Increment {};

// A user-defined slice type with its own codec.
struct Note {
  std::string text;
  friend bool operator==(const Note&, const Note&) = default;
};

void register_test_types() {
  static std::once_flag once;
  std::call_once(once, [] {
    sandbox::SliceTypes::add<Note>(
        "test.note", SlicePolicy::kState, [](const Note& n) { return Poco::Dynamic::Var(n.text); },
        [](const Poco::Dynamic::Var& v) { return Note{v.toString()}; });
    sandbox::SliceTypes::add<Counter>(
        "test.counter", SlicePolicy::kState,
        [](const Counter& c) { return Poco::Dynamic::Var(c.value); },
        [](const Poco::Dynamic::Var& v) { return Counter{v.convert<int>()}; });
  });
}

Slice<Plan> set_objective(const Slice<Plan>& slice, const SetObjective& e) {
  Plan p = slice.latest() ? *slice.latest() : Plan{};
  p.objective = e.objective;
  return Slice<Plan>::of(p);
}

ToolInvoked call(const std::string& id) {
  return ToolInvoked{id, "Bash", "{}", true, "ok", 3};
}

class SessionTest : public ::testing::Test {
 protected:
  SessionTest() {
    embed::register_agent_slice_types();
    register_test_types();
    session.register_reducer<Plan, SetObjective>(set_objective);
    session.register_reducer<ToolInvoked, ToolInvoked>(statekit::reducers::append_all<ToolInvoked>);
    session.register_reducer<Note, Note>(statekit::reducers::append_all<Note>);
  }
  Session session;
};

TEST_F(SessionTest, ReducersSeedLatestAll) {
  EXPECT_FALSE(session.latest<Plan>().has_value());
  session.seed<Plan>({Plan{"initial", "active", {PlanStep{"a", false}}}});
  EXPECT_EQ(session.latest<Plan>()->objective, "initial");
  EXPECT_EQ(session.dispatch(SetObjective{"changed"}), 1u);
  EXPECT_EQ(session.latest<Plan>()->objective, "changed");
  EXPECT_EQ(session.latest<Plan>()->steps.size(), 1u);
  session.dispatch(call("a"));
  session.dispatch(call("b"));
  EXPECT_EQ(session.all<ToolInvoked>().size(), 2u);
  EXPECT_EQ(session.all<ToolInvoked>()[1].tool_call_id, "b");
  EXPECT_EQ(session.dispatch(Increment{}), 0u) << "no reducer for Increment";
}

TEST_F(SessionTest, DefaultPoliciesFollowTheSpecTable) {
  EXPECT_EQ(session.policy<Plan>(), SlicePolicy::kState);
  EXPECT_EQ(session.policy<embed::VisibilityOverrides>(), SlicePolicy::kState);
  EXPECT_EQ(session.policy<embed::WorkspaceDigest>(), SlicePolicy::kCache);
  EXPECT_EQ(session.policy<ToolInvoked>(), SlicePolicy::kLog);
  EXPECT_EQ(session.policy<embed::PromptRendered>(), SlicePolicy::kLog);
  EXPECT_EQ(session.policy<embed::PromptExecuted>(), SlicePolicy::kLog);
  EXPECT_EQ(session.policy<Increment>(), SlicePolicy::kState) << "custom slices are STATE";
  session.register_slice<Note>(SlicePolicy::kCache);
  EXPECT_EQ(session.policy<Note>(), SlicePolicy::kCache);
}

TEST_F(SessionTest, RollbackRestoresStateAndKeepsLogs) {
  session.seed<Plan>({Plan{"before", "active", {}}});
  session.dispatch(call("a"));
  SessionSnapshot tx = session.snapshot();  // STATE slices only
  EXPECT_EQ(tx.slices.count(typeid(ToolInvoked)), 0u);
  EXPECT_EQ(tx.slices.count(typeid(Plan)), 1u);

  session.dispatch(SetObjective{"after"});
  session.dispatch(call("b"));
  session.rollback(tx);
  EXPECT_EQ(session.latest<Plan>()->objective, "before");
  EXPECT_EQ(session.all<ToolInvoked>().size(), 2u) << "LOG slices survive rollback";

  SessionSnapshot full = session.snapshot({}, /*include_all=*/true);
  session.dispatch(call("c"));
  session.rollback(full);  // preserve_logs: the log keeps "c"
  EXPECT_EQ(session.all<ToolInvoked>().size(), 3u);
  session.rollback(full, /*preserve_logs=*/false);
  EXPECT_EQ(session.all<ToolInvoked>().size(), 2u);
}

TEST_F(SessionTest, CacheSlicesFollowTheirPolicy) {
  session.register_slice<embed::WorkspaceDigest>();
  session.seed<embed::WorkspaceDigest>({{"src", "d1"}});
  SessionSnapshot state_only = session.snapshot();
  EXPECT_EQ(state_only.slices.count(typeid(embed::WorkspaceDigest)), 0u);
  SessionSnapshot with_cache = session.snapshot({SlicePolicy::kState, SlicePolicy::kCache});
  session.seed<embed::WorkspaceDigest>({{"src", "d2"}});
  session.rollback(state_only);
  EXPECT_EQ(session.latest<embed::WorkspaceDigest>()->digest, "d2");
  session.rollback(with_cache);
  EXPECT_EQ(session.latest<embed::WorkspaceDigest>()->digest, "d1");
}

TEST_F(SessionTest, RollbackMakesTheCoveredSlicesExactlyTheSnapshots) {
  // A slice the session does not have is declared, with the snapshot's policy.
  Session other;
  other.register_slice<Counter>();
  other.seed<Counter>({Counter{7}});
  other.seed<Plan>({Plan{"from other", "", {}}});
  session.seed<Plan>({Plan{"mine", "", {}}});
  session.rollback(other.snapshot());
  EXPECT_EQ(session.latest<Plan>()->objective, "from other");
  EXPECT_EQ(session.latest<Counter>()->value, 7);

  // Slices that appeared after the snapshot are gone: a rollback leaves no trace of
  // them, not even an empty slice, unless their policy is not covered (a CACHE slice
  // after a STATE-only snapshot) or they are LOG slices the rollback preserves.
  Session fresh;
  fresh.register_reducer<ToolInvoked, ToolInvoked>(statekit::reducers::append_all<ToolInvoked>);
  SessionSnapshot all = fresh.snapshot({}, /*include_all=*/true);
  SessionSnapshot state_only = fresh.snapshot();
  fresh.seed<Plan>({Plan{"written by a failed call", "", {}}});
  fresh.seed<embed::WorkspaceDigest>({{"src", "d1"}});
  fresh.dispatch(call("x"));
  fresh.rollback(state_only);
  EXPECT_FALSE(fresh.latest<Plan>().has_value());
  EXPECT_EQ(fresh.snapshot({}, true).slices.count(typeid(Plan)), 0u) << "no empty Plan slice left";
  EXPECT_TRUE(fresh.latest<embed::WorkspaceDigest>().has_value()) << "CACHE not covered";
  fresh.rollback(all);
  EXPECT_FALSE(fresh.latest<embed::WorkspaceDigest>().has_value());
  EXPECT_EQ(fresh.all<ToolInvoked>().size(), 1u) << "LOG preserved";
  fresh.rollback(all, /*preserve_logs=*/false);
  EXPECT_EQ(fresh.all<ToolInvoked>().size(), 0u);
  // A reducer whose slice a rollback removed declares it again when it next runs.
  fresh.dispatch(call("y"));
  EXPECT_EQ(fresh.all<ToolInvoked>().size(), 1u);
  EXPECT_EQ(fresh.policy<ToolInvoked>(), SlicePolicy::kLog);
}

TEST_F(SessionTest, JsonRoundTripIncludingUserTypes) {
  session.seed<Plan>({Plan{"obj", "active", {PlanStep{"one", true}, PlanStep{"two", false}}}});
  session.dispatch(Note{"user-defined \"quoted\" \n text"});
  session.dispatch(call("a"));
  SessionSnapshot snap = session.snapshot({}, true, {{"phase", "pre_tool"}});
  std::string json = snap.to_json();
  SessionSnapshot back = SessionSnapshot::from_json(json);
  EXPECT_EQ(back.id, snap.id);
  EXPECT_EQ(back.session_id, session.id());
  EXPECT_EQ(back.tags.at("phase"), "pre_tool");
  EXPECT_EQ(
      std::chrono::duration_cast<std::chrono::microseconds>(back.created_at.time_since_epoch()),
      std::chrono::duration_cast<std::chrono::microseconds>(snap.created_at.time_since_epoch()));
  EXPECT_TRUE(back.equivalent(snap));
  EXPECT_EQ(back.to_json(), json);
  EXPECT_EQ(back.slice<Plan>()[0], *session.latest<Plan>());
  EXPECT_EQ(back.slice<Note>()[0].text, "user-defined \"quoted\" \n text");
  EXPECT_EQ(back.policies.at(typeid(ToolInvoked)), SlicePolicy::kLog);

  // A fresh session rebuilt from the JSON has the same state.
  Session rebuilt;
  rebuilt.register_slice<Plan>();
  rebuilt.register_slice<Note>();
  rebuilt.register_slice<ToolInvoked>();
  rebuilt.rollback(back, /*preserve_logs=*/false);
  EXPECT_TRUE(rebuilt.snapshot({}, true).equivalent(snap));

  std::string unknown = json;
  unknown.replace(unknown.find("test.note"), 9, "test.gone");
  EXPECT_THROW(SessionSnapshot::from_json(unknown), sandbox::SnapshotMismatchError);
  EXPECT_THROW(SessionSnapshot::from_json("{not json"), sandbox::Error);
  EXPECT_THROW(SessionSnapshot::from_json("[]"), sandbox::Error);
}

TEST_F(SessionTest, ASliceStoredUnderAnOldNameOfItsTypeIsReadAsThatType) {
  sandbox::SliceTypes::add_old_name("test.note", "test.former_note");
  sandbox::SliceTypes::add_old_name("test.note", "test.former_note");  // idempotent
  session.dispatch(Note{"kept"});
  std::string json = session.snapshot({}, true).to_json();
  std::string old = json;
  old.replace(old.find("\"test.note\""), 11, "\"test.former_note\"");
  SessionSnapshot back = SessionSnapshot::from_json(old);
  EXPECT_EQ(back.slice<Note>()[0].text, "kept");
  EXPECT_EQ(back.to_json(), json) << "written under the type's name from then on";
  EXPECT_EQ(sandbox::SliceTypes::find("test.former_note")->name, "test.note");
  // An old name for a type never registered, or one another type has, is refused.
  EXPECT_THROW(sandbox::SliceTypes::add_old_name("test.nothing", "test.older"), sandbox::Error);
  EXPECT_THROW(sandbox::SliceTypes::add_old_name("test.note", "test.counter"), sandbox::Error);
}

TEST_F(SessionTest, SnapshotsShareItemsWithTheLiveSession) {
  for (int i = 0; i < 1000; ++i) session.dispatch(call(std::to_string(i)));
  SessionSnapshot a = session.snapshot({}, true);
  session.dispatch(call("next"));
  SessionSnapshot b = session.snapshot({}, true);
  const auto& log_a = a.slices.at(typeid(ToolInvoked));
  const auto& log_b = b.slices.at(typeid(ToolInvoked));
  EXPECT_EQ(log_a.size(), 1000u);
  EXPECT_EQ(log_b.size(), 1001u);
  for (std::size_t i = 0; i < log_a.size(); ++i) {
    ASSERT_EQ(log_a[i].get(), log_b[i].get()) << "item " << i << " was copied";
  }
}

TEST_F(SessionTest, ConcurrentDispatchesLoseNoUpdate) {
  session.register_reducer<Counter, Increment>([](const Slice<Counter>& s, const Increment&) {
    int v = s.latest() ? s.latest()->value : 0;
    return Slice<Counter>::of(Counter{v + 1});
  });
  constexpr int kThreads = 8;
  constexpr int kEach = 2000;
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([&] {
      for (int i = 0; i < kEach; ++i) session.dispatch(Increment{});
    });
  }
  for (std::thread& t : threads) t.join();
  EXPECT_EQ(session.latest<Counter>()->value, kThreads * kEach);
}

TEST_F(SessionTest, BroadcastReachesChildren) {
  std::shared_ptr<Session> child = session.create_child();
  child->register_reducer<Note, Note>(statekit::reducers::append_all<Note>);
  EXPECT_EQ(child->parent_id(), session.id());
  EXPECT_EQ(session.broadcast(Note{"everyone"}), 2u);
  EXPECT_EQ(child->all<Note>().size(), 1u);
  session.dispatch(Note{"parent only"});
  EXPECT_EQ(child->all<Note>().size(), 1u);
  EXPECT_EQ(session.all<Note>().size(), 2u);
  SessionSnapshot snap = session.snapshot();
  ASSERT_EQ(snap.children_ids.size(), 1u);
  EXPECT_EQ(snap.children_ids[0], child->id());
  EXPECT_EQ(child->snapshot().parent_id, session.id());
  // Written out and read back, the family stays.
  EXPECT_EQ(SessionSnapshot::from_json(snap.to_json()).children_ids, snap.children_ids);
  EXPECT_EQ(SessionSnapshot::from_json(child->snapshot().to_json()).parent_id, session.id());
}

TEST_F(SessionTest, AThrowingReducerChangesNothing) {
  session.register_reducer<Note, SetObjective>(
      [](const Slice<Note>&, const SetObjective&) -> Slice<Note> {
        throw std::runtime_error("no");
      });
  session.seed<Plan>({Plan{"kept", "", {}}});
  EXPECT_THROW(session.dispatch(SetObjective{"x"}), std::runtime_error);
  EXPECT_EQ(session.latest<Plan>()->objective, "kept");
}

}  // namespace
