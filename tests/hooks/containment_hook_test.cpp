// Containment in the hook path (`shadowbox hook claude-code`, one process per event, as
// the command transport and installed hooks run it): limits from the config and from
// the run's own run.json, the deny answer the model reads, `continue: false` and a halt
// request when the run must stop, an open circuit that denies one tool only, the same
// call asked again denied and then stopped as a loop, and the agent's model spend read
// from its transcript and charged before each call.
#include <signal.h>

#include <chrono>
#include <cstdlib>
#include <thread>

#include <Poco/JSON/Object.h>
#include <Poco/JSON/Parser.h>

#include <gtest/gtest.h>
#include <boost/filesystem.hpp>

#include "fsnap/store_layout.hpp"
#include "hooks/agent_session_state.hpp"
#include "hooks/run_slice_types.hpp"
#include "runs/run_halt.hpp"
#include "runs/run_meta.hpp"
#include "runs/run_stats.hpp"
#include "sandbox/containment.hpp"
#include "sandbox/ledger.hpp"
#include "test_support.hpp"

namespace {

namespace fs = boost::filesystem;
using Poco::JSON::Object;
using testing_support::CommandResult;
using testing_support::run_command;
using testing_support::write_file;

class ContainmentHookTest : public ::testing::Test {
 protected:
  ContainmentHookTest() {
    fs::create_directories(ws_);
    hooks::register_agent_run_slice_types();
  }

  void config(const std::string& policy_yaml) { write_file(config_, "policy:\n" + policy_yaml); }

  std::string event(const std::string& event_name, const std::string& tool_name,
                    const std::string& id, const std::string& more = "") const {
    return "{\"hook_event_name\":\"" + event_name +
           "\",\"session_id\":\"sess-1\",\"transcript_path\":\"" + transcript_.string() +
           "\",\"cwd\":\"" + ws_.string() + "\",\"tool_name\":\"" + tool_name +
           "\",\"tool_use_id\":\"" + id + "\",\"tool_input\":{\"command\":\"x\"}" + more + "}";
  }
  std::vector<std::string> hook_command() const {
    return {SHADOWBOX_BIN, "--store",     store_.string(), "--config", config_.string(),
            "hook",        "claude-code", "--run",         "r1"};
  }
  CommandResult send(const std::string& event_name, const std::string& tool_name,
                     const std::string& id, const std::string& more = "") {
    return run_command(hook_command(), ws_, {"CLAUDE_PROJECT_DIR=" + ws_.string()},
                       event(event_name, tool_name, id, more));
  }
  // A call that succeeds; expects it to be allowed.
  void call(const std::string& tool, const std::string& id) {
    CommandResult pre = send("PreToolUse", tool, id);
    ASSERT_EQ(pre.exit_code, 0) << pre.err;
    ASSERT_EQ(pre.out, "") << "allowed without an answer";
    ASSERT_EQ(send("PostToolUse", tool, id, ",\"tool_response\":{}").exit_code, 0);
  }
  // A call that fails.
  void failing_call(const std::string& tool, const std::string& id) {
    CommandResult pre = send("PreToolUse", tool, id);
    ASSERT_EQ(pre.exit_code, 0) << pre.err;
    ASSERT_EQ(pre.out, "");
    ASSERT_EQ(send("PostToolUseFailure", tool, id, ",\"error\":\"exit 1\"").exit_code, 0);
  }
  static Object::Ptr json(const std::string& text) {
    Poco::JSON::Parser parser;
    return parser.parse(text).extract<Object::Ptr>();
  }
  fsnap::Store store() const { return fsnap::Store::open(store_, ws_, false); }
  std::optional<sandbox::LedgerRecord> latest() const {
    return sandbox::Ledger::of(store()).latest("r1");
  }
  // The session of the run's newest record.
  sandbox::SessionSnapshot latest_session() const {
    sandbox::Ledger ledger = sandbox::Ledger::of(store());
    return ledger.session(*ledger.latest("r1"));
  }
  // The request that asked for tool call toolu_<n>, as the transcript records it:
  // $1.000005 (66,667 Sonnet output tokens).
  void one_dollar_request(int n) {
    std::string id = std::to_string(n);
    std::string old = fs::exists(transcript_) ? testing_support::read_file(transcript_) : "";
    write_file(transcript_, old + "{\"type\":\"assistant\",\"requestId\":\"req_" + id +
                                "\",\"message\":{\"id\":\"msg_" + id +
                                "\",\"model\":\"claude-sonnet-4-6\",\"content\":[{\"type\":"
                                "\"tool_use\",\"id\":\"toolu_" +
                                id +
                                "\",\"name\":\"Bash\",\"input\":{}}],\"usage\":{"
                                "\"input_tokens\":0,\"output_tokens\":66667}}}\n");
  }

