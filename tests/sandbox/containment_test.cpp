// Containment in the runtime: the transaction core admits every tool call first — a
// denied call runs nothing and leaves one `denied` checkpoint whose ledger record holds
// the decision and its SafetyEvent; the count lives in the session (LOG: rollbacks keep
// it) and continues in every process that joins the run.
#include <gtest/gtest.h>
#include <boost/filesystem.hpp>

#include "embed/tool_runner.hpp"
#include "runs/ledger_run.hpp"
#include "runs/run_stats.hpp"
#include "sandbox/containment.hpp"
#include "state_fixture.hpp"
#include "test_support.hpp"

namespace {

namespace fs = boost::filesystem;
using namespace sandbox_test;
using namespace runs;
using namespace std::chrono_literals;

// Tools: "write" writes <call>.txt and costs $0.30; "fail" writes junk, then fails.
std::map<std::string, Tool> tools() {
  return {{"write", Tool{nullptr,
                         [](const ToolCall& call, ToolContext& ctx) {
                           ctx.state.resources().get<fsnap::Filesystem>()->write(call.id + ".txt",
                                                                                 call.id);
                           return ToolResult{true, "wrote", "", 0.30};
                         }}},
          {"fail", Tool{nullptr, [](const ToolCall&, ToolContext& ctx) {
                          ctx.state.resources().get<fsnap::Filesystem>()->write("junk", "x");
                          return ToolResult{false, "exit 1", "", 0};
                        }}}};
}

class ContainmentTest : public ::testing::Test {
 protected:
  ContainmentTest() {
    fs::create_directories(dir_ / "ws");
    testing_support::write_file(dir_ / "ws/a.txt", "a");
  }
  std::vector<fsnap::Checkpoint> chain(const HostState& h) const {
    std::vector<fsnap::Checkpoint> log = h.host->repo().log("default", 0);
    return {log.rbegin(), log.rend()};
  }
  testing_support::TempDir dir_;
};

TEST_F(ContainmentTest, ADeniedCallRunsNothingAndIsRecordedOnce) {
  HostState h(dir_.path());
  h.state.set_containment({.max_steps = 2});
  ToolRunner runner(h.state, tools(), "prompt");
  EXPECT_TRUE(runner.execute({"c1", "write", "{}"}).success);
  EXPECT_TRUE(runner.execute({"c2", "write", "{}"}).success);
  std::size_t commits = chain(h).size();
  ToolResult denied = runner.execute({"c3", "write", "{}"});
  EXPECT_FALSE(denied.success);
  ASSERT_TRUE(denied.denied_by.has_value());
  EXPECT_EQ(denied.denied_by->type, policy::StopReason::kStepLimitExceeded);
  EXPECT_NE(denied.message.find("denied: the step limit is reached"), std::string::npos)
      << denied.message;
  EXPECT_FALSE(fs::exists(dir_ / "ws/c3.txt")) << "the handler did not run";
  // One checkpoint for the denied call, no pre/post/safety churn.
  std::vector<fsnap::Checkpoint> c = chain(h);
  ASSERT_EQ(c.size(), commits + 1);
  EXPECT_EQ(c.back().meta.phase, fsnap::Phase::kDenied);
  EXPECT_EQ(c.back().meta.tool_call_id, "c3");
  EXPECT_EQ(c.back().tree, c[c.size() - 2].tree);
  Ledger ledger(h.host->shared_repo());
  std::optional<LedgerRecord> record = ledger.read(c.back());
  ASSERT_TRUE(record.has_value());
  EXPECT_EQ(record->decision, "halt");
  ASSERT_TRUE(record->safety_event.has_value());
  EXPECT_EQ(record->safety_event->type, policy::StopReason::kStepLimitExceeded);
  EXPECT_EQ(record->success, false);
  // The allowed calls' records say so too; plain git shows the event.
  EXPECT_EQ(ledger.read(c[0])->decision, "allow");
  testing_support::CommandResult git =
      testing_support::run_command({"git", "--git-dir", h.host->store().repo_dir().string(), "log",
                                    "--notes=shadowbox", "-1", "refs/shadowbox/runs/default"});
  EXPECT_NE(git.out.find("\"event_type\": \"step_limit_exceeded\""), std::string::npos) << git.out;
  EXPECT_NE(git.out.find("denied"), std::string::npos);
  // The count is in the session: the denied call is no step, no invocation and no
  // failure; it is counted as refused.
  std::optional<policy::ContainmentState> state = containment_state(h.state.session());
  ASSERT_TRUE(state.has_value());
  EXPECT_EQ(state->step_count, 2u);
  EXPECT_EQ(state->refused_count, 1u);
  EXPECT_EQ(h.state.session().all<ToolInvoked>().size(), 2u);
  RunStats figures = run_stats(h.state.session().snapshot({}, /*include_all=*/true));
  EXPECT_EQ(figures.calls, 3u);
  EXPECT_EQ(figures.steps, 2u);
  EXPECT_EQ(figures.refused, 1u);
  EXPECT_EQ(figures.failed, 0u);
}

TEST_F(ContainmentTest, CostsReportedByToolsReachTheCeiling) {
  HostState h(dir_.path());
  h.state.set_containment({.max_cost_usd = 0.5});
  ToolRunner runner(h.state, tools(), "prompt");
  EXPECT_TRUE(runner.execute({"c1", "write", "{}"}).success);
  EXPECT_TRUE(runner.execute({"c2", "write", "{}"}).success) << "$0.30 spent when it began";
  ToolResult third = runner.execute({"c3", "write", "{}"});
  ASSERT_TRUE(third.denied_by.has_value());
  EXPECT_EQ(third.denied_by->type, policy::StopReason::kBudgetExceeded);
  EXPECT_DOUBLE_EQ(h.state.containment()->snapshot().cost_usd, 0.60);
}

TEST_F(ContainmentTest, ARolledBackCallKeepsItsCountAndFeedsItsCircuit) {
  HostState h(dir_.path());
  h.state.set_containment({.circuit_breaker = policy::CircuitBreakerConfig{2, 60'000ms}});
  ToolRunner runner(h.state, tools(), "prompt");
  EXPECT_FALSE(runner.execute({"f1", "fail", "{}"}).success);
  EXPECT_FALSE(fs::exists(dir_ / "ws/junk")) << "rolled back";
  EXPECT_FALSE(runner.execute({"f2", "fail", "{}"}).success);
  ToolResult third = runner.execute({"f3", "fail", "{}"});
  ASSERT_TRUE(third.denied_by.has_value()) << "the circuit of `fail` is open";
  EXPECT_EQ(third.denied_by->type, policy::StopReason::kCircuitOpen);
  EXPECT_TRUE(runner.execute({"w1", "write", "{}"}).success) << "other tools go on";
  std::optional<policy::ContainmentState> state = containment_state(h.state.session());
  ASSERT_TRUE(state.has_value());
  EXPECT_EQ(state->retries_used, 2u) << "no rollback gave the failures back";
  EXPECT_EQ(state->step_count, 3u) << "f1, f2 and w1 ran; f3 was refused";
  EXPECT_EQ(state->refused_count, 1u);
}

TEST_F(ContainmentTest, TheCountContinuesInEveryProcessOfARun) {
  fsnap::Store::open(dir_ / "store", dir_ / "ws", true);
  auto open = [&] {
    auto run = std::make_unique<LedgerRun>(fsnap::Store::open(dir_ / "store", dir_ / "ws", false),
                                           LedgerRunOptions{});
    run->state().set_containment({.max_steps = 3});
    return run;
  };
  // Three processes take turns (as hook processes of one run do).
  for (int i = 0; i < 3; ++i) {
    std::unique_ptr<LedgerRun> run = open();
    std::string id = "c" + std::to_string(i);
    EXPECT_EQ(run->transactions().begin({id, "Bash", "{}"}).decision, policy::Decision::kAllow);
    run->transactions().succeed(id, "ok");
  }
  std::unique_ptr<LedgerRun> fourth = open();
  StepResult denied = fourth->transactions().begin({"c3", "Bash", "{}"});
  EXPECT_EQ(denied.decision, policy::Decision::kHalt);
  ASSERT_TRUE(denied.safety_event.has_value());
  EXPECT_EQ(denied.safety_event->type, policy::StopReason::kStepLimitExceeded);
  EXPECT_THROW(fourth->transactions().succeed("c3", ""), Error) << "a denied call never began";
}

TEST_F(ContainmentTest, TheRepeatStreakContinuesInEveryProcessUntilTheLoopStopsTheRun) {
  fsnap::Store::open(dir_ / "store", dir_ / "ws", true);
  auto open = [&] {
    auto run = std::make_unique<LedgerRun>(fsnap::Store::open(dir_ / "store", dir_ / "ws", false),
                                           LedgerRunOptions{});
    run->state().set_containment({.repeat = {2, 3}});
    return run;
  };
  // One process per call, as hook processes of one run. The params differ in spacing
  // only; the canonical input the caller gives is what is compared.
  const std::string same = R"({"command":"echo same"})";
  std::unique_ptr<LedgerRun> first = open();
  EXPECT_EQ(first->transactions().begin({"c0", "Bash", same}, {.canonical_input = same}).decision,
            policy::Decision::kAllow);
  first->transactions().succeed("c0", "ok");
  StepResult second = open()->transactions().begin({"c1", "Bash", R"({ "command": "echo same" })"},
                                                   {.canonical_input = same});
  EXPECT_EQ(second.decision, policy::Decision::kHalt);
  ASSERT_TRUE(second.safety_event);
  EXPECT_EQ(second.safety_event->type, policy::StopReason::kRepeatedCall);
  std::unique_ptr<LedgerRun> third = open();
  StepResult looping = third->transactions().begin({"c2", "Bash", same}, {.canonical_input = same});
  ASSERT_TRUE(looping.safety_event);
  EXPECT_EQ(looping.safety_event->type, policy::StopReason::kLoop);
  std::optional<policy::ContainmentState> counted = containment_state(third->state().session());
  ASSERT_TRUE(counted);
  EXPECT_EQ(counted->halted_by, policy::StopReason::kLoop);
  EXPECT_EQ(counted->repeat.count, 3u);
  EXPECT_EQ(counted->repeat.key, "Bash");
  EXPECT_EQ(counted->repeat.fingerprint.size(), 64u) << "a digest, never the input itself";
  // A resumed run starts a new streak with its new stop: the same call runs once more.
  third->state().restart_containment(/*keep_count=*/true);
  EXPECT_EQ(third->transactions().begin({"c3", "Bash", same}, {.canonical_input = same}).decision,
            policy::Decision::kAllow);
}

TEST_F(ContainmentTest, ARollbackKeepsTheRepeatStreak) {
  HostState h(dir_.path());
  h.state.set_containment({.repeat = {2, 0}});
  ToolRunner runner(h.state, tools(), "prompt");
  EXPECT_FALSE(runner.execute({"f1", "fail", "{}"}).success);
  EXPECT_FALSE(fs::exists(dir_ / "ws/junk")) << "rolled back";
  ToolResult again = runner.execute({"f2", "fail", "{}"});
  ASSERT_TRUE(again.denied_by.has_value()) << "the same failing call, asked again";
  EXPECT_EQ(again.denied_by->type, policy::StopReason::kRepeatedCall);
  EXPECT_TRUE(runner.execute({"f3", "fail", R"({"other":1})"}).denied_by == std::nullopt)
      << "another input runs";
}

TEST(ContainmentStateTest, TheStateRoundTripsThroughTheSession) {
  policy::ContainmentState state;
  state.step_count = 7;
  state.refused_count = 4;
  state.refused_in_a_row = 2;
  state.retries_used = 2;
  state.cost_usd = 1.25;
  state.aborted = true;
  state.abort_reason = "stop now";
  state.halted_by = policy::StopReason::kAborted;
  state.started_at = fsnap::TimePoint(std::chrono::seconds(1'800'000'000));
  state.repeat = policy::RepeatStreak{"Bash", "ab12", 3};
  state.circuits["Bash"] =
      policy::CircuitStatus{policy::CircuitState::kOpen, 3, state.started_at + 5s, false};
  state.window.push_back(policy::WindowEntry{state.started_at + 1s, state.started_at + 2s, 0.5, 3});
  for (int i = 0; i < 30; ++i) {
    state.events.push_back(policy::SafetyEvent{
        policy::StopReason::kCircuitOpen, policy::Decision::kHalt, "CircuitBreaker",
        "event " + std::to_string(i), 3, 3, state.started_at + 2s, "n1", "Bash"});
  }
  Session session;
  record_containment(session, state);
  SessionSnapshot back = SessionSnapshot::from_json(session.snapshot({}, true).to_json());
  std::optional<policy::ContainmentState> decoded = containment_state(back);
  ASSERT_TRUE(decoded.has_value());
  EXPECT_EQ(decoded->step_count, 7u);
  EXPECT_EQ(decoded->refused_count, 4u);
  EXPECT_EQ(decoded->refused_in_a_row, 2u);
  EXPECT_EQ(decoded->retries_used, 2u);
  EXPECT_DOUBLE_EQ(decoded->cost_usd, 1.25);
  EXPECT_TRUE(decoded->aborted);
  EXPECT_EQ(decoded->abort_reason, "stop now");
  EXPECT_EQ(decoded->halted_by, policy::StopReason::kAborted);
  EXPECT_EQ(decoded->started_at, state.started_at);
  EXPECT_EQ(decoded->circuits, state.circuits);
  EXPECT_EQ(decoded->window, state.window);
  EXPECT_EQ(decoded->repeat, state.repeat);
  ASSERT_EQ(decoded->events.size(), kPersistedSafetyEvents) << "the newest events only";
  EXPECT_EQ(decoded->events.back(), state.events.back());
  EXPECT_EQ(back.policies.at(typeid(policy::ContainmentState)), SlicePolicy::kLog);
}

}  // namespace
