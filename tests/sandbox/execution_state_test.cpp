// ExecutionState: one composite snapshot of the session and every resource, seeded
// randomness and an injected clock, restores that either fully succeed or leave
// everything as it was (a host restore that fails half-way included), mismatched
// snapshots refused, and composite JSON round trips.
#include <gtest/gtest.h>
#include <boost/filesystem.hpp>

#include "state_fixture.hpp"
#include "test_support.hpp"

namespace {

namespace fs = boost::filesystem;
using namespace sandbox_test;

TEST(ExecutionStateTest, SeededRandomnessAndInjectedClock) {
  MemoryState a;
  MemoryState b;
  EXPECT_EQ(a.state.rng()(), b.state.rng()());
  EXPECT_EQ(a.state.snapshot().created_at, TimePoint(std::chrono::seconds(1'800'000'000)));
}

// A resource whose restore fails on demand.
struct Fragile : fsnap::Snapshotable<BudgetSnapshot> {
  BudgetSnapshot value;
  bool fail = false;
  int restores_left = -1;  // how many restores succeed before it refuses (-1: all)
  BudgetSnapshot snapshot(std::string_view) override { return value; }
  void restore(const BudgetSnapshot& s) override {
    if (fail || restores_left == 0) throw std::runtime_error("fragile resource refuses");
    if (restores_left > 0) --restores_left;
    value = s;
  }
};

TEST(ExecutionStateTest, AFailedRestoreLeavesEverythingAsBefore) {
  auto fs = std::make_shared<fsnap::InMemoryFilesystem>();
  auto fragile = std::make_shared<Fragile>();
  ResourceRegistry r;
  r.put<fsnap::Filesystem>(fs, "filesystem");  // restored first
  r.put<Fragile>(fragile, "fragile");          // then this one fails
  ExecutionState state(make_session(), std::move(r));
  fs->write("a", "old");
  state.session().seed<Plan>({Plan{"old", "", {}}});
  fragile->value.tool_calls = 1;
  CompositeSnapshot snap = state.snapshot();

  fs->write("a", "new");
  state.session().dispatch(SetObjective{"new"});
  fragile->value.tool_calls = 2;
  fragile->fail = true;
  EXPECT_THROW(state.restore(snap), RestoreFailedError);
  EXPECT_EQ(fs->read("a"), "new") << "the filesystem was put back";
  EXPECT_EQ(state.session().latest<Plan>()->objective, "new");
  EXPECT_EQ(fragile->value.tool_calls, 2u);
  fragile->fail = false;
  state.restore(snap);
  EXPECT_EQ(fs->read("a"), "old");
  EXPECT_EQ(fragile->value.tool_calls, 1u);
}

// The restore is a saga: when a later part fails and putting an earlier one back fails
// too, the error says so (kCorrupt), naming what may be left — and the session, the
// last step, is not touched.
TEST(ExecutionStateTest, ARestoreThatCannotPutAPartBackSaysWhatIsLeft) {
  auto first = std::make_shared<Fragile>();
  struct OtherFragile : Fragile {};  // the registry holds one resource per type
  auto second = std::make_shared<OtherFragile>();
  ResourceRegistry r;
  r.put<Fragile>(first, "first");
  r.put<OtherFragile>(second, "second");
  ExecutionState state(make_session(), std::move(r));
  state.session().seed<Plan>({Plan{"old", "", {}}});
  first->value.tool_calls = 1;
  CompositeSnapshot snap = state.snapshot();
  first->value.tool_calls = 2;
  state.session().dispatch(SetObjective{"new"});
  first->restores_left = 1;  // restored, then cannot be put back
  second->fail = true;
  try {
    state.restore(snap);
    FAIL() << "the restore did not fail";
  } catch (const RestoreFailedError& e) {
    FAIL() << "not everything was put back, yet the error says so: " << e.what();
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), ErrorCode::kCorrupt);
    EXPECT_NE(std::string(e.what()).find("cannot restore resource 'second'"), std::string::npos)
        << e.what();
    EXPECT_NE(std::string(e.what()).find("could not put back 'first'"), std::string::npos)
        << e.what();
  }
  EXPECT_EQ(first->value.tool_calls, 1u) << "restored, and left so";
  EXPECT_EQ(state.session().latest<Plan>()->objective, "new");
}

TEST(ExecutionStateTest, AHostRestoreThatFailsPartWayLeavesEverythingAsBefore) {
  testing_support::TempDir dir;
  fs::create_directories(dir / "ws/locked");
  testing_support::write_file(dir / "ws/0.txt", "1\n");
  testing_support::write_file(dir / "ws/locked/a.txt", "1\n");
  HostState h(dir.path());
  ExecutionState& state = h.state;
  std::shared_ptr<BudgetTracker> budget = h.budget;
  state.session().seed<Plan>({Plan{"old", "", {}}});
  CompositeSnapshot snap = state.snapshot();

  // Both files change; then the directory of the second cannot be written: a restore
  // rewrites 0.txt first and fails on locked/a.txt.
  testing_support::write_file(dir / "ws/0.txt", "2\n");
  testing_support::write_file(dir / "ws/locked/a.txt", "2\n");
  state.session().dispatch(SetObjective{"new"});
  budget->consume(5, 5, 0);
  if (!testing_support::lock_directory(dir / "ws/locked")) {
    GTEST_SKIP() << "cannot lock a directory here";
  }
  testing_support::Manifest before = testing_support::take_manifest(dir / "ws");
  try {
    state.restore(snap);
    ADD_FAILURE() << "the restore did not fail";
  } catch (const RestoreFailedError& e) {
    EXPECT_NE(std::string(e.what()).find("put back"), std::string::npos) << e.what();
  }
  testing_support::unlock_directory(dir / "ws/locked");
  // As it promises: the state is as it was before the restore, files included.
  EXPECT_EQ(
      testing_support::describe_difference(before, testing_support::take_manifest(dir / "ws")), "");
  EXPECT_EQ(testing_support::read_file(dir / "ws/0.txt"), "2\n");
  EXPECT_EQ(state.session().latest<Plan>()->objective, "new");
  EXPECT_EQ(budget->current().input_tokens, 5u);
  // And once the directory can be written, the same restore works.
  state.restore(snap);
  EXPECT_EQ(testing_support::read_file(dir / "ws/locked/a.txt"), "1\n");
  EXPECT_EQ(state.session().latest<Plan>()->objective, "old");
}

TEST(ExecutionStateTest, MismatchedSnapshotsChangeNothing) {
  MemoryState a;
  MemoryState b;
  a.fs->write("x", "1");
  CompositeSnapshot snap = a.state.snapshot();
  ExecutionState bare(make_session(), ResourceRegistry{});
  EXPECT_THROW(bare.restore(snap), SnapshotMismatchError);
  // A snapshot of another kind of resource under the same name.
  auto other_fs = std::make_shared<BudgetTracker>();
  ResourceRegistry r;
  r.put<BudgetTracker>(other_fs, "filesystem");
  ExecutionState odd(make_session(), std::move(r));
  other_fs->consume(1, 1, 1);
  EXPECT_THROW(odd.restore(snap), SnapshotMismatchError);
  EXPECT_EQ(other_fs->current().input_tokens, 1u);
}

TEST(ExecutionStateTest, InMemorySnapshotsCrossJsonAsIdsOnly) {
  MemoryState m;
  m.fs->write("a", "1");
  m.budget->consume(5, 5, 0);
  CompositeSnapshot snap = m.state.snapshot();
  CompositeSnapshot back = CompositeSnapshot::from_json(snap.to_json());
  EXPECT_EQ(back.resources.at("filesystem").get<fsnap::FilesystemSnapshot>()->id,
            snap.resources.at("filesystem").get<fsnap::FilesystemSnapshot>()->id);
  EXPECT_EQ(*back.resources.at("budget").get<BudgetSnapshot>(), m.budget->current());
  // The tree itself lives only in memory: restoring it from JSON is refused as a
  // whole, and the budget restored before the failure is put back.
  m.fs->write("a", "2");
  m.budget->consume(1, 0, 0);
  EXPECT_THROW(m.state.restore(back), RestoreFailedError);
  EXPECT_EQ(m.fs->read("a"), "2");
  EXPECT_EQ(m.budget->current().input_tokens, 6u);
  m.state.restore(snap);  // the live snapshot still works
  EXPECT_EQ(m.fs->read("a"), "1");
  EXPECT_EQ(m.budget->current().input_tokens, 5u);
}

TEST(ExecutionStateTest, CompositeJsonRoundTripWithAHostWorkspace) {
  testing_support::TempDir dir;
  fs::create_directories(dir / "ws");
  testing_support::write_file(dir / "ws/file.txt", "v1");
  HostState h(dir.path());
  ExecutionState& state = h.state;
  std::shared_ptr<fsnap::HostFilesystem> host = h.host;
  std::shared_ptr<BudgetTracker> budget = h.budget;
  state.session().seed<Plan>({Plan{"persisted", "active", {PlanStep{"s", true}}}});
  budget->consume(10, 20, 0.5);
  SnapshotMetadata meta{{"t", fsnap::Phase::kPreTool, "toolu_1", "Edit", "run-x"}};
  CompositeSnapshot snap = state.snapshot(meta);

  // The host checkpoint carries the metadata, so plain git shows it.
  fsnap::Checkpoint c = host->repo().resolve("pre:toolu_1");
  EXPECT_EQ(c.meta.tool_name, "Edit");
  EXPECT_EQ(c.meta.run, "run-x");

  CompositeSnapshot back = CompositeSnapshot::from_json(snap.to_json());
  EXPECT_EQ(back.id, snap.id);
  EXPECT_EQ(back.metadata, snap.metadata);
  EXPECT_EQ(back.to_json(), snap.to_json());
  EXPECT_EQ(back.resources.at("filesystem").get<fsnap::FilesystemSnapshot>()->commit, c.commit);
  EXPECT_TRUE(back.session.equivalent(snap.session));

  testing_support::write_file(dir / "ws/file.txt", "v2");
  testing_support::write_file(dir / "ws/extra", "x");
  budget->consume(1, 1, 1);
  state.session().seed<Plan>({Plan{"later", "", {}}});
  state.restore(back);  // from JSON, as a new process would
  EXPECT_EQ(testing_support::read_file(dir / "ws/file.txt"), "v1");
  EXPECT_FALSE(fs::exists(dir / "ws/extra"));
  EXPECT_EQ(budget->current().input_tokens, 10u);
  EXPECT_EQ(state.session().latest<Plan>()->objective, "persisted");
}

}  // namespace