  testing_support::TempDir temp_;
  fs::path ws_ = temp_ / "ws";
  fs::path store_ = temp_ / "store";
  fs::path config_ = temp_ / "shadowbox.yaml";
  fs::path transcript_ = temp_ / "home/.claude/projects/-ws/sess-1.jsonl";
};

TEST_F(ContainmentHookTest, ATimeoutOfCenturiesDoesNotHaltTheFirstCall) {
  // 200000 days do not fit the clock's nanoseconds: it is taken as the longest duration
  // a setting holds, and the deadline does not wrap into the past.
  config("  timeout: 200000d\n");
  call("Bash", "t1");
  call("Bash", "t2");
  std::optional<sandbox::LedgerRecord> record = latest();
  ASSERT_TRUE(record.has_value());
  EXPECT_TRUE(record->success.value_or(false));
}

TEST_F(ContainmentHookTest, TheStepLimitDeniesTheNextCallAndStopsTheRun) {
  config("  max_steps: 2\n");
  call("Bash", "toolu_1");
  call("Read", "toolu_2");
  CommandResult third = send("PreToolUse", "Bash", "toolu_3");
  ASSERT_EQ(third.exit_code, 0) << "a deny is a 2xx-style answer, not an error: " << third.err;
  Object::Ptr answer = json(third.out);
  Object::Ptr specific = answer->getObject("hookSpecificOutput");
  ASSERT_TRUE(specific);
  EXPECT_EQ(specific->getValue<std::string>("permissionDecision"), "deny");
  std::string reason = specific->getValue<std::string>("permissionDecisionReason");
  EXPECT_NE(reason.find("step limit"), std::string::npos) << reason;
  EXPECT_NE(reason.find("max_steps"), std::string::npos) << reason;
  EXPECT_FALSE(answer->getValue<bool>("continue"));
  EXPECT_NE(answer->getValue<std::string>("stopReason").find("shadowbox stopped the run"),
            std::string::npos);
  // The supervisor is asked to stop the agent, which was told already.
  std::optional<runs::HaltRequest> halt = runs::pending_halt(store(), "r1");
  ASSERT_TRUE(halt);
  EXPECT_EQ(halt->halt_reason, "max_steps");
  EXPECT_TRUE(halt->agent_told);
  // The run's log says which call containment denied, and why.
  std::string log = testing_support::read_file(fsnap::layout::run_log_file(store_, "r1"));
  EXPECT_NE(log.find("containment denied Bash call toolu_3 (max_steps): "), std::string::npos)
      << log;
  EXPECT_EQ(runs::count_gaps(store(), "r1"), 0u) << "a decision, not a gap";
  // The ledger: one `denied` boundary with the decision and its SafetyEvent.
  std::optional<sandbox::LedgerRecord> record = latest();
  ASSERT_TRUE(record);
  EXPECT_EQ(record->phase, fsnap::Phase::kDenied);
  EXPECT_EQ(record->tool_call_id, "toolu_3");
  EXPECT_EQ(record->decision, "halt");
  ASSERT_TRUE(record->safety_event);
  EXPECT_EQ(record->safety_event->type, policy::StopReason::kStepLimitExceeded);
  std::optional<policy::ContainmentState> counted = sandbox::containment_state(latest_session());
  ASSERT_TRUE(counted);
  EXPECT_EQ(counted->step_count, 2u) << "the denied call is no step";
  EXPECT_EQ(counted->refused_count, 1u);
  EXPECT_EQ(counted->halted_by, policy::StopReason::kStepLimitExceeded);
  // Every later call is denied as well.
  EXPECT_NE(send("PreToolUse", "Read", "toolu_4").out.find("\"deny\""), std::string::npos);
}

TEST_F(ContainmentHookTest, TheRunsOwnLimitsOverrideTheConfigs) {
  config("  max_steps: 100\n");
  runs::RunMeta meta;
  meta.run = "r1";
  meta.workspace = ws_.string();
  meta.limits.max_steps = 1;
  fsnap::Store::open(store_, ws_, true);
  meta.save(store());
  call("Bash", "toolu_1");
  EXPECT_NE(send("PreToolUse", "Bash", "toolu_2").out.find("\"deny\""), std::string::npos);
}

TEST_F(ContainmentHookTest, AnOpenCircuitDeniesOneToolAndTheRunGoesOn) {
  // The calls here are all the same: the repeat guard, which comes before the circuit,
  // is off.
  config(
      "  circuit_breaker: {failure_threshold: 2, recovery_timeout: 1h}\n"
      "  repeat: {deny_threshold: 0, halt_threshold: 0}\n");
  failing_call("Bash", "toolu_1");
  failing_call("Bash", "toolu_2");
  CommandResult third = send("PreToolUse", "Bash", "toolu_3");
  ASSERT_EQ(third.exit_code, 0) << third.err;
  Object::Ptr answer = json(third.out);
  EXPECT_EQ(answer->getObject("hookSpecificOutput")->getValue<std::string>("permissionDecision"),
            "deny");
  EXPECT_NE(answer->getObject("hookSpecificOutput")
                ->getValue<std::string>("permissionDecisionReason")
                .find("Bash failed 2 times in a row"),
            std::string::npos);
  EXPECT_FALSE(answer->has("continue")) << "an open circuit does not stop the run";
  EXPECT_FALSE(runs::pending_halt(store(), "r1"));
  ASSERT_TRUE(latest()->safety_event);
  EXPECT_EQ(latest()->safety_event->type, policy::StopReason::kCircuitOpen);
  call("Read", "toolu_4");
}

// The repeat guard across hook processes: the same call asked again is denied and the
// run goes on; another call in between starts the count again; asked once more after
// its denial, the run stops as a loop.
TEST_F(ContainmentHookTest, TheSameCallAgainIsDeniedThenStopsTheRunAsALoop) {
  config("  repeat: {deny_threshold: 2, halt_threshold: 3}\n");
  call("Bash", "toolu_1");
  CommandResult second = send("PreToolUse", "Bash", "toolu_2");
  ASSERT_EQ(second.exit_code, 0) << second.err;
  Object::Ptr answer = json(second.out);
  EXPECT_EQ(answer->getObject("hookSpecificOutput")->getValue<std::string>("permissionDecision"),
            "deny");
  EXPECT_EQ(
      answer->getObject("hookSpecificOutput")->getValue<std::string>("permissionDecisionReason"),
      "shadowbox denied this Bash call: the same Bash call with the same input was asked 2 "
      "times in a row, so it is refused: change the input or do something else.");
  EXPECT_FALSE(answer->has("continue")) << "a denied repeat does not stop the run";
  EXPECT_FALSE(runs::pending_halt(store(), "r1"));
  call("Read", "toolu_3");
  call("Bash", "toolu_4");
  ASSERT_NE(send("PreToolUse", "Bash", "toolu_5").out.find("\"deny\""), std::string::npos);
  CommandResult looping = send("PreToolUse", "Bash", "toolu_6");
  Object::Ptr stop = json(looping.out);
  EXPECT_FALSE(stop->getValue<bool>("continue"));
  EXPECT_NE(stop->getValue<std::string>("stopReason").find("the agent is looping (loop)"),
            std::string::npos)
      << looping.out;
  std::optional<runs::HaltRequest> halt = runs::pending_halt(store(), "r1");
  ASSERT_TRUE(halt);
  EXPECT_EQ(halt->halt_reason, "loop");
  std::string log = testing_support::read_file(fsnap::layout::run_log_file(store_, "r1"));
  EXPECT_NE(log.find("containment denied Bash call toolu_5 (repeated_call): "), std::string::npos)
      << log;
  std::optional<policy::ContainmentState> counted = sandbox::containment_state(latest_session());
  ASSERT_TRUE(counted);
  EXPECT_EQ(counted->step_count, 3u);
  EXPECT_EQ(counted->refused_count, 3u);
  EXPECT_EQ(counted->halted_by, policy::StopReason::kLoop);
}

TEST_F(ContainmentHookTest, TheTranscriptsSpendIsChargedBeforeEachCall) {
  config("  max_cost_usd: 2.5\n");
  one_dollar_request(1);
  call("Bash", "toolu_1");
  one_dollar_request(2);
  call("Bash", "toolu_2");
  one_dollar_request(3);  // $3 now: the ceiling is crossed by this request
  CommandResult denied = send("PreToolUse", "Bash", "toolu_3");
  Object::Ptr answer = json(denied.out);
  EXPECT_NE(answer->getObject("hookSpecificOutput")
                ->getValue<std::string>("permissionDecisionReason")
                .find("cost ceiling"),
            std::string::npos);
  EXPECT_FALSE(answer->getValue<bool>("continue"));
  EXPECT_EQ(runs::pending_halt(store(), "r1")->halt_reason, "max_cost");
  std::optional<policy::ContainmentState> counted = sandbox::containment_state(latest_session());
  EXPECT_NEAR(counted->cost_usd, 3 * 1.000005, 1e-9);
  // `runs` shows it, to the millionth of a dollar.
  CommandResult runs = run_command(
      {SHADOWBOX_BIN, "--store", store_.string(), "--config", config_.string(), "--json", "runs"},
      ws_);
  ASSERT_EQ(runs.exit_code, 0) << runs.err;
  EXPECT_NE(runs.out.find("\"cost_usd\":3.000015,"), std::string::npos) << runs.out;
  EXPECT_NE(runs.out.find("\"steps\":2,"), std::string::npos) << runs.out;
  EXPECT_NE(runs.out.find("\"refused_calls\":1,"), std::string::npos) << runs.out;
}

}  // namespace

