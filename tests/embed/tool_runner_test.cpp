// ToolRunner and CheckpointStore: the acceptance criteria of
// docs/conformance/EXECUTION_STATE.md (a failed tool changes nothing, visibility
// expansion is clean, rollback to a tool boundary), every rollback trigger — exceptions
// of any type among them — and a failed call that leaves no trace in the session.
#include <gtest/gtest.h>
#include <boost/filesystem.hpp>

#include "embed/agent_slices.hpp"
#include "embed/tool_runner.hpp"
#include "state_fixture.hpp"
#include "test_support.hpp"

namespace {

namespace fs = boost::filesystem;
using namespace sandbox_test;

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
  fsnap::TimePoint deadline = m.clock->now() + std::chrono::seconds(10);
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
  // What is left is what was there, and the log and count of the failure.
  for (const auto& [type, items] : before.session.slices) {
    EXPECT_EQ(after.slices.count(type), 1u) << SliceTypes::name_of(type);
  }
  EXPECT_EQ(after.slices.size(), before.session.slices.size() + 2)
      << "plus the ToolInvoked log and the run's tally of calls";
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

}  // namespace
