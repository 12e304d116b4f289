// ExecutionState, ToolRunner and CheckpointStore: the acceptance tests of
// EXECUTION_STATE.md (a failed tool changes nothing, visibility expansion is clean,
// rollback to a tool boundary), every rollback trigger, composite JSON round trips,
// and restores that either fully succeed or change nothing.
#include <sys/stat.h>
#include <unistd.h>

#include <gtest/gtest.h>
#include <boost/filesystem.hpp>

#include "fsnap/host_filesystem.hpp"
#include "fsnap/in_memory_filesystem.hpp"
#include "sandbox/budget_tracker.hpp"
#include "sandbox/builtin_slices.hpp"
#include "sandbox/checkpoint_store.hpp"
#include "sandbox/tool_runner.hpp"
#include "test_support.hpp"

namespace {

namespace fs = boost::filesystem;
using namespace sandbox;

struct SetObjective {
  std::string objective;
};

Slice<Plan> set_objective(const Slice<Plan>& s, const SetObjective& e) {
  Plan p = s.latest() ? *s.latest() : Plan{};
  p.objective = e.objective;
  return Slice<Plan>::of(p);
}

std::shared_ptr<Session> make_session() {
  auto session = std::make_shared<Session>();
  session->register_reducer<Plan, SetObjective>(set_objective);
  return session;
}

// An execution state over an in-memory filesystem and a budget tracker.
struct MemoryState {
  std::shared_ptr<fsnap::InMemoryFilesystem> fs = std::make_shared<fsnap::InMemoryFilesystem>();
  std::shared_ptr<BudgetTracker> budget = std::make_shared<BudgetTracker>();
  std::shared_ptr<FixedClock> clock =
      std::make_shared<FixedClock>(TimePoint(std::chrono::seconds(1'800'000'000)));
  std::shared_ptr<CheckpointStore> checkpoints = std::make_shared<CheckpointStore>(10);
  ExecutionState state;

  MemoryState() : state(make_session(), registry(), clock, 42, checkpoints) {}
  ResourceRegistry registry() {
    ResourceRegistry r;
    r.put<fsnap::Filesystem>(fs, "filesystem");
    r.put<BudgetTracker>(budget, "budget");
    return r;
  }
};

// A tool that writes a file, changes the plan, spends budget, then does `ending`.
Tool mutating_tool(std::function<ToolResult()> ending) {
  return Tool{nullptr, [ending](const ToolCall& call, ToolContext& ctx) {
                auto fs = ctx.state.resources().get<fsnap::Filesystem>();
                fs->write("file.txt", "changed by " + call.id);
                fs->write("new.txt", "created");
                ctx.state.session().dispatch(SetObjective{"changed by " + call.id});
                ctx.state.resources().get<BudgetTracker>()->consume(100, 50, 0.01);
                return ending();
              }};
}

class ToolRunnerTest : public ::testing::Test {
 protected:
  void SetUp() override {
    m.fs->write("file.txt", "original");
    m.state.session().seed<Plan>({Plan{"test", "active", {}}});
  }
  void expect_untouched() {
    EXPECT_EQ(m.fs->read("file.txt"), "original");
    EXPECT_FALSE(m.fs->exists("new.txt"));
    EXPECT_EQ(m.state.session().latest<Plan>()->objective, "test");
    EXPECT_EQ(m.budget->current(), BudgetSnapshot{});
  }
  MemoryState m;
};

TEST_F(ToolRunnerTest, FailedResultRollsEverythingBack) {
  ToolRunner runner(m.state, {{"mutate", mutating_tool([] {
                                 return ToolResult{false, "no", ""};
                               })}},
                    "prompt");
  ToolResult r = runner.execute({"call_1", "mutate", "{}"});
  EXPECT_FALSE(r.success);
  expect_untouched();
  // The failure is logged, and recorded without a post snapshot.
  ASSERT_EQ(m.state.session().all<ToolInvoked>().size(), 1u);
  EXPECT_FALSE(m.state.session().all<ToolInvoked>()[0].success);
  ASSERT_TRUE(m.checkpoints->get("call_1").has_value());
  EXPECT_FALSE(m.checkpoints->get_post_snapshot("call_1").has_value());
}

TEST_F(ToolRunnerTest, ExceptionBecomesAFailedResult) {
  ToolRunner runner(
      m.state,
      {{"mutate", mutating_tool([]() -> ToolResult { throw std::runtime_error("disk on fire"); })}},
      "prompt");
  ToolResult r = runner.execute({"call_1", "mutate", "{}"});
  EXPECT_FALSE(r.success);
  EXPECT_NE(r.message.find("disk on fire"), std::string::npos);
  expect_untouched();
}

TEST_F(ToolRunnerTest, ValidationErrorsAndUnknownToolsRollBack) {
  Tool strict = mutating_tool([] { return ToolResult{}; });
  strict.validate = [](const ToolCall& c) {
    if (c.params != "{\"ok\":true}") throw ToolValidationError("params must be {\"ok\":true}");
  };
  ToolRunner runner(m.state, {{"strict", strict}}, "prompt");
  ToolResult r = runner.execute({"call_1", "strict", "{}"});
  EXPECT_FALSE(r.success);
  EXPECT_NE(r.message.find("params must be"), std::string::npos);
  expect_untouched();
  EXPECT_FALSE(runner.execute({"call_2", "nope", "{}"}).success);
  expect_untouched();
  EXPECT_TRUE(runner.execute({"call_3", "strict", "{\"ok\":true}"}).success);
  EXPECT_EQ(m.fs->read("file.txt"), "changed by call_3");
}

TEST_F(ToolRunnerTest, VisibilityExpansionIsClean) {
  CompositeSnapshot before = m.state.snapshot();
  ToolRunner runner(m.state, {{"expand", mutating_tool([]() -> ToolResult {
                                 throw VisibilityExpansionRequired("need section 3");
                               })}},
                    "prompt");
  EXPECT_THROW(runner.execute({"call_1", "expand", "{}"}), VisibilityExpansionRequired);
  CompositeSnapshot after = m.state.snapshot();
  // Same files (content-hash ids), same budget, same STATE slices.
  EXPECT_EQ(after.resources.at("filesystem").get<fsnap::FilesystemSnapshot>()->id,
            before.resources.at("filesystem").get<fsnap::FilesystemSnapshot>()->id);
  EXPECT_EQ(*after.resources.at("budget").get<BudgetSnapshot>(),
            *before.resources.at("budget").get<BudgetSnapshot>());
  EXPECT_EQ(after.session.slice<Plan>()[0], before.session.slice<Plan>()[0]);
  expect_untouched();
}

TEST_F(ToolRunnerTest, DeadlineBecomesAPromptEvaluationError) {
  auto clock = m.clock;
  Tool slow = mutating_tool([clock] {
    clock->advance(std::chrono::seconds(30));
    return ToolResult{};
  });
  ToolRunner runner(m.state, {{"slow", slow}}, "my-prompt");
  TimePoint deadline = m.clock->now() + std::chrono::seconds(10);
  try {
    runner.execute({"call_1", "slow", "{}"}, deadline);
    FAIL() << "no PromptEvaluationError";
  } catch (const PromptEvaluationError& e) {
    EXPECT_NE(std::string(e.what()).find("my-prompt"), std::string::npos);
  }
  expect_untouched();
}

TEST_F(ToolRunnerTest, AnExceptionOfAnyTypeRollsBackAndIsRethrown) {
  struct NotAStdException {};
  ToolRunner runner(m.state,
                    {{"mutate", mutating_tool([]() -> ToolResult { throw NotAStdException{}; })},
                     {"number", mutating_tool([]() -> ToolResult { throw 42; })}},
                    "prompt");
  EXPECT_THROW(runner.execute({"call_1", "mutate", "{}"}), NotAStdException);
  expect_untouched();
  EXPECT_THROW(runner.execute({"call_2", "number", "{}"}), int);
  expect_untouched();
  // Both are recorded as failures.
  ASSERT_EQ(m.state.session().all<ToolInvoked>().size(), 2u);
  EXPECT_FALSE(m.state.session().all<ToolInvoked>()[0].success);
  EXPECT_NE(m.state.session().all<ToolInvoked>()[0].result_summary.find("unknown exception"),
            std::string::npos);
  EXPECT_FALSE(m.checkpoints->get("call_2")->success);
}

TEST_F(ToolRunnerTest, AFailedCallLeavesNoTraceInTheSession) {
  // The call writes to slices that did not exist before it: a STATE slice, a CACHE
  // slice and a user-defined one. None of them survives the rollback.
  struct Scratch {
    int n = 0;
  };
  CompositeSnapshot before = m.state.snapshot();
  ToolRunner runner(m.state,
                    {{"scribble", Tool{nullptr,
                                       [](const ToolCall&, ToolContext& ctx) {
                                         Session& s = ctx.state.session();
                                         s.seed<VisibilityOverrides>({{{{"a", "full"}}}});
                                         s.seed<WorkspaceDigest>({{"src", "d"}});
                                         s.seed<Scratch>({Scratch{1}});
                                         return ToolResult{false, "no", ""};
                                       }}}},
                    "prompt");
  EXPECT_FALSE(runner.execute({"call_1", "scribble", "{}"}).success);
  SessionSnapshot after = m.state.session().snapshot({}, true);
  EXPECT_EQ(after.slices.count(typeid(VisibilityOverrides)), 0u);
  EXPECT_EQ(after.slices.count(typeid(WorkspaceDigest)), 0u);
  EXPECT_EQ(after.slices.count(typeid(Scratch)), 0u);
  // What is left is what was there, and the log of the failure.
  for (const auto& [type, items] : before.session.slices) {
    EXPECT_EQ(after.slices.count(type), 1u) << SliceTypes::name_of(type);
  }
  EXPECT_EQ(after.slices.size(), before.session.slices.size() + 1) << "plus the ToolInvoked log";
  EXPECT_EQ(m.state.session().all<ToolInvoked>().size(), 1u);
}

TEST_F(ToolRunnerTest, TelemetryFailureDoesNotRollBack) {
  ToolRunner runner(m.state, {{"mutate", mutating_tool([] { return ToolResult{}; })}}, "prompt");
  runner.set_publisher([](const ToolInvoked&) { throw std::runtime_error("bus down"); });
  EXPECT_TRUE(runner.execute({"call_1", "mutate", "{}"}).success);
  EXPECT_EQ(m.fs->read("file.txt"), "changed by call_1");
  EXPECT_EQ(m.state.session().latest<Plan>()->objective, "changed by call_1");
}

TEST_F(ToolRunnerTest, RollbackToAToolBoundary) {
  int n = 0;
  Tool step{nullptr, [&n](const ToolCall& call, ToolContext& ctx) {
              auto fs = ctx.state.resources().get<fsnap::Filesystem>();
              fs->write("file.txt", "after " + call.id);
              fs->write(call.id + ".txt", std::to_string(++n));
              ctx.state.session().dispatch(SetObjective{"after " + call.id});
              return ToolResult{true, "done " + call.id, ""};
            }};
  ToolRunner runner(m.state, {{"step", step}}, "prompt");
  for (const char* id : {"call_a", "call_b", "call_c"}) runner.execute({id, "step", "{}"});
  EXPECT_EQ(m.fs->read("file.txt"), "after call_c");

  m.checkpoints->rollback_to_tool(m.state, "call_b");
  EXPECT_EQ(m.fs->read("file.txt"), "after call_a");
  EXPECT_TRUE(m.fs->exists("call_a.txt"));
  EXPECT_FALSE(m.fs->exists("call_b.txt"));
  EXPECT_FALSE(m.fs->exists("call_c.txt"));
  EXPECT_EQ(m.state.session().latest<Plan>()->objective, "after call_a");
  EXPECT_EQ(m.state.session().all<ToolInvoked>().size(), 3u) << "LOG slices keep everything";

  // Forward again to after call_c, and the store's bookkeeping.
  m.state.restore(*m.checkpoints->get_post_snapshot("call_c"));
  EXPECT_EQ(m.fs->read("file.txt"), "after call_c");
  std::vector<ToolCheckpoint> all = m.checkpoints->list_checkpoints();
  ASSERT_EQ(all.size(), 3u);
  EXPECT_EQ(all[0].tool_call_id, "call_a");
  EXPECT_EQ(all[2].result_summary, "done call_c");
  EXPECT_TRUE(all[2].success);
  EXPECT_EQ(all[1].pre_snapshot.metadata.phase, fsnap::Phase::kPreTool);
  EXPECT_EQ(all[1].post_snapshot->metadata.phase, fsnap::Phase::kPostTool);
  EXPECT_EQ(all[1].pre_snapshot.metadata.tool_call_id, "call_b");
  EXPECT_THROW(m.checkpoints->rollback_to_tool(m.state, "call_zzz"), Error);
}

TEST(CheckpointStoreTest, RingBufferKeepsTheNewest) {
  MemoryState m;
  CheckpointStore store(3);
  for (int i = 0; i < 5; ++i) {
    ToolCheckpoint c;
    c.tool_call_id = "call_" + std::to_string(i);
    c.pre_snapshot = m.state.snapshot();
    store.record(c);
  }
  std::vector<ToolCheckpoint> kept = store.list_checkpoints();
  ASSERT_EQ(kept.size(), 3u);
  EXPECT_EQ(kept[0].tool_call_id, "call_2");
  EXPECT_FALSE(store.get("call_0").has_value());
}

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
  BudgetSnapshot snapshot(std::string_view) override { return value; }
  void restore(const BudgetSnapshot& s) override {
    if (fail) throw std::runtime_error("fragile resource refuses");
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

// Makes dir refuse new entries: immutable as root (who ignores permissions), else
// read-only. Returns false if the filesystem cannot do either.
bool lock_directory(const fs::path& dir) {
  if (::geteuid() == 0) {
    return testing_support::run_command({"chattr", "+i", dir.string()}).exit_code == 0;
  }
  return ::chmod(dir.c_str(), 0555) == 0;
}
void unlock_directory(const fs::path& dir) {
  if (::geteuid() == 0) testing_support::run_command({"chattr", "-i", dir.string()});
  ::chmod(dir.c_str(), 0755);
}

// An execution state over a host workspace in dir/ws (store in dir/store) and a budget.
struct HostState {
  explicit HostState(const fs::path& dir)
      : host(std::make_shared<fsnap::HostFilesystem>(
            fsnap::Store::open(dir / "store", dir / "ws", true), fsnap::CaptureOptions{})),
        state(make_session(), registry()) {}
  ResourceRegistry registry() {
    ResourceRegistry r;
    r.put<fsnap::Filesystem>(host, "filesystem");
    r.put<BudgetTracker>(budget, "budget");
    return r;
  }
  std::shared_ptr<fsnap::HostFilesystem> host;
  std::shared_ptr<BudgetTracker> budget = std::make_shared<BudgetTracker>();
  ExecutionState state;
};

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
  if (!lock_directory(dir / "ws/locked")) GTEST_SKIP() << "cannot lock a directory here";
  testing_support::Manifest before = testing_support::take_manifest(dir / "ws");
  try {
    state.restore(snap);
    ADD_FAILURE() << "the restore did not fail";
  } catch (const RestoreFailedError& e) {
    EXPECT_NE(std::string(e.what()).find("put back"), std::string::npos) << e.what();
  }
  unlock_directory(dir / "ws/locked");
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
  SnapshotMetadata meta{"t", "toolu_1", "Edit", fsnap::Phase::kPreTool, "run-x"};
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