// Hooks installed by hand (no `shadowbox run`, so no run.json) that name one run for
// every session: the run's count goes on across its sessions, as its figures do; a
// session that starts or resumes clears a stop, so a new limit (the config's) applies.
TEST_F(ContainmentHookTest, WithoutRunTheCountOfANamedRunGoesOnAcrossSessions) {
  config("  max_steps: 2\n");
  call("Bash", "toolu_1");
  call("Bash", "toolu_2");
  ASSERT_NE(send("PreToolUse", "Bash", "toolu_3").out.find("\"deny\""), std::string::npos);

  ASSERT_EQ(send("SessionStart", "", "", ",\"source\":\"resume\"").exit_code, 0);
  EXPECT_NE(send("PreToolUse", "Bash", "toolu_4").out.find("\"deny\""), std::string::npos)
      << "a resumed session keeps the steps it took";

  ASSERT_EQ(send("SessionStart", "", "", ",\"source\":\"startup\"").exit_code, 0);
  EXPECT_NE(send("PreToolUse", "Bash", "toolu_5").out.find("\"deny\""), std::string::npos)
      << "so does a new session of the same run";
  config("  max_steps: 3\n");
  ASSERT_EQ(send("SessionStart", "", "", ",\"source\":\"startup\"").exit_code, 0);
  call("Bash", "toolu_6");
  std::optional<policy::ContainmentState> counted = sandbox::containment_state(latest_session());
  ASSERT_TRUE(counted);
  EXPECT_EQ(counted->step_count, 3u);
  std::optional<sandbox::CallTally> tally = sandbox::call_tally(latest_session());
  ASSERT_TRUE(tally);
  EXPECT_EQ(tally->steps, 3u) << "the run's figure and its limit's count are one";
  EXPECT_EQ(tally->refused, 3u);
}

