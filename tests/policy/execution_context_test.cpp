// ExecutionContext, run-level containment: every limit reached exactly and crossed by
// one call, every call allowed to run counted as a step and every refused one as
// refused, a loop of refused calls stopped by the step limit, timeout and abort tripping the
// token, per-call timeouts and retries honoured, the circuit and the pipeline consulted
// in order, concurrent callers admitted exactly up to a limit, and the state carried
// into a new context.
#include <atomic>
#include <stdexcept>
#include <thread>
#include <vector>

#include <gtest/gtest.h>

#include "clock_fixture.hpp"
#include "policy/execution_context.hpp"

namespace {

using namespace policy;
using namespace std::chrono_literals;

// A call that costs cost and succeeds.
std::function<double(const CancellationToken&)> costing(double cost) {
  return [cost](const CancellationToken&) { return cost; };
}
// A call that fails.
double failing(const CancellationToken&) {
  throw std::runtime_error("exit 1");
}

TEST(ExecutionContextTest, TheStepLimitCountsCallsAllowedToRun) {
  policy_test::TestClock clock;
  ExecutionContext context({.max_steps = 3}, {}, nullptr, clock.now());
  int ran = 0;
  auto call = [&](const CancellationToken&) {
    ++ran;
    return 0.0;
  };
  EXPECT_EQ(context.wrap_tool_call(call), Decision::kAllow);
  EXPECT_EQ(context.wrap_tool_call(failing), Decision::kRetry) << "a failure is a step too";
  EXPECT_EQ(context.wrap_tool_call(call), Decision::kAllow);
  EXPECT_EQ(context.wrap_tool_call(call), Decision::kHalt) << "the fourth attempt";
  EXPECT_EQ(ran, 2);
  EXPECT_EQ(context.wrap_tool_call(call), Decision::kHalt);
  ContextSnapshot s = context.snapshot();
  EXPECT_EQ(s.step_count, 3u) << "a refused call is no step";
  EXPECT_EQ(s.refused_count, 2u);
  EXPECT_EQ(context.state().refused_count, 2u);
  ASSERT_TRUE(s.halted_by.has_value());
  EXPECT_EQ(*s.halted_by, StopReason::kStepLimitExceeded);
  ASSERT_FALSE(s.events.empty());
  EXPECT_EQ(s.events.front().type, StopReason::kStepLimitExceeded);
  EXPECT_EQ(s.events.front().hook, "ExecutionContext");
  EXPECT_EQ(s.events.front().limit, 3);
  EXPECT_EQ(s.nodes.size(), 5u);
  EXPECT_EQ(s.nodes[3].status, NodeStatus::kHalted);
  EXPECT_EQ(s.nodes[1].status, NodeStatus::kError);
  // The snapshot taken just before the stop holds the partial result.
  ASSERT_TRUE(context.stop_snapshot().has_value());
  EXPECT_EQ(context.stop_snapshot()->step_count, 3u);
  EXPECT_EQ(context.stop_snapshot()->events.size(), 0u);
}

TEST(ExecutionContextTest, TheStepLimitAlsoStopsALoopOfRefusedCalls) {
  // An agent that keeps asking for a tool whose circuit is open would be refused for
  // ever; as many refusals in a row as the limit allows steps stop the run.
  policy_test::TestClock clock;
  ExecutionContext context(
      {.max_steps = 3, .circuit_breaker = CircuitBreakerConfig{1, 3'600'000ms}}, {}, nullptr,
      clock.now());
  EXPECT_EQ(context.wrap_tool_call(failing, {.key = "Bash"}), Decision::kRetry);
  for (int i = 0; i < 3; ++i) {
    Admission refused = context.admit(NodeKind::kTool, {.key = "Bash"});
    EXPECT_EQ(refused.event->type, StopReason::kCircuitOpen);
  }
  EXPECT_FALSE(context.state().halted_by) << "refused calls are not steps";
  Admission stop = context.admit(NodeKind::kTool, {.key = "Read"});
  ASSERT_EQ(stop.decision, Decision::kHalt);
  EXPECT_EQ(stop.event->type, StopReason::kStepLimitExceeded);
  EXPECT_NE(stop.event->reason.find("the last 3 calls were all refused"), std::string::npos)
      << stop.event->reason;
  ContainmentState counted = context.state();
  EXPECT_EQ(counted.step_count, 1u);
  EXPECT_EQ(counted.refused_count, 4u);

  // A call allowed to run in between starts the count of refusals afresh.
  ExecutionContext other({.max_steps = 5, .circuit_breaker = CircuitBreakerConfig{1, 3'600'000ms}},
                         {}, nullptr, clock.now());
  other.wrap_tool_call(failing, {.key = "Bash"});
  other.admit(NodeKind::kTool, {.key = "Bash"});
  other.admit(NodeKind::kTool, {.key = "Bash"});
  EXPECT_EQ(other.wrap_tool_call(costing(0), {.key = "Read"}), Decision::kAllow);
  EXPECT_EQ(other.state().refused_in_a_row, 0u);
}

TEST(ExecutionContextTest, ACallThatRanUnadmittedIsAStepWhateverTheLimits) {
  policy_test::TestClock clock;
  ExecutionContext context({.max_steps = 1}, {}, nullptr, clock.now());
  EXPECT_EQ(context.wrap_tool_call(costing(0)), Decision::kAllow);
  std::string node = context.count_unadmitted(NodeKind::kTool, {.key = "Bash"});
  context.complete(node, {false, 0, "exit 1", false, "Bash"});
  ContainmentState counted = context.state();
  EXPECT_EQ(counted.step_count, 2u);
  EXPECT_EQ(counted.refused_count, 0u);
  EXPECT_EQ(counted.retries_used, 1u);
}

TEST(ExecutionContextTest, AWithdrawnCallIsNoStep) {
  policy_test::TestClock clock;
  ExecutionContext context({.max_steps = 2}, {}, nullptr, clock.now());
  Admission first = context.admit(NodeKind::kTool, {.key = "Bash"});
  ASSERT_EQ(first.decision, Decision::kAllow);
  context.withdraw(first.node_id);  // the agent refused to run it
  EXPECT_EQ(context.state().step_count, 0u);
  EXPECT_EQ(context.snapshot().nodes.back().status, NodeStatus::kHalted);
  // Another process of the run admitted it: the step is given back all the same.
  Admission second = context.admit(NodeKind::kTool);
  ExecutionContext elsewhere({.max_steps = 2}, {}, nullptr, clock.now(), context.state());
  elsewhere.withdraw(second.node_id);
  EXPECT_EQ(elsewhere.state().step_count, 0u);
  EXPECT_EQ(elsewhere.admit(NodeKind::kTool).decision, Decision::kAllow);
  EXPECT_EQ(elsewhere.admit(NodeKind::kTool).decision, Decision::kAllow);
  EXPECT_EQ(elsewhere.admit(NodeKind::kTool).decision, Decision::kHalt) << "two steps ran";
}

TEST(ExecutionContextTest, TheCostCeilingReachedExactlyAndCrossedByOneCall) {
  policy_test::TestClock clock;
  ExecutionContext exact({.max_cost_usd = 1.0}, {}, nullptr, clock.now());
  EXPECT_EQ(exact.wrap_llm_call(costing(0.5)), Decision::kAllow);
  EXPECT_EQ(exact.wrap_llm_call(costing(0.5)), Decision::kAllow);
  EXPECT_EQ(exact.wrap_llm_call(costing(0.01)), Decision::kHalt) << "reached exactly";
  EXPECT_EQ(exact.snapshot().cost_usd, 1.0);

  ExecutionContext crossed({.max_cost_usd = 1.0}, {}, nullptr, clock.now());
  EXPECT_EQ(crossed.wrap_llm_call(costing(0.9)), Decision::kAllow);
  EXPECT_EQ(crossed.wrap_llm_call(costing(0.3)), Decision::kAllow) << "under it when it started";
  Admission after = crossed.admit(NodeKind::kTool);
  EXPECT_EQ(after.decision, Decision::kHalt);
  ASSERT_TRUE(after.event.has_value());
  EXPECT_EQ(after.event->type, StopReason::kBudgetExceeded);
  EXPECT_DOUBLE_EQ(after.event->value, 1.2);
  EXPECT_NE(after.event->reason.find("$1.20 spent of $1.00"), std::string::npos)
      << after.event->reason;

  // An estimate that would cross it halts the call before it runs.
  ExecutionContext hinted({.max_cost_usd = 1.0}, {}, nullptr, clock.now());
  EXPECT_EQ(hinted.wrap_llm_call(costing(0.5), {.cost_estimate_hint = 0.4}), Decision::kAllow);
  EXPECT_EQ(hinted.wrap_llm_call(costing(0.5), {.cost_estimate_hint = 0.6}), Decision::kHalt);
  // Cost learned after the fact counts as well.
  ExecutionContext charged({.max_cost_usd = 1.0}, {}, nullptr, clock.now());
  charged.charge(1.0);
  EXPECT_EQ(charged.admit(NodeKind::kTool).decision, Decision::kHalt);
}

TEST(ExecutionContextTest, TheRetryBudgetIsRunWide) {
  policy_test::TestClock clock;
  ExecutionContext context({.max_retries_total = 2}, {}, nullptr, clock.now());
  EXPECT_EQ(context.wrap_tool_call(failing, {.key = "Bash"}), Decision::kRetry);
  EXPECT_EQ(context.wrap_tool_call(costing(0)), Decision::kAllow);
  EXPECT_EQ(context.wrap_tool_call(failing, {.key = "Edit"}), Decision::kHalt)
      << "the failure that used the budget up is not to be retried";
  EXPECT_EQ(context.wrap_tool_call(costing(0)), Decision::kHalt) << "two failures, any tools";
  EXPECT_EQ(*context.snapshot().halted_by, StopReason::kProviderError)
      << "the second failure used the budget up";
}

TEST(ExecutionContextTest, ARetryOverrideTriesTheCallAgain) {
  policy_test::TestClock clock;
  ExecutionContext context({}, {}, nullptr, clock.now());
  int tries = 0;
  auto flaky = [&](const CancellationToken&) -> double {
    if (++tries < 3) throw std::runtime_error("flaky");
    return 0.1;
  };
  EXPECT_EQ(context.wrap_llm_call(flaky, {.retry_policy_override = 2}), Decision::kAllow);
  EXPECT_EQ(tries, 3);
  ContextSnapshot s = context.snapshot();
  EXPECT_EQ(s.step_count, 3u) << "each try is a step";
  EXPECT_EQ(s.retries_used, 2u);
  tries = -10;
  EXPECT_EQ(context.wrap_llm_call(flaky, {.retry_policy_override = 1}), Decision::kRetry);
  EXPECT_EQ(tries, -8) << "exactly two tries";
}

TEST(ExecutionContextTest, TimeoutHaltsAndTripsTheToken) {
  policy_test::TestClock clock;
  ExecutionContext context({.timeout = 10'000ms}, {}, nullptr, clock.now());
  CancellationToken token = context.token();
  EXPECT_EQ(context.wrap_tool_call(costing(0)), Decision::kAllow);
  clock.advance(9'999ms);
  EXPECT_FALSE(token.cancelled());
  // A call under way when the time runs out sees its token tripped and ends halted.
  auto slow = [&](const CancellationToken& call_token) {
    clock.advance(1ms);
    EXPECT_TRUE(call_token.cancelled());
    return 0.0;
  };
  EXPECT_EQ(context.wrap_tool_call(slow), Decision::kHalt);
  EXPECT_TRUE(token.cancelled());
  EXPECT_EQ(token.reason(), "timeout");
  EXPECT_EQ(context.wrap_tool_call(costing(0)), Decision::kHalt);
  EXPECT_EQ(*context.snapshot().halted_by, StopReason::kTimeout);
  EXPECT_EQ(context.snapshot().nodes[1].status, NodeStatus::kTimeout);
}

TEST(ExecutionContextTest, ASupervisorFindsTheTimeOutBetweenCalls) {
  policy_test::TestClock clock;
  ExecutionContext context({.timeout = 10'000ms}, {}, nullptr, clock.now());
  EXPECT_EQ(context.wrap_tool_call(costing(0)), Decision::kAllow);
  clock.advance(9'999ms);
  EXPECT_FALSE(context.check_deadline());
  EXPECT_FALSE(context.snapshot().halted_by);
  clock.advance(1ms);
  std::optional<SafetyEvent> event = context.check_deadline();
  ASSERT_TRUE(event);
  EXPECT_EQ(event->type, StopReason::kTimeout);
  EXPECT_EQ(event->limit, 10'000);
  EXPECT_EQ(event->value, 10'000);
  EXPECT_EQ(*context.snapshot().halted_by, StopReason::kTimeout);
  // Asked again, the same stop; one event in all.
  clock.advance(5'000ms);
  EXPECT_EQ(context.check_deadline(), event);
  EXPECT_EQ(context.snapshot().events.size(), 1u);
  EXPECT_EQ(context.admit(NodeKind::kTool).decision, Decision::kHalt);
  // Without a timeout there is nothing to find.
  ExecutionContext unlimited({}, {}, nullptr, clock.now());
  clock.advance(std::chrono::hours(1000));
  EXPECT_FALSE(unlimited.check_deadline());
}

TEST(ExecutionContextTest, ATimeoutTooLongForTheClockNeverWrapsIntoThePast) {
  // 200000 days, and the longest a timeout can be: their deadlines are past what a
  // TimePoint counts, so they stay at its end, never wrapped around to before now.
  for (std::chrono::milliseconds timeout :
       {std::chrono::duration_cast<std::chrono::milliseconds>(std::chrono::hours(24 * 200000)),
        std::chrono::milliseconds::max()}) {
    policy_test::TestClock clock;
    ExecutionContext context({.timeout = timeout}, {}, nullptr, clock.now());
    EXPECT_EQ(context.wrap_tool_call(costing(0)), Decision::kAllow) << timeout.count();
    ASSERT_TRUE(context.deadline());
    EXPECT_GT(*context.deadline(), clock.at());
    clock.advance(std::chrono::hours(24 * 365 * 100));
    EXPECT_FALSE(context.check_deadline());
    EXPECT_EQ(context.wrap_tool_call(costing(0), {.timeout = timeout}), Decision::kAllow);
    EXPECT_FALSE(context.token().cancelled());
  }
  EXPECT_EQ(saturating_add(TimePoint::max() - 1ms, 2ms), TimePoint::max());
  EXPECT_EQ(saturating_add(TimePoint::min() + 1ms, -2ms), TimePoint::min());
  EXPECT_EQ(saturating_add(TimePoint(1'000ms), 500ms), TimePoint(1'500ms));
}

TEST(ExecutionContextTest, APerCallTimeoutOverridesForThatCall) {
  policy_test::TestClock clock;
  ExecutionContext context({.timeout = 60'000ms}, {}, nullptr, clock.now());
  auto slow = [&](const CancellationToken&) {
    clock.advance(2'000ms);
    return 0.0;
  };
  EXPECT_EQ(context.wrap_tool_call(slow, {.timeout = 1'000ms}), Decision::kRetry)
      << "past its own deadline: a failed call, the run goes on";
  EXPECT_EQ(context.snapshot().nodes[0].status, NodeStatus::kTimeout);
  EXPECT_EQ(context.wrap_tool_call(slow, {.timeout = 5'000ms}), Decision::kAllow);
  EXPECT_FALSE(context.token().cancelled());
}

TEST(ExecutionContextTest, AbortStopsTheRunAndTripsTheToken) {
  policy_test::TestClock clock;
  ExecutionContext context({}, {.run_id = "run-1"}, nullptr, clock.now());
  CancellationToken token = context.token();
  context.abort("the user pressed stop");
  EXPECT_TRUE(token.cancelled());
  EXPECT_EQ(token.reason(), "the user pressed stop");
  Admission a = context.admit(NodeKind::kLlm);
  EXPECT_EQ(a.decision, Decision::kHalt);
  EXPECT_EQ(a.event->type, StopReason::kAborted);
  ContextSnapshot s = context.snapshot();
  EXPECT_TRUE(s.aborted);
  EXPECT_EQ(s.run_id, "run-1");
  EXPECT_EQ(s.nodes.back().status, NodeStatus::kAborted);
}

TEST(ExecutionContextTest, AnOpenCircuitRefusesOnlyItsKey) {
  policy_test::TestClock clock;
  ExecutionContext context({.circuit_breaker = CircuitBreakerConfig{2, 30'000ms}}, {}, nullptr,
                           clock.now());
  int bash_runs = 0;
  auto bash = [&](const CancellationToken&) -> double {
    ++bash_runs;
    throw std::runtime_error("command not found");
  };
  EXPECT_EQ(context.wrap_tool_call(bash, {.key = "Bash"}), Decision::kRetry);
  EXPECT_EQ(context.wrap_tool_call(bash, {.key = "Bash"}), Decision::kRetry);
  Admission refused = context.admit(NodeKind::kTool, {.key = "Bash"});
  EXPECT_EQ(refused.decision, Decision::kHalt);
  EXPECT_EQ(refused.event->type, StopReason::kCircuitOpen);
  EXPECT_EQ(refused.event->key, "Bash");
  EXPECT_NE(refused.event->reason.find("Bash failed 2 times in a row"), std::string::npos)
      << refused.event->reason;
  EXPECT_EQ(bash_runs, 2) << "the third call did not run";
  EXPECT_EQ(context.wrap_tool_call(costing(0), {.key = "Read"}), Decision::kAllow);
  EXPECT_FALSE(context.snapshot().halted_by.has_value()) << "not a stop of the run";
  clock.advance(30'000ms);
  EXPECT_EQ(context.wrap_tool_call(costing(0), {.key = "Bash"}), Decision::kAllow)
      << "the half-open trial succeeds";
}

// A hook that answers what it is told and counts how often it was asked.
struct FixedHook : ShieldHook {
  FixedHook(std::string name, Decision decision) : name_(std::move(name)), decision_(decision) {}
  std::string_view name() const override { return name_; }
  CheckVerdict before_call(const CallContext& call) override {
    ++asked;
    if (decision_ == Decision::kAllow) return {};
    return {decision_, SafetyEvent{StopReason::kProviderRateLimit, decision_, name_,
                                   name_ + " says no", 1, 2, call.at, call.node_id, call.key}};
  }
  std::string name_;
  Decision decision_;
  int asked = 0;
};

TEST(ExecutionContextTest, ThePipelineIsAskedInOrderAndTheFirstHaltWins) {
  policy_test::TestClock clock;
  auto pipeline = std::make_shared<ShieldPipeline>();
  auto allow = std::make_shared<FixedHook>("first", Decision::kAllow);
  auto degrade = std::make_shared<FixedHook>("second", Decision::kDegrade);
  auto halt = std::make_shared<FixedHook>("third", Decision::kHalt);
  auto never = std::make_shared<FixedHook>("fourth", Decision::kAllow);
  for (auto& h : {allow, degrade, halt, never}) pipeline->add(h);
  ExecutionContext context({.max_steps = 10}, {}, pipeline, clock.now());
  Admission a = context.admit(NodeKind::kTool);
  EXPECT_EQ(a.decision, Decision::kHalt);
  EXPECT_EQ(a.event->hook, "third");
  EXPECT_EQ(never->asked, 0) << "hooks after the halt are not asked";
  // A limit of the run comes before the pipeline.
  ExecutionContext limited({.max_steps = 1}, {}, pipeline, clock.now());
  limited.admit(NodeKind::kTool);
  int asked = halt->asked;
  EXPECT_EQ(limited.admit(NodeKind::kTool).event->type, StopReason::kStepLimitExceeded);
  EXPECT_EQ(halt->asked, asked);
  // Without a halt, a degrade is the answer.
  auto soft = std::make_shared<ShieldPipeline>();
  soft->add(allow);
  soft->add(degrade);
  ExecutionContext degraded({}, {}, soft, clock.now());
  EXPECT_EQ(degraded.admit(NodeKind::kLlm).decision, Decision::kDegrade);
  EXPECT_EQ(degraded.wrap_llm_call(costing(0)), Decision::kDegrade);
}

// A hook that keeps what it was told of each call.
struct RecordingHook : ShieldHook {
  std::string_view name() const override { return "Recording"; }
  CheckVerdict before_call(const CallContext& call) override {
    seen.push_back(call);
    return {};
  }
  void on_charge(const CallContext& call, double) override { charged.push_back(call); }
  std::vector<CallContext> seen;
  std::vector<CallContext> charged;
};

TEST(ExecutionContextTest, ChecksSeeTheRunsMetadata) {
  policy_test::TestClock clock;
  auto pipeline = std::make_shared<ShieldPipeline>();
  auto recording = std::make_shared<RecordingHook>();
  pipeline->add(recording);
  RunMetadata meta{.request_id = "req-1",
                   .run_id = "run-1",
                   .team = "ml-platform",
                   .model = "claude-sonnet-4-6",
                   .tags = {{"env", "prod"}}};
  ExecutionContext context({}, meta, pipeline, clock.now());
  EXPECT_EQ(context.wrap_llm_call(costing(0.25), {.operation_name = "summarise"}),
            Decision::kAllow);
  ASSERT_EQ(recording->seen.size(), 1u);
  const CallContext& call = recording->seen[0];
  EXPECT_EQ(call.operation_name, "summarise");
  EXPECT_EQ(call.run.run_id, "run-1");
  EXPECT_EQ(call.run.request_id, "req-1");
  EXPECT_EQ(call.run.team, "ml-platform");
  EXPECT_EQ(call.run.model, "claude-sonnet-4-6");
  EXPECT_EQ(call.run.tags, (std::map<std::string, std::string>{{"env", "prod"}}));
  ASSERT_EQ(recording->charged.size(), 1u) << "what a call cost is told with the run too";
  EXPECT_EQ(recording->charged[0].run.model, "claude-sonnet-4-6");
}

// A hook that knows some failures to be fatal: a revoked key stops the run, a full
// provider queue ends this call's retries only.
struct FailureHook : ShieldHook {
  std::string_view name() const override { return "Failures"; }
  CheckVerdict before_call(const CallContext&) override { return {}; }
  CheckVerdict on_error(const CallContext& call, const std::string& error) override {
    errors.push_back(error);
    if (error == "revoked key" || error == "queue full") {
      StopReason why =
          error == "revoked key" ? StopReason::kProviderError : StopReason::kProviderRateLimit;
      return {Decision::kHalt, SafetyEvent{why, Decision::kHalt, "Failures", error, 0, 0, call.at,
                                           call.node_id, call.key}};
    }
    return {Decision::kRetry, std::nullopt};
  }
  std::vector<std::string> errors;
};

// A call that fails with error.
std::function<double(const CancellationToken&)> failing_with(const std::string& error, int* tries) {
  return [error, tries](const CancellationToken&) -> double {
    ++*tries;
    throw std::runtime_error(error);
  };
}

TEST(ExecutionContextTest, AHooksAnswerToAFailureIsTheCallsDecision) {
  policy_test::TestClock clock;
  auto pipeline = std::make_shared<ShieldPipeline>();
  auto hook = std::make_shared<FailureHook>();
  pipeline->add(hook);
  ExecutionContext context({}, {}, pipeline, clock.now());
  int tries = 0;
  // An ordinary failure: retried as asked, then kRetry.
  EXPECT_EQ(context.wrap_llm_call(failing_with("timeout", &tries), {.retry_policy_override = 2}),
            Decision::kRetry);
  EXPECT_EQ(tries, 3);
  // A failure a hook halts for a reason that stops no run: no more tries, the run goes on.
  tries = 0;
  EXPECT_EQ(context.wrap_llm_call(failing_with("queue full", &tries), {.retry_policy_override = 2}),
            Decision::kHalt);
  EXPECT_EQ(tries, 1);
  EXPECT_FALSE(context.state().halted_by);
  EXPECT_EQ(context.state().events.back().type, StopReason::kProviderRateLimit);
  EXPECT_EQ(context.wrap_llm_call(costing(0)), Decision::kAllow);
  // A failure a hook halts for a reason that stops runs: the run stops then.
  tries = 0;
  EXPECT_EQ(
      context.wrap_llm_call(failing_with("revoked key", &tries), {.retry_policy_override = 2}),
      Decision::kHalt);
  EXPECT_EQ(tries, 1);
  ASSERT_TRUE(context.state().halted_by);
  EXPECT_EQ(*context.state().halted_by, StopReason::kProviderError);
  EXPECT_EQ(context.wrap_tool_call(costing(0)), Decision::kHalt);
  EXPECT_EQ(hook->errors, (std::vector<std::string>{"timeout", "timeout", "timeout", "queue full",
                                                    "revoked key"}));
  // complete() answers the same, for a caller that admits calls itself.
  ExecutionContext other({}, {}, pipeline, clock.now());
  Admission a = other.admit(NodeKind::kTool);
  EXPECT_EQ(other.complete(a.node_id, {.success = false, .error = "timeout"}), Decision::kRetry);
  a = other.admit(NodeKind::kTool);
  EXPECT_EQ(other.complete(a.node_id, {}), Decision::kAllow);
  a = other.admit(NodeKind::kTool);
  EXPECT_EQ(other.complete(a.node_id, {.success = false, .error = "revoked key"}), Decision::kHalt);
}

TEST(ExecutionContextTest, ModelCallChecksAndToolCallChecksAreSeparate) {
  policy_test::TestClock clock;
  auto pipeline = std::make_shared<ShieldPipeline>();
  auto model_only = std::make_shared<FixedHook>("models", Decision::kHalt);
  auto tool_only = std::make_shared<RecordingHook>();
  auto every = std::make_shared<RecordingHook>();
  pipeline->add_model_check(model_only);
  pipeline->add_tool_check(tool_only);
  pipeline->add(every);
  ExecutionContext context({}, {}, pipeline, clock.now());
  EXPECT_EQ(context.wrap_tool_call(costing(0.5), {.key = "Bash"}), Decision::kAllow);
  EXPECT_EQ(model_only->asked, 0) << "a model check is not asked about a tool call";
  EXPECT_EQ(tool_only->seen.size(), 1u);
  EXPECT_EQ(tool_only->charged.size(), 1u);
  EXPECT_EQ(context.wrap_llm_call(costing(0)), Decision::kHalt);
  EXPECT_EQ(model_only->asked, 1);
  EXPECT_EQ(tool_only->seen.size(), 1u) << "a tool check is not asked about a model call";
  EXPECT_EQ(every->seen.size(), 1u) << "the model check halted first";
  // A model's cost learned afterwards reaches the model checks and those of every call.
  context.charge(0.25);
  EXPECT_EQ(tool_only->charged.size(), 1u);
  EXPECT_EQ(every->charged.size(), 2u);
}

// A hook that enforces a limit shared with other runs: over it from the third call.
struct SharedLimitHook : ShieldHook {
  std::string_view name() const override { return "SharedLimit"; }
  CheckVerdict before_call(const CallContext& call) override {
    ++asked;
    if (asked < 3) return {};
    return {Decision::kHalt,
            SafetyEvent{StopReason::kBudgetExceeded, Decision::kHalt, "SharedLimit",
                        "the shared budget is spent", 1, 1, call.at, call.node_id, call.key}};
  }
  int asked = 0;
};

TEST(ExecutionContextTest, AHookHaltingForARunLimitStopsTheRun) {
  policy_test::TestClock clock;
  auto pipeline = std::make_shared<ShieldPipeline>();
  auto shared = std::make_shared<SharedLimitHook>();
  pipeline->add(shared);
  ExecutionContext context({}, {}, pipeline, clock.now());
  EXPECT_EQ(context.admit(NodeKind::kTool).decision, Decision::kAllow);
  EXPECT_EQ(context.admit(NodeKind::kTool).decision, Decision::kAllow);
  Admission over = context.admit(NodeKind::kTool);
  EXPECT_EQ(over.decision, Decision::kHalt);
  ASSERT_TRUE(context.state().halted_by);
  EXPECT_EQ(*context.state().halted_by, StopReason::kBudgetExceeded);
  // Stopped: later calls halt without asking the pipeline again.
  EXPECT_EQ(context.admit(NodeKind::kTool).decision, Decision::kHalt);
  EXPECT_EQ(shared->asked, 3);
  // A hook's halt for a reason that does not stop a run (a full window) stays one call's.
  auto pipeline2 = std::make_shared<ShieldPipeline>();
  pipeline2->add(std::make_shared<FixedHook>("window", Decision::kHalt));
  ExecutionContext windowed({}, {}, pipeline2, clock.now());
  EXPECT_EQ(windowed.admit(NodeKind::kTool).decision, Decision::kHalt);
  EXPECT_FALSE(windowed.state().halted_by);
}

TEST(ExecutionContextTest, ConcurrentCallersAreAdmittedExactlyUpToTheLimit) {
  ExecutionContext context({.max_steps = 50});
  std::atomic<int> allowed{0};
  std::vector<std::thread> threads;
  for (int t = 0; t < 8; ++t) {
    threads.emplace_back([&] {
      for (int i = 0; i < 20; ++i) {
        if (context.wrap_tool_call(costing(0.001)) == Decision::kAllow) ++allowed;
      }
    });
  }
  for (std::thread& t : threads) t.join();
  EXPECT_EQ(allowed.load(), 50);
  EXPECT_EQ(context.snapshot().step_count, 50u);
  EXPECT_EQ(context.snapshot().refused_count, 110u);
  EXPECT_NEAR(context.snapshot().cost_usd, 0.05, 1e-9);
}

TEST(ExecutionContextTest, TheStateContinuesInANewContext) {
  policy_test::TestClock clock;
  ExecutionConfig config{.max_cost_usd = 1.0,
                         .max_steps = 4,
                         .timeout = 60'000ms,
                         .circuit_breaker = CircuitBreakerConfig{1, 30'000ms},
                         .budget_window = BudgetWindowConfig{60'000ms, 3, 0, 0}};
  ExecutionContext first(config, {}, nullptr, clock.now());
  first.wrap_tool_call(costing(0.25), {.key = "Read"});
  first.wrap_tool_call(failing, {.key = "Bash"});
  ContainmentState state = first.state();
  EXPECT_EQ(state.step_count, 2u);
  ASSERT_EQ(state.window.size(), 1u) << "two calls at one moment share a bucket";
  EXPECT_EQ(state.window[0].calls, 2u);
  EXPECT_EQ(state.circuits.count("Bash"), 1u);

  clock.advance(30'000ms);
  ExecutionContext second(config, {}, nullptr, clock.now(), state);
  EXPECT_EQ(second.snapshot().cost_usd, 0.25);
  // The Bash circuit is half-open after its recovery time, counted from the first
  // context's failure; the window still holds the first two calls; the timeout counts
  // from the run's start.
  EXPECT_EQ(second.wrap_tool_call(costing(0), {.key = "Bash"}), Decision::kAllow);
  EXPECT_EQ(second.admit(NodeKind::kTool).event->type, StopReason::kProviderRateLimit);
  clock.advance(30'000ms);
  EXPECT_EQ(second.admit(NodeKind::kTool).event->type, StopReason::kTimeout);
  // A call admitted by one context is completed by another (wrapped agents' hooks) — here
  // without the timeout, which has run out: a failure after it would be the timeout's.
  ExecutionConfig untimed = config;
  untimed.timeout = 0ms;
  ExecutionContext third(untimed, {}, nullptr, clock.now(), first.state());
  third.complete("n-elsewhere", CallResult{false, 0, "exit 1", false, "Edit"});
  EXPECT_EQ(third.state().retries_used, 2u);
  EXPECT_EQ(third.state().circuits.count("Edit"), 1u);
}

TEST(ExecutionContextTest, AStopIsForGood) {
  policy_test::TestClock clock;
  ExecutionContext context({.max_cost_usd = 1.0}, {}, nullptr, clock.now());
  Admission estimated = context.admit(NodeKind::kTool, {.cost_estimate_hint = 2.0});
  ASSERT_EQ(estimated.decision, Decision::kHalt);
  Admission next = context.admit(NodeKind::kTool, {.key = "Read"});
  EXPECT_EQ(next.decision, Decision::kHalt) << "a call without an estimate is stopped too";
  ASSERT_TRUE(next.event);
  EXPECT_EQ(next.event->type, StopReason::kBudgetExceeded);
  EXPECT_EQ(next.event->key, "Read");
  // In another context of the run, with limits changed meanwhile, as well.
  ExecutionContext later({.max_cost_usd = 100.0}, {}, nullptr, clock.now(), context.state());
  EXPECT_EQ(later.admit(NodeKind::kTool).decision, Decision::kHalt);
}

TEST(ExecutionContextTest, OnlyAdmittedCallsCountInTheWindow) {
  policy_test::TestClock clock;
  ExecutionContext context({.circuit_breaker = CircuitBreakerConfig{1, 3'600'000ms},
                            .budget_window = BudgetWindowConfig{300'000ms, 3, 0, 0}},
                           {}, nullptr, clock.now());
  EXPECT_EQ(context.wrap_tool_call(failing, {.key = "Bash"}), Decision::kRetry);
  for (int i = 0; i < 5; ++i) {
    EXPECT_EQ(context.admit(NodeKind::kTool, {.key = "Bash"}).event->type,
              StopReason::kCircuitOpen);
  }
  EXPECT_EQ(context.wrap_tool_call(costing(0), {.key = "Read"}), Decision::kAllow);
  EXPECT_EQ(context.wrap_tool_call(costing(0), {.key = "Read"}), Decision::kAllow)
      << "two calls in the window, not seven";
  EXPECT_EQ(context.admit(NodeKind::kTool, {.key = "Read"}).event->type,
            StopReason::kProviderRateLimit);
}

TEST(ExecutionContextTest, NodeIdsStayUniqueAcrossTheContextsOfARun) {
  policy_test::TestClock clock;
  ExecutionConfig config{.circuit_breaker = CircuitBreakerConfig{1, 60'000ms}};
  ExecutionContext first(config, {}, nullptr, clock.now());
  Admission bash = first.admit(NodeKind::kTool, {.key = "Bash"});
  // The run goes on in a new context (another process recorded a boundary) ...
  ExecutionContext second(config, {}, nullptr, clock.now(), first.state());
  Admission read = second.admit(NodeKind::kTool, {.key = "Read"});
  EXPECT_NE(read.node_id, bash.node_id);
  // ... where the Bash call, admitted before, fails: its own circuit opens, not Read's.
  second.complete(bash.node_id, CallResult{false, 0, "exit 1", false, "Bash"});
  EXPECT_EQ(second.state().circuits.count("Bash"), 1u);
  EXPECT_EQ(second.state().circuits.count("Read"), 0u);
  // A node id of another call, given with this call's key, is not taken for it.
  ExecutionContext third(config, {}, nullptr, clock.now(), second.state());
  Admission edit = third.admit(NodeKind::kTool, {.key = "Edit"});
  third.complete(edit.node_id, CallResult{false, 0, "exit 1", false, "Write"});
  EXPECT_EQ(third.state().circuits.count("Write"), 1u);
  EXPECT_EQ(third.state().circuits.count("Edit"), 0u);
}

TEST(ExecutionContextTest, ReasonsCountInTheWordsTheirNumberTakes) {
  policy_test::TestClock clock;
  ExecutionContext one_step({.max_steps = 1}, {}, nullptr, clock.now());
  EXPECT_EQ(one_step.wrap_tool_call(costing(0)), Decision::kAllow);
  Admission second = one_step.admit(NodeKind::kTool, {});
  ASSERT_TRUE(second.event);
  EXPECT_EQ(second.event->reason, "the step limit is reached: 1 call");
  ExecutionContext one_failure({.circuit_breaker = CircuitBreakerConfig{1, 30'000ms}}, {}, nullptr,
                               clock.now());
  EXPECT_EQ(one_failure.wrap_tool_call(failing, {.key = "Bash"}), Decision::kRetry);
  Admission refused = one_failure.admit(NodeKind::kTool, {.key = "Bash"});
  ASSERT_TRUE(refused.event);
  EXPECT_EQ(refused.event->reason.rfind("Bash failed once, so its calls are refused for now", 0),
            0u)
      << refused.event->reason;
}

TEST(ExecutionContextTest, LimitsOutOfRangeAreRefused) {
  EXPECT_THROW(ExecutionContext({.max_cost_usd = 0.0}), std::invalid_argument);
  EXPECT_THROW(ExecutionContext({.max_steps = 0}), std::invalid_argument);
  EXPECT_THROW(ExecutionContext({.max_retries_total = 0}), std::invalid_argument);
}

TEST(ExecutionContextTest, ATimeoutDuringACallStopsTheRunThenAndUsesNoRetry) {
  policy_test::TestClock clock;
  ExecutionContext context({.max_retries_total = 5, .timeout = 10'000ms}, {}, nullptr, clock.now());
  EXPECT_EQ(context.wrap_tool_call(costing(0), {.key = "Read"}), Decision::kAllow);
  // The run's time runs out while the call runs (1 ms past the deadline).
  auto slow = [&](const CancellationToken&) {
    clock.advance(10'001ms);
    return 0.0;
  };
  EXPECT_EQ(context.wrap_tool_call(slow, {.key = "Bash"}), Decision::kHalt);
  // No later call is needed for the stop to be recorded.
  ContextSnapshot s = context.snapshot();
  ASSERT_TRUE(s.halted_by.has_value()) << "the timeout is the run's halt reason at once";
  EXPECT_EQ(*s.halted_by, StopReason::kTimeout);
  ASSERT_EQ(s.events.size(), 1u);
  EXPECT_EQ(s.events[0].type, StopReason::kTimeout);
  EXPECT_EQ(s.events[0].hook, "ExecutionContext");
  EXPECT_EQ(s.events[0].node_id, "n2");
  EXPECT_EQ(s.events[0].key, "Bash");
  EXPECT_EQ(s.events[0].limit, 10'000);
  EXPECT_EQ(s.events[0].value, 10'001);
  EXPECT_EQ(s.retries_used, 0u) << "the run's timeout is no failure of the call";
  EXPECT_EQ(s.nodes[1].status, NodeStatus::kTimeout);
  EXPECT_EQ(s.nodes[1].retries_used, 0u);
  ASSERT_TRUE(context.stop_snapshot().has_value()) << "the partial result is kept";
  EXPECT_EQ(context.stop_snapshot()->step_count, 2u);
  EXPECT_EQ(context.stop_snapshot()->nodes.size(), 2u);
  EXPECT_FALSE(context.stop_snapshot()->halted_by);
  // The halves (a wrapped agent's call): a call that fails after the deadline is the
  // timeout's too, and a supervisor asking afterwards finds the same one stop.
  ExecutionContext halves({.max_retries_total = 1, .timeout = 10'000ms}, {}, nullptr, clock.now());
  Admission a = halves.admit(NodeKind::kTool, {.key = "Bash"});
  ASSERT_EQ(a.decision, Decision::kAllow);
  clock.advance(10'000ms);
  EXPECT_TRUE(a.token.cancelled());
  halves.complete(a.node_id, CallResult{false, 0, "killed", false, "Bash"});
  EXPECT_EQ(halves.state().retries_used, 0u);
  ASSERT_TRUE(halves.state().halted_by.has_value());
  EXPECT_EQ(*halves.state().halted_by, StopReason::kTimeout) << "not the retry budget";
  ASSERT_TRUE(halves.check_deadline());
  EXPECT_EQ(halves.snapshot().events.size(), 1u);
  ASSERT_TRUE(halves.stop_snapshot());
}

TEST(ExecutionContextTest, ACallPastItsOwnDeadlineIsAFailureButTheRunGoesOn) {
  policy_test::TestClock clock;
  ExecutionContext context({.timeout = 60'000ms}, {}, nullptr, clock.now());
  Admission a = context.admit(NodeKind::kTool, {.key = "Bash", .timeout = 1'000ms});
  clock.advance(2'000ms);
  context.complete(a.node_id, CallResult{true, 0, "", true, "Bash"});
  EXPECT_EQ(context.state().retries_used, 1u);
  EXPECT_FALSE(context.state().halted_by);
}

TEST(ExecutionContextTest, APerCallTimeoutNeverOutlastsTheRuns) {
  policy_test::TestClock clock;
  ExecutionContext context({.timeout = 10'000ms}, {}, nullptr, clock.now());
  Admission a = context.admit(NodeKind::kTool, {.key = "Bash", .timeout = 60'000ms});
  clock.advance(9'999ms);
  EXPECT_FALSE(a.token.cancelled());
  clock.advance(1ms);
  EXPECT_TRUE(a.token.cancelled()) << "the run's time limit holds for every call in it";
}

TEST(ExecutionContextTest, FailuresThatUseUpTheRetryBudgetStopTheRunAsAProviderError) {
  policy_test::TestClock clock;
  ExecutionContext context({.max_retries_total = 2}, {}, nullptr, clock.now());
  EXPECT_EQ(context.wrap_tool_call(failing, {.key = "Bash"}), Decision::kRetry);
  EXPECT_FALSE(context.snapshot().halted_by) << "one failure of two";
  EXPECT_EQ(context.wrap_tool_call(failing, {.key = "Bash"}), Decision::kHalt);
  // The failure that used the budget up stops the run, before any other call.
  ContextSnapshot s = context.snapshot();
  ASSERT_TRUE(s.halted_by.has_value());
  EXPECT_EQ(*s.halted_by, StopReason::kProviderError);
  ASSERT_EQ(s.events.size(), 1u);
  EXPECT_EQ(s.events[0].type, StopReason::kProviderError);
  EXPECT_EQ(s.events[0].hook, "ExecutionContext");
  EXPECT_EQ(s.events[0].node_id, "n2");
  EXPECT_EQ(s.events[0].limit, 2);
  EXPECT_EQ(s.events[0].value, 2);
  EXPECT_EQ(s.events[0].reason,
            "failures used up the retry budget: 2 failed calls of 2 (the "
            "last: Bash)");
  EXPECT_EQ(halt_reason_name(s.events[0].type), "provider_error");
  ASSERT_TRUE(context.stop_snapshot());
  EXPECT_EQ(context.stop_snapshot()->retries_used, 2u);
  // Every later call is refused for it.
  Admission next = context.admit(NodeKind::kTool, {.key = "Read"});
  EXPECT_EQ(next.decision, Decision::kHalt);
  EXPECT_EQ(next.event->type, StopReason::kProviderError);
  // A run continued with its retries already at the budget and no stop (a resumed
  // run) finds the budget used up before its first call: retry_budget_exceeded.
  ContainmentState resumed = context.state();
  resumed.halted_by.reset();
  ExecutionContext again({.max_retries_total = 2}, {}, nullptr, clock.now(), resumed);
  Admission first = again.admit(NodeKind::kTool);
  EXPECT_EQ(first.decision, Decision::kHalt);
  EXPECT_EQ(first.event->type, StopReason::kRetryBudgetExceeded);
}

TEST(ExecutionContextTest, TheSameCallRepeatedIsRefusedThenStopsTheRunAsALoop) {
  policy_test::TestClock clock;
  ExecutionContext context({.repeat = {3, 5}}, {}, nullptr, clock.now());
  WrapOptions same{.key = "Bash", .input_fingerprint = "f-echo-same"};
  EXPECT_EQ(context.admit(NodeKind::kTool, same).decision, Decision::kAllow);
  EXPECT_EQ(context.admit(NodeKind::kTool, same).decision, Decision::kAllow);
  Admission third = context.admit(NodeKind::kTool, same);
  EXPECT_EQ(third.decision, Decision::kHalt);
  ASSERT_TRUE(third.event);
  EXPECT_EQ(third.event->type, StopReason::kRepeatedCall);
  EXPECT_EQ(third.event->hook, "RepeatGuard");
  EXPECT_EQ(third.event->limit, 3);
  EXPECT_EQ(third.event->value, 3);
  EXPECT_EQ(third.event->reason,
            "the same Bash call with the same input was asked 3 times in a row, so it is "
            "refused: change the input or do something else");
  EXPECT_FALSE(stops_run(third.event->type));
  EXPECT_FALSE(context.snapshot().halted_by) << "a refusal, the run goes on";
  // The state another process continues from holds the streak.
  ExecutionContext next({.repeat = {3, 5}}, {}, nullptr, clock.now(), context.state());
  EXPECT_EQ(next.state().repeat, (RepeatStreak{"Bash", "f-echo-same", 3}));
  EXPECT_EQ(next.admit(NodeKind::kTool, same).event->type, StopReason::kRepeatedCall);
  Admission fifth = next.admit(NodeKind::kTool, same);
  EXPECT_EQ(fifth.decision, Decision::kHalt);
  EXPECT_EQ(fifth.event->type, StopReason::kLoop);
  EXPECT_EQ(fifth.event->limit, 5);
  EXPECT_EQ(fifth.event->reason,
            "the same Bash call with the same input was asked 5 times in a row: the agent is "
            "looping");
  EXPECT_EQ(halt_reason_name(fifth.event->type), "loop");
  ContextSnapshot s = next.snapshot();
  ASSERT_TRUE(s.halted_by);
  EXPECT_EQ(*s.halted_by, StopReason::kLoop);
  EXPECT_EQ(s.step_count, 2u) << "refused calls are no steps";
  EXPECT_EQ(s.refused_count, 3u);
  ASSERT_TRUE(next.stop_snapshot());
  // Stopped for good: another call is refused too.
  EXPECT_EQ(next.admit(NodeKind::kTool, {.key = "Read", .input_fingerprint = "f2"}).event->type,
            StopReason::kLoop);
}

TEST(ExecutionContextTest, ADifferentCallResetsTheStreakAndCallsWithoutAnInputAreNotCounted) {
  policy_test::TestClock clock;
  ExecutionContext context({.repeat = {2, 3}}, {}, nullptr, clock.now());
  WrapOptions a{.key = "Bash", .input_fingerprint = "a"};
  WrapOptions b{.key = "Bash", .input_fingerprint = "b"};
  for (int i = 0; i < 5; ++i) {
    EXPECT_EQ(context.admit(NodeKind::kTool, a).decision, Decision::kAllow) << i;
    EXPECT_EQ(context.admit(NodeKind::kTool, b).decision, Decision::kAllow) << i;
  }
  // Calls with no fingerprint (a model request, a caller that gives none) are left out.
  for (int i = 0; i < 5; ++i) {
    EXPECT_EQ(context.admit(NodeKind::kTool, {.key = "Bash"}).decision, Decision::kAllow);
  }
  EXPECT_EQ(context.admit(NodeKind::kTool, b).event->type, StopReason::kRepeatedCall);
  // Off by default in the library: an ExecutionConfig without repeat counts nothing.
  ExecutionContext plain({}, {}, nullptr, clock.now());
  for (int i = 0; i < 10; ++i) {
    EXPECT_EQ(plain.admit(NodeKind::kTool, a).decision, Decision::kAllow);
  }
  EXPECT_EQ(plain.state().repeat.count, 0u);
}

}  // namespace