// Under `shadowbox run` the supervisor starts the count; the agent's own sessions do not.
TEST_F(ContainmentHookTest, UnderRunANewAgentSessionDoesNotResetTheCount) {
  config("  max_steps: 2\n");
  runs::RunMeta meta;
  meta.run = "r1";
  meta.workspace = ws_.string();
  fsnap::Store::open(store_, ws_, true);
  meta.save(store());
  call("Bash", "toolu_1");
  call("Bash", "toolu_2");
  ASSERT_EQ(send("SessionStart", "", "", ",\"source\":\"startup\"").exit_code, 0);
  EXPECT_NE(send("PreToolUse", "Bash", "toolu_3").out.find("\"deny\""), std::string::npos);
}

// An agent being stopped gets SIGTERM with its hook processes; a hook process finishes
// recording its step first. Here it waits for the store's lock when SIGTERM comes.
TEST_F(ContainmentHookTest, AHookProcessFinishesItsStepWhenTerminated) {
  config("  max_steps: 100\n");
  call("Bash", "toolu_1");
  fs::path pid_file = temp_ / "hook.pid";
  std::string command;
  for (const std::string& arg : hook_command()) command += "'" + arg + "' ";
  // sh gives a background command /dev/null as stdin unless told otherwise.
  std::string script = "exec 3<&0; " + command + "<&3 & echo $! > '" + pid_file.string() +
                       "'; wait $!; echo \"exit $?\"";
  std::optional<fsnap::StoreLock> lock = store().lock();
  CommandResult result;
  std::thread hook([&] {
    result = run_command({"sh", "-c", script}, ws_, {"CLAUDE_PROJECT_DIR=" + ws_.string()},
                         event("PreToolUse", "Bash", "toolu_2"), std::chrono::seconds(60));
  });
  pid_t pid = 0;
  for (int i = 0; i < 200 && pid == 0; ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
    if (fs::exists(pid_file)) pid = std::atoi(testing_support::read_file(pid_file).c_str());
  }
  ASSERT_GT(pid, 0);
  std::this_thread::sleep_for(std::chrono::milliseconds(300));  // it reads, then waits
  ASSERT_EQ(::kill(pid, SIGTERM), 0);
  std::this_thread::sleep_for(std::chrono::milliseconds(200));
  EXPECT_EQ(::kill(pid, 0), 0) << "the hook process died of SIGTERM in the middle of its step";
  lock.reset();
  hook.join();
  EXPECT_EQ(result.out, "exit 0\n") << result.err;
  std::optional<sandbox::LedgerRecord> record = latest();
  ASSERT_TRUE(record);
  EXPECT_EQ(record->phase, fsnap::Phase::kPreTool);
  EXPECT_EQ(record->tool_call_id, "toolu_2") << "the step was recorded";
}
